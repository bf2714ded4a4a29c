/* ptxkit tune: choose block size and the other injected constants of a
 * kernel family for this GPU, print the choice next to the built-in
 * defaults, and remember it in the tuning database; --show lists it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "runtime/runtime.h"
#include "tune/db.h"
#include "tune/tuner.h"
#include "tune_exchange.h"

#define MAX_SIZES 32

static void usage(FILE *out) {
    fprintf(out,
            "usage: ptxkit tune [FAMILY] [--variant V] [--sizes N,N,...] [--budget SECONDS] [--max-variants N]\n"
            "                   [--exhaustive | --verify-exhaustive] [--threads N] [--no-save] [--csv|--json] [--device N]\n"
            "       ptxkit tune --show [--csv|--json] [--json FILE] [--csv FILE] [--md FILE]\n"
            "       ptxkit tune --export FILE.json | --import FILE.json\n"
            "Times JIT variants of a kernel family (block size, items per thread, vector width, blocks per SM, load\n"
            "operator) through its public operation and saves the fastest per size bucket in the tuning database\n"
            "(PTXKIT_TUNE_DB, else <cache dir>/tune.db), which the operations then use (PTXKIT_TUNE=off|cached|auto).\n"
            "  FAMILY              copy (n counts bytes), reduce, transpose or scan (n counts elements), gemm (n is\n"
            "                      m x n x k); default: each in turn\n"
            "  --variant V         reduce: <op>.<type> as sum.float32 (default); copy: bytes; transpose (padded kind):\n"
            "                      float32 (default), float64 (sides of whole 16-byte vectors), float32.unaligned,\n"
            "                      float64.unaligned (other sides); scan as reduce; gemm: <type>.<class>, type float32\n"
            "                      (default) or float64, class square (default), small_m, small_n or small_k (that\n"
            "                      side below 256): each class has its own entries\n"
            "  --sizes LIST        sizes to tune, each N, 2^K or with a K/M/G suffix; default 2^20,2^24,2^28 (gemm:\n"
            "                      2^30,2^33,2^36, cubes of 1024, 2048 and 4096)\n"
            "  --budget SECONDS    wall-clock bound per family, compiles included (default %.0f)\n"
            "  --max-variants N    at most N configurations timed per size\n"
            "  --exhaustive        time every legal configuration (no budget)\n"
            "  --verify-exhaustive the budgeted search, then an exhaustive one: prints both picks side by side\n"
            "  --threads N         compile threads (default: one per CPU)\n"
            "  --no-save           leave the database alone\n"
            "  --show              list the database (entries of this GPU and build marked with *)\n"
            "  --export FILE       write every entry of the database, with its key, as JSON (- for standard output)\n"
            "  --import FILE       merge the entries of such a file into the database (- for standard input)\n"
            "An application's own kernels are tuned through the ptxkit_tunable API, not here: timing one needs its\n"
            "arguments, buffers and output check, which only the application has. --show lists their entries too.\n",
            TUNE_DEFAULT_BUDGET_S);
}

/* "1048576", "2^20", "1M", "64K", "1G". */
static bool parse_size(const char *s, size_t *out) {
    char *end;
    if (strncmp(s, "2^", 2) == 0) {
        long k = strtol(s + 2, &end, 10);
        if (*end || k < 0 || k > 62) return false;
        *out = (size_t)1 << k;
        return true;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return false;
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (*end || v == 0 || v > (~0ull >> shift)) return false;
    *out = (size_t)(v << shift);
    return true;
}

static bool parse_sizes(const char *list, size_t *sizes, int *count) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    *count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*count >= MAX_SIZES || !parse_size(tok, &sizes[*count])) return false;
        (*count)++;
    }
    return *count > 0;
}

static void size_text(size_t n, char *buf, size_t size) {
    if (n && (n & (n - 1)) == 0)
        snprintf(buf, size, "2^%d", tune_bucket(n));
    else
        snprintf(buf, size, "%zu", n);
}

static void options_text(const ptxkit_launch_options *o, char *buf, size_t size) {
    tune_config c = tune_config_from_options(o);
    bool builtin = c.block_size == 0 && c.items_per_thread == 0 && c.vector_bytes == 0 && c.blocks_per_sm == 0 &&
                   c.load_op == PTXKIT_LOAD_DEFAULT;
    if (builtin)
        snprintf(buf, size, "built-in defaults");
    else
        tune_config_format(&c, buf, size);
}

/* ---- progress ---------------------------------------------------------- */

typedef struct progress_state {
    bool tty;
    bool shown;
} progress_state;

