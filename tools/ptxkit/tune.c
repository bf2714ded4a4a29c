/* ptxkit tune: choose block size and the other injected constants of a
 * kernel family for this GPU, print the choice next to the built-in
 * defaults, and remember it in the tuning database; --show lists it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptxkit_tune.h"
#include "args.h"
#include "cli.h"
#include "report.h"
#include "commands.h"
#include "tune_exchange.h"

#define MAX_SIZES 32

/* ---- progress ---------------------------------------------------------- */

typedef struct progress_state {
    bool tty;
    bool shown;
} progress_state;

static void show_progress(const ptxkit_tune_progress *p, void *user) {
    progress_state *ps = user;
    if (!ps->tty) return;
    char n[32], budget[32] = "";
    tune_size_text(p->n, n, sizeof n);
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
    ptxkit_tune_report *report = NULL;
    if (ptxkit_tune_report_create(&report) != PTXKIT_SUCCESS) {
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
    ptxkit_status st = ptxkit_tune_sizes_run(ctx, family, a->variant, sizes, size_count, &o, report);
    clear_progress(&ps);
    if (st != PTXKIT_SUCCESS) cli_fail("tune", ctx, st); /* the sizes done before are still shown */
    const char *variant = ptxkit_tune_report_variant_get(report);
    if (!variant[0]) variant = a->variant ? a->variant : "(default variant)";
    int done = ptxkit_tune_report_size_count_get(report);

    bool verify = a->options.verify_exhaustive != 0;
    char title[512];
    snprintf(title, sizeof title, "ptxkit tune %s %s on %s (%s; %s)", family, variant, cli_device(ctx)->name,
             gemm ? "GFLOP/s, the _GBps columns: 2 m n k per second of the shape timed at n = m n k"
                  : "GB/s of the bytes the operation must move",
             a->options.exhaustive ? "exhaustive" : verify ? "budgeted search, then exhaustive" : "budgeted search");
    /* timed: measured in this run; reused: taken from the tuning record */
    const char *plain[] = {"n", "default_GBps", "tuned_GBps", "speedup", "choice", "timed", "reused", "legal", "failed",
                           "wrong", "seconds"};
    const char *checked[] = {"n", "default_GBps", "pick_GBps", "pick", "exhaustive_GBps", "exhaustive_best",
                             "pick_pct_of_best", "saved", "timed", "reused", "legal", "failed", "wrong", "seconds"};
    cli_table *t = verify ? table_new(title, 14, checked) : table_new(title, 11, plain);
    table_types(t, verify ? "snncncnc" "nnnnnn" : "snnnc" "nnnnnn");
    char id[64];
    snprintf(id, sizeof id, "tune_%s", family);
    table_id(t, id); /* one table a family: its rows are that family's sizes */
    for (int i = 0; i < done; i++) {
        const ptxkit_tune_result *r = ptxkit_tune_report_result_get(report, i);
        char n[32], choice[128], pick[128], best[128];
        tune_size_text(r->n, n, sizeof n);
        tune_options_text(&r->best, choice, sizeof choice);
        if (gemm) snprintf(choice, sizeof choice, "%.*s", (int)sizeof choice - 1, r->best_text); /* named parameters */
        if (verify) {
            tune_options_text(&r->search_best, pick, sizeof pick);
            tune_options_text(&r->exhaustive_best, best, sizeof best);
            if (gemm) snprintf(best, sizeof best, "%.*s", (int)sizeof best - 1, r->exhaustive_text);
            table_addf(t, "%s\t%.0f\t%.0f\t%s\t%.0f\t%s\t%.1f\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f", n, r->default_gbs,
                       r->search_gbs, pick, r->exhaustive_gbs, best,
                       r->exhaustive_gbs > 0 ? 100.0 * r->search_gbs / r->exhaustive_gbs : 0, choice, r->timed, r->reused,
                       r->legal, r->failed, r->wrong, r->seconds);
        } else {
            table_addf(t, "%s\t%.0f\t%.0f\t%.3f\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f", n, r->default_gbs, r->best_gbs,
                       r->default_gbs > 0 ? r->best_gbs / r->default_gbs : 0, choice, r->timed, r->reused, r->legal,
                       r->failed, r->wrong, r->seconds);
        }
    }
    table_print(t, format, stdout);
    table_free(t);
    FILE *info = format == OUT_TABLE ? stdout : stderr;
    const char *note = ptxkit_tune_report_database_note_get(report), *database = ptxkit_tune_report_database_get(report);
    int prepared = 0, threads = 0;
    ptxkit_tune_report_prepared_get(report, &prepared, &threads);
    fprintf(info, "%s: %.1f s in all, %.1f s of it compiling or loading %d variants ahead on %d threads; database: %s%s%s\n", family,
            ptxkit_tune_report_seconds_get(report), ptxkit_tune_report_compile_seconds_get(report), prepared, threads,
            database[0] ? database : a->options.no_save ? "not written (--no-save)" : "not written",
            note[0] ? "; " : "", note);
    const char *record = "", *record_note = ptxkit_tune_report_record_note_get(report);
    int loaded = 0, appended = 0;
    ptxkit_tune_report_record_get(report, &record, &loaded, &appended);
    if (record[0] || record_note[0])
        fprintf(info, "%s: tuning record %s: %d configurations reused, %d appended%s%s\n", family,
                record[0] ? record : "not used", loaded, appended, record_note[0] ? "; " : "", record_note);
    for (int i = 0; i < done; i++) {
        const ptxkit_tune_result *r = ptxkit_tune_report_result_get(report, i);
        if (r->failed || r->wrong) {
            char n[32];
            tune_size_text(r->n, n, sizeof n);
            fprintf(info, "%s n=%s: %d configurations failed, %d gave WRONG results; first: %s\n", family, n, r->failed,
                    r->wrong, r->note);
        }
    }
    bool wrong = false;
    for (int i = 0; i < done; i++) wrong |= ptxkit_tune_report_result_get(report, i)->wrong > 0;
    ptxkit_tune_report_destroy(report);
    /* a variant that computes a wrong result is a bug to look at */
    return st != PTXKIT_SUCCESS || wrong ? 1 : 0;
}

/* ---- the command ------------------------------------------------------- */

static const char tune_usage[] =
    "usage: ptxkit tune [FAMILY] [--variant V] [--sizes N,N,...] [--budget SECONDS] [--max-variants N]\n"
    "                   [--exhaustive | --verify-exhaustive] [--threads N] [--no-save] [--no-record]\n"
    "                   [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--device N]\n"
    "       ptxkit tune --show [--record] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE]\n"
    "       ptxkit tune --export FILE.json | --import FILE.json\n"
    "       ptxkit tune --export-t4 FILE.json | --import-t4 FILE.json [FAMILY --variant V --sizes N]\n";

static const char tune_help[] =
    "Times JIT variants of a kernel family (block size, items per thread, vector width, blocks per SM, load\n"
    "operator) through its public operation and saves the fastest per size bucket in the tuning database\n"
    "(PTXKIT_TUNE_DB, else <cache dir>/tune.db), which the operations then use (PTXKIT_TUNE=off|cached|auto).\n"
    "Every configuration it measures is appended, as it is measured, to the tuning record beside the database\n"
    "(PTXKIT_TUNE_RECORD, else tune.record.jsonl; JSON lines): a later run of the same family, variant and size\n"
    "on the same GPU, driver, NVRTC, library and kernel code takes those timings from it instead of timing\n"
    "them again (column reused), so an interrupted run resumes where it stopped.\n"
    "  FAMILY              a tunable family (see below; copy counts bytes, gemm m x n x k, the others\n"
    "                      elements); default: each\n"
    "  --variant V         reduce, scan: <op>.<type> as sum.float32; copy: bytes; transpose (padded kind):\n"
    "                      float32 (default), float64 (sides of whole 16-byte vectors), float32.unaligned,\n"
    "                      float64.unaligned (other sides); gemm: <type>.<class>, float32 (default) or float64,\n"
    "                      and square (default), small_m, small_n or small_k (that side below 256)\n"
    "  --sizes LIST        sizes to tune, each N, 2^K or with a K/M/G suffix; default 2^20,2^24,2^28 (gemm:\n"
    "                      2^30,2^33,2^36, cubes of 1024, 2048 and 4096)\n"
    "  --budget SECONDS    wall-clock bound per family, compiles included (default 35)\n"
    "  --max-variants N    at most N configurations per size, timed now or taken from the record (a resumed\n"
    "                      run stops where the uninterrupted one would)\n"
    "  --exhaustive        time every legal configuration (no budget)\n"
    "  --verify-exhaustive the budgeted search, then an exhaustive one: prints both picks side by side\n"
    "  --threads N         compile threads (default: one per CPU)\n"
    "  --no-save           leave the database and its record alone\n"
    "  --no-record         time every configuration again: neither read nor extend the record\n"
    "  --show              list the database (entries of this GPU and build marked with *) and the record;\n"
    "                      --csv or --json alone print the database's table, with --record the record's\n"
    "  --record            with --show: the record alone\n"
    "  --export FILE       write every entry of the database, with its key, as JSON (- for standard output)\n"
    "  --import FILE       merge the entries of such a file into the database (- for standard input)\n"
    "  --export-t4 FILE    write the tuning record as T4 results (Kernel Tuner's open results schema, 1.0.0;\n"
    "                      ptxkit's key in an extra \"ptxkit\" object of each result)\n"
    "  --import-t4 FILE    append the results of such a file to the tuning record (lines it holds already\n"
    "                      left out); a result without the \"ptxkit\" object (Kernel Tuner's own file) is taken\n"
    "                      as FAMILY --variant V at the one size of --sizes N on this GPU, its configuration\n"
    "                      under ptxkit's parameter names: a later tune of that problem reuses its timings\n"
    "An application's own kernels are tuned through the ptxkit_tunable API, not here: timing one needs its\n"
    "arguments, buffers and output check, which only the application has. --show lists their entries too.\n";

static void list_families(FILE *out) {
    fprintf(out, "families:");
    for (int i = 0; ptxkit_tune_family_name_get(i); i++) fprintf(out, " %s", ptxkit_tune_family_name_get(i));
    fputc('\n', out);
}

int cmd_tune(int argc, char **argv) {
    tune_args a = {0};
    bool show = false, record = false, exhaustive = false, verify = false, no_save = false, no_record = false;
    const char *export_path = NULL, *import_path = NULL, *export_t4 = NULL, *import_t4 = NULL;
    const arg_option options[] = {
        {.name = "variant", .kind = ARG_TEXT, .value = &a.variant},
        {.name = "sizes", .kind = ARG_SIZES, .value = a.sizes, .count = &a.size_count, .max = MAX_SIZES, .lo = 1,
         .hi = 1LL << 40},
        {.name = "budget", .kind = ARG_SECONDS, .value = &a.options.budget_s, .lo = 0, .hi = 86400},
        {.name = "max-variants", .kind = ARG_INT, .value = &a.options.max_variants, .lo = 1, .hi = 100000},
        {.name = "threads", .kind = ARG_INT, .value = &a.options.threads, .lo = 1, .hi = 1024},
        {.name = "exhaustive", .kind = ARG_FLAG, .value = &exhaustive},
        {.name = "verify-exhaustive", .kind = ARG_FLAG, .value = &verify},
        {.name = "no-save", .kind = ARG_FLAG, .value = &no_save},
        {.name = "no-record", .kind = ARG_FLAG, .value = &no_record},
        {.name = "show", .kind = ARG_FLAG, .value = &show},
        {.name = "record", .kind = ARG_FLAG, .value = &record},
        {.name = "export", .kind = ARG_TEXT, .value = &export_path},
        {.name = "import", .kind = ARG_TEXT, .value = &import_path},
        {.name = "export-t4", .kind = ARG_TEXT, .value = &export_t4},
        {.name = "import-t4", .kind = ARG_TEXT, .value = &import_t4},
        {0}};
    static const char *const exclusive[] = {"exhaustive,verify-exhaustive", "show,export,import,export-t4,import-t4",
                                            "no-save,no-record",
                                            NULL};
    const arg_spec spec = {.command = "tune", .usage = tune_usage, .help = tune_help, .more_help = list_families,
                           .common = ARGS_DEVICE | ARGS_TABLES, .options = options, .operands = "FAMILY",
                           .max_operands = 1, .exclusive = exclusive};
    cli_common common;
    char **operands;
    int operand_count;
    int rc = args_parse(&spec, argc, argv, &common, &operands, &operand_count);
    if (rc >= 0) return rc;
    a.family = operand_count ? operands[0] : NULL;
    a.options.exhaustive = exhaustive;
    a.options.verify_exhaustive = verify;
    a.options.no_save = no_save;
    a.options.no_record = no_record;
    bool tuning = a.family || a.variant || a.size_count || a.options.budget_s > 0 || a.options.max_variants ||
                  a.options.threads || exhaustive || verify || no_save || no_record;
    bool reports = common.format != OUT_TABLE || common.json_path || common.csv_path || common.md_path;
    if (export_t4) {
        if (tuning || reports || record || common.device) return args_error(&spec, "--export-t4 takes no other option");
        return tune_export_t4(export_t4);
    }
    if (import_t4) {
        bool other = a.options.budget_s > 0 || a.options.max_variants || a.options.threads || exhaustive || verify ||
                     no_save || no_record;
        if (other || reports || record) return args_error(&spec, "--import-t4 takes FAMILY, --variant, --sizes and --device alone");
        if (!a.family && !a.variant && !a.size_count) {
            if (common.device) return args_error(&spec, "--device goes with FAMILY (a Kernel Tuner file)");
            return tune_import_t4(import_t4);
        }
        if (!a.family || !a.variant || a.size_count != 1)
            return args_error(&spec, "--import-t4 of a Kernel Tuner file takes FAMILY, --variant V and one --sizes N");
        if (ptxkit_tune_variant_check(a.family, a.variant) != PTXKIT_SUCCESS)
            return args_error(&spec, "%s", ptxkit_last_error());
        return tune_import_t4_for(import_t4, common.device, a.family, a.variant, a.sizes[0]);
    }
    if (export_path || import_path) {
        if (tuning || reports || record || common.device)
            return args_error(&spec, "--%s takes no other option", export_path ? "export" : "import");
        return export_path ? tune_export(export_path) : tune_import(import_path);
    }
    if (record && !show) return args_error(&spec, "--record goes with --show");
    if (show) {
        if (tuning) return args_error(&spec, "--show lists the database: it takes no FAMILY or tuning option");
        report_set_kind("tune --show");
        return tune_show(common.device, common.format, record ? 2 : 0);
    }
    ptxkit_status check = a.family ? ptxkit_tune_variant_check(a.family, a.variant) : PTXKIT_SUCCESS;
    char why[512] = "";
    if (check != PTXKIT_SUCCESS) ptxkit_last_error_copy(why, sizeof why);
    if (check == PTXKIT_ERROR_NOT_FOUND) {
        char names[256] = "";
        for (int i = 0; ptxkit_tune_family_name_get(i); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", ptxkit_tune_family_name_get(i));
        return args_error(&spec, "no tunable family '%s' (families: %s)", a.family, names);
    }
    if (a.variant && !a.family) return args_error(&spec, "--variant needs a FAMILY");
    if (a.variant && check != PTXKIT_SUCCESS) return args_error(&spec, "%s", why); /* before any GPU is opened */
    if (verify) report_set_kind("tune --verify-exhaustive");
    ptxkit_context *ctx = cli_open_context("tune", common.device);
    if (!ctx) return 1;
    for (int i = 0; ptxkit_tune_family_name_get(i); i++) {
        const char *family = ptxkit_tune_family_name_get(i);
        if (a.family && strcmp(a.family, family) != 0) continue;
        int r = run_family(ctx, &a, family, common.format);
        if (r) rc = r;
    }
    ptxkit_context_destroy(ctx);
    return rc < 0 ? 0 : rc;
}