static void show_progress(const ptxkit_tune_progress *p, void *user) {
    progress_state *ps = user;
    if (!ps->tty) return;
    char n[32], budget[32] = "";
    size_text(p->n, n, sizeof n);
    if (p->budget_s > 0) snprintf(budget, sizeof budget, " / %.0f s", p->budget_s);
    printf("\r\033[K[%s %s n=%s] %s %d/%d  best %.0f GB/s  %.1f s%s", p->family, p->variant, n, p->phase, p->done,
           p->total, p->best_gbs, p->elapsed_s, budget);
    fflush(stdout);
    ps->shown = true;
}

static void clear_progress(progress_state *ps) {
    if (ps->shown) {
        printf("\r\033[K");
        fflush(stdout);
        ps->shown = false;
    }
}

/* ---- tuning ------------------------------------------------------------ */

typedef struct tune_args {
    const char *family;
    const char *variant;
    size_t sizes[MAX_SIZES];
    int size_count;
    ptxkit_tune_options options;
} tune_args;

/* Tunes one family over the sizes; the budget is shared among them. */
static int run_family(ptxkit_context *ctx, const tune_args *a, const char *family, out_format format) {
    progress_state ps = {.tty = cli_is_tty() && format == OUT_TABLE};
    ptxkit_tune_options o = a->options;
    o.progress = show_progress;
    o.progress_user = &ps;
    ptxkit_tune_report *report = calloc(1, sizeof *report);
    if (!report) {
        cli_fail("tune", ctx, PTXKIT_ERROR_OUT_OF_MEMORY);
        return 1;
    }
    /* Default sizes: 2^20, 2^24, 2^28; gemm's n is m * n * k, so 1024^3,
     * 2048^3 and 4096^3 there. */
    const bool gemm = strcmp(family, "gemm") == 0;
    static const size_t default_sizes[] = {(size_t)1 << 20, (size_t)1 << 24, (size_t)1 << 28};
    static const size_t gemm_sizes[] = {(size_t)1 << 30, (size_t)1 << 33, (size_t)1 << 36};
    const size_t *sizes = a->size_count ? a->sizes : gemm ? gemm_sizes : default_sizes;
    int size_count = a->size_count ? a->size_count : 3;
    ptxkit_status st = tune_sizes(ctx, family, a->variant, sizes, size_count, &o, report);
    clear_progress(&ps);
    if (st != PTXKIT_SUCCESS) cli_fail("tune", ctx, st); /* the sizes done before are still shown */
    if (!report->variant[0]) snprintf(report->variant, sizeof report->variant, "%s", a->variant ? a->variant : "(default variant)");
    const ptxkit_tune_result *results = report->sizes;
    int done = report->size_count;

    bool verify = a->options.verify_exhaustive != 0;
    char title[512];
    snprintf(title, sizeof title, "ptxkit tune %s %s on %s (%s; %s)", family, report->variant, ctx->info.name,
             gemm ? "GFLOP/s, the _GBps columns: 2 m n k per second of the shape timed at n = m n k"
                  : "GB/s of the bytes the operation must move", a->options.exhaustive ? "exhaustive" : verify ? "budgeted search, then exhaustive"
                                                                                     : "budgeted search");
    const char *plain[] = {"n", "default_GBps", "tuned_GBps", "speedup", "choice", "timed", "legal", "failed", "wrong",
                           "seconds"};
    const char *checked[] = {"n", "default_GBps", "pick_GBps", "pick", "exhaustive_GBps", "exhaustive_best",
                             "pick_pct_of_best", "saved", "timed", "legal", "failed", "wrong", "seconds"};
    cli_table *t = verify ? table_new(title, 13, checked) : table_new(title, 10, plain);
    table_types(t, verify ? "snnsnsnsnnnnn" : "snnnsnnnnn");
    for (int i = 0; i < done; i++) {
        const ptxkit_tune_result *r = &results[i];
        char n[32], choice[128], pick[128], best[128];
        size_text(r->n, n, sizeof n);
        options_text(&r->best, choice, sizeof choice);
        if (gemm) snprintf(choice, sizeof choice, "%s", r->best_text);
        if (verify) {
            options_text(&r->search_best, pick, sizeof pick);
            options_text(&r->exhaustive_best, best, sizeof best);
            if (gemm) snprintf(best, sizeof best, "%s", r->exhaustive_text);
            table_addf(t, "%s\t%.0f\t%.0f\t%s\t%.0f\t%s\t%.1f\t%s\t%d\t%d\t%d\t%d\t%.1f", n, r->default_gbs, r->search_gbs,
                       pick, r->exhaustive_gbs, best, r->exhaustive_gbs > 0 ? 100.0 * r->search_gbs / r->exhaustive_gbs : 0,
                       choice, r->timed, r->legal, r->failed, r->wrong, r->seconds);
        } else {
            table_addf(t, "%s\t%.0f\t%.0f\t%.3f\t%s\t%d\t%d\t%d\t%d\t%.1f", n, r->default_gbs, r->best_gbs,
                       r->default_gbs > 0 ? r->best_gbs / r->default_gbs : 0, choice, r->timed, r->legal, r->failed,
                       r->wrong, r->seconds);
        }
    }
    table_print(t, format, stdout);
    table_free(t);
    FILE *info = format == OUT_TABLE ? stdout : stderr;
    const char *note = report->database_note;
    fprintf(info, "%s: %.1f s in all, %.1f s of it compiling or loading %d variants ahead on %d threads; database: %s%s%s\n", family,
            report->seconds, report->compile_seconds, report->kernels_prepared, report->threads,
            report->database[0] ? report->database : a->options.no_save ? "not written (--no-save)" : "not written",
            note[0] ? "; " : "", note);
    for (int i = 0; i < done; i++) {
        const ptxkit_tune_result *r = &results[i];
        if (r->failed || r->wrong) {
            char n[32];
            size_text(r->n, n, sizeof n);
            fprintf(info, "%s n=%s: %d configurations failed, %d gave WRONG results; first: %s\n", family, n, r->failed,
                    r->wrong, r->note);
        }
    }
    bool wrong = false;
    for (int i = 0; i < done; i++) wrong |= results[i].wrong > 0;
    free(report);
    /* a variant that computes a wrong result is a bug to look at */
    return st != PTXKIT_SUCCESS || wrong ? 1 : 0;
}

static bool family_known(const char *name) {
    for (int i = 0; ptxkit_tune_family(i); i++)
        if (strcmp(ptxkit_tune_family(i), name) == 0) return true;
    return false;
}

/* ---- --show ------------------------------------------------------------ */

static int show_database(int device, out_format format) {
    char path[4096], msg[640];
    if (!tune_db_default_path(path, sizeof path)) {
        printf("no tuning database: the cache directory is disabled and PTXKIT_TUNE_DB is not set\n");
        return 0;
    }
    tune_db db;
    tune_db_init(&db);
    ptxkit_status st = tune_db_load(path, &db, msg, sizeof msg);
    /* The current GPU's key marks its entries; without a GPU, none are. */
    tune_db_key key;
    bool have_key = false;
    ptxkit_context *ctx = NULL;
    int count = 0;
    if (ptxkit_device_count(&count) == PTXKIT_SUCCESS && device < count && ptxkit_context_open(device, &ctx) == PTXKIT_SUCCESS) {
        tune_db_key_for(ctx, &key);
        have_key = true;
        ptxkit_context_close(ctx);
    }
    char title[4800];
    snprintf(title, sizeof title, "tuning database %s (%s)", path, msg);
    const char *headers[] = {"this_gpu", "device", "cc", "sms", "driver", "nvrtc", "lib", "family", "variant", "n",
                             "choice", "GBps", "default_GBps", "speedup", "tuned_at"};
    cli_table *t = table_new(title, 15, headers);
    table_types(t, "sssnnssssssnnns");
    for (size_t i = 0; i < db.count; i++) {
        const tune_db_entry *e = &db.entries[i];
        char choice[128], when[32], nvrtc[16], n[16];
        ptxkit_launch_options o = tune_config_options(&e->config);
        options_text(&o, choice, sizeof choice);
        for (int p = 0, used = 0; p < e->param_count && used < (int)sizeof choice; p++) /* an application's tunable */
            used += snprintf(choice + used, sizeof choice - (size_t)used, "%s%s=%lld", p ? " " : "", e->param_names[p],
                             e->param_values[p]);
        time_t tt = (time_t)e->when;
        struct tm tmv;
        /* the parser bounds `when`; a time localtime_r cannot represent is shown as a number */
        if (!localtime_r(&tt, &tmv) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tmv))
            snprintf(when, sizeof when, "%lld", e->when);
        snprintf(nvrtc, sizeof nvrtc, "%d.%d", e->key.nvrtc_major, e->key.nvrtc_minor);
        snprintf(n, sizeof n, "2^%d", e->bucket);
        table_addf(t, "%s\t%s\t%d.%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t%.3f\t%s",
                   have_key && tune_db_key_equal(&key, &e->key) ? "*" : "", e->key.device, e->key.cc / 10,
                   e->key.cc % 10, e->key.sm_count, e->key.driver, nvrtc, e->key.library, e->family, e->variant, n, choice,
                   e->gbs, e->default_gbs, e->default_gbs > 0 ? e->gbs / e->default_gbs : 0, when);
    }
    table_print(t, format, stdout);
    table_free(t);
    tune_db_clear(&db);
    /* a damaged file is reported, not an error of the command */
    (void)st;
    return 0;
}

int cmd_tune(int argc, char **argv) {
    cli_common common;
    if (!cli_parse_common(&argc, argv, &common)) return 2;
    tune_args a = {0};
    bool show = false;
    const char *export_path = NULL, *import_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        char *end = NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--show") == 0) {
            show = true;
        } else if ((strcmp(arg, "--export") == 0 || strcmp(arg, "--import") == 0) && has_value) {
            const char **slot = arg[2] == 'e' ? &export_path : &import_path;
            if (*slot || !argv[i + 1][0]) {
                fprintf(stderr, "ptxkit tune: %s takes one FILE\n", arg);
                usage(stderr);
                return 2;
            }
            *slot = argv[++i];
        } else if (strcmp(arg, "--exhaustive") == 0) {
            a.options.exhaustive = 1;
        } else if (strcmp(arg, "--verify-exhaustive") == 0) {
            a.options.verify_exhaustive = 1;
        } else if (strcmp(arg, "--no-save") == 0) {
            a.options.no_save = 1;
        } else if (strcmp(arg, "--variant") == 0 && has_value) {
            a.variant = argv[++i];
        } else if (strcmp(arg, "--sizes") == 0 && has_value) {
            if (!parse_sizes(argv[++i], a.sizes, &a.size_count)) {
                fprintf(stderr, "ptxkit tune: --sizes takes up to %d sizes as N, 2^K or N with K/M/G, not '%s'\n",
                        MAX_SIZES, argv[i]);
                usage(stderr);
                return 2;
            }
        } else if (strcmp(arg, "--budget") == 0 && has_value) {
            a.options.budget_s = strtod(argv[++i], &end);
            if (*end || !(a.options.budget_s > 0) || a.options.budget_s > 86400) {
                fprintf(stderr, "ptxkit tune: --budget takes seconds in (0, 86400], not '%s'\n", argv[i]);
                usage(stderr);
                return 2;
            }
        } else if ((strcmp(arg, "--max-variants") == 0 || strcmp(arg, "--threads") == 0) && has_value) {
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 100000) {
                fprintf(stderr, "ptxkit tune: %s takes a positive number, not '%s'\n", arg, argv[i]);
                usage(stderr);
                return 2;
            }
            if (arg[2] == 'm') a.options.max_variants = (int)v;
            else a.options.threads = (int)(v > 1024 ? 1024 : v);
        } else if (arg[0] != '-' && !a.family) {
            a.family = arg;
        } else {
            fprintf(stderr, "ptxkit tune: unexpected argument '%s'\n", arg);
            usage(stderr);
            return 2;
        }
    }
    if (export_path || import_path) {
        bool other = show || a.family || a.variant || a.size_count || a.options.budget_s > 0 || a.options.max_variants ||
                     a.options.threads || a.options.exhaustive || a.options.verify_exhaustive || a.options.no_save ||
                     common.format != OUT_TABLE || common.json_path || common.csv_path || common.md_path || common.svg_path;
        if ((export_path && import_path) || other) {
            fprintf(stderr, "ptxkit tune: --export and --import take no other option\n");
            usage(stderr);
            return 2;
        }
        return export_path ? tune_export(export_path) : tune_import(import_path);
    }
    if (show) return show_database(common.device, common.format);
    if (a.options.exhaustive && a.options.verify_exhaustive) {
        fprintf(stderr, "ptxkit tune: --exhaustive and --verify-exhaustive exclude each other\n");
        usage(stderr);
        return 2;
    }
    if (a.family && !family_known(a.family)) {
        fprintf(stderr, "ptxkit tune: no tunable family '%s' (", a.family);
        for (int i = 0; ptxkit_tune_family(i); i++) fprintf(stderr, "%s%s", i ? ", " : "", ptxkit_tune_family(i));
        fprintf(stderr, ")\n");
        usage(stderr);
        return 2;
    }
    if (a.variant && !a.family) {
        fprintf(stderr, "ptxkit tune: --variant needs a FAMILY\n");
        usage(stderr);
        return 2;
    }
    ptxkit_context *ctx = cli_open_context("tune", common.device);
    if (!ctx) return 1;
    int rc = 0;
    for (int i = 0; ptxkit_tune_family(i); i++) {
        const char *family = ptxkit_tune_family(i);
        if (a.family && strcmp(a.family, family) != 0) continue;
        int r = run_family(ctx, &a, family, common.format);
        if (r) rc = r;
    }
    ptxkit_context_close(ctx);
    return rc;
}
