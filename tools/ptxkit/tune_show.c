/* ptxkit tune --show: the tuning database (one winner per GPU, build,
 * family, variant and size bucket) and the tuning record (every
 * configuration measured on the way), as tables. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"
#include "tuned/db.h"
#include "tune/record.h"
#include "tune/tuner.h"
#include "tune_exchange.h"
#include "report.h"

void tune_size_text(size_t n, char *buf, size_t size) {
    if (n && (n & (n - 1)) == 0)
        snprintf(buf, size, "2^%d", tune_bucket(n));
    else
        snprintf(buf, size, "%zu", n);
}

void tune_options_text(const ptxkit_launch_options *o, char *buf, size_t size) {
    tune_config c = tune_config_from_options(o);
    bool builtin = c.block_size == 0 && c.items_per_thread == 0 && c.vector_bytes == 0 && c.blocks_per_sm == 0 &&
                   c.load_op == PTXKIT_LOAD_DEFAULT;
    if (builtin)
        snprintf(buf, size, "built-in defaults");
    else
        tune_config_format(&c, buf, size);
}

/* The time in local time; a time localtime_r cannot represent as a number. */
static void when_text(long long when, char *buf, size_t size) {
    time_t tt = (time_t)when;
    struct tm tmv;
    if (!localtime_r(&tt, &tmv) || !strftime(buf, size, "%Y-%m-%d %H:%M", &tmv)) snprintf(buf, size, "%lld", when);
}

static void show_entries(const char *path, const tune_db_key *key, out_format format) {
    char msg[640];
    tune_db db;
    tune_db_init(&db);
    tune_db_load(path, &db, msg, sizeof msg); /* a damaged file is reported in the title, not an error of the command */
    char title[4800];
    snprintf(title, sizeof title, "tuning database %s (%s)", path, msg);
    const char *headers[] = {"this_gpu", "device", "cc", "sms", "driver", "nvrtc", "lib", "family", "variant", "n",
                             "choice", "GBps", "default_GBps", "speedup", "tuned_at"};
    cli_table *t = table_new(title, 15, headers);
    table_types(t, "sssnnssssscnnns");
    for (size_t i = 0; i < db.count; i++) {
        const tune_db_entry *e = &db.entries[i];
        char choice[128], when[32], nvrtc[16], n[16];
        ptxkit_launch_options o = tune_config_options(&e->config);
        tune_options_text(&o, choice, sizeof choice);
        for (int p = 0, used = 0; p < e->param_count && used < (int)sizeof choice; p++) /* an application's tunable */
            used += snprintf(choice + used, sizeof choice - (size_t)used, "%s%s=%lld", p ? " " : "", e->param_names[p],
                             e->param_values[p]);
        when_text(e->when, when, sizeof when);
        snprintf(nvrtc, sizeof nvrtc, "%d.%d", e->key.nvrtc_major, e->key.nvrtc_minor);
        snprintf(n, sizeof n, "2^%d", e->bucket);
        table_addf(t, "%s\t%s\t%d.%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t%.3f\t%s",
                   key && tune_db_key_equal(key, &e->key) ? "*" : "", e->key.device, e->key.cc / 10, e->key.cc % 10,
                   e->key.sm_count, e->key.driver, nvrtc, e->key.library, e->family, e->variant, n, choice, e->gbs,
                   e->default_gbs, e->default_gbs > 0 ? e->gbs / e->default_gbs : 0, when);
    }
    table_print(t, format, stdout);
    table_free(t);
    tune_db_clear(&db);
}

/* Every configuration of the record, in the order measured; a line's
 * timing is reused by a later run of the same problem on a GPU and build
 * marked * (and the same kernel code). */
static void show_record(const char *path, const tune_db_key *key, out_format format) {
    char msg[640];
    tune_record r;
    tune_record_init(&r);
    tune_record_load(path, NULL, &r, msg, sizeof msg); /* unreadable: said in the title */
    char title[4800];
    snprintf(title, sizeof title, "tuning record %s", msg);
    const char *headers[] = {"this_gpu", "device", "driver", "lib", "family", "variant", "code", "n",
                             "config", "outcome", "time_us", "GBps", "samples", "measured_at", "note"};
    cli_table *t = table_new(title, 15, headers);
    table_types(t, "ssnssssncsnnnss");
    for (size_t i = 0; i < r.count; i++) {
        const tune_record_line *l = &r.lines[i];
        char config[512] = "", when[32], n[32], time_us[32] = "-", gbs[32] = "-", note[160];
        for (int p = 0, used = 0; p < l->param_count && used < (int)sizeof config; p++)
            used += snprintf(config + used, sizeof config - (size_t)used, "%s%s=%lld", p ? " " : "", l->names[p],
                             l->values[p]);
        when_text(l->when, when, sizeof when);
        snprintf(n, sizeof n, "%zu", l->n); /* the exact size: a record is of one n, not a bucket */
        if (l->outcome == TUNE_RECORD_OK) snprintf(time_us, sizeof time_us, "%.2f", l->ms * 1e3);
        if (l->outcome == TUNE_RECORD_OK && l->gbs > 0) snprintf(gbs, sizeof gbs, "%.0f", l->gbs);
        snprintf(note, sizeof note, "%s", l->note);
        for (char *c = note; *c; c++) /* one table line: tabs and newlines of a compiler log */
            if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
        table_addf(t, "%s\t%s\t%d\t%s\t%s\t%s\t%016llx\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s",
                   key && tune_db_key_equal(key, &l->key) ? "*" : "", l->key.device, l->key.driver, l->key.library,
                   l->family, l->variant, l->code, n, config, tune_record_outcome_name(l->outcome), time_us, gbs,
                   l->samples, when, note);
    }
    table_print(t, format, stdout);
    table_free(t);
    tune_record_clear(&r);
}

int tune_show(int device, out_format format, int which) {
    char path[4096], record[4096];
    /* The current GPU's key marks its entries; without a GPU, none are. */
    tune_db_key key;
    bool have_key = false;
    ptxkit_context *ctx = NULL;
    int count = 0;
    if (ptxkit_device_count(&count) == PTXKIT_SUCCESS && device < count && ptxkit_context_open(device, &ctx) == PTXKIT_SUCCESS) {
        tune_db_key_for(ctx, &key);
        have_key = true;
        report_note_device(ctx); /* the report's metadata names the GPU whose entries are marked */
        ptxkit_context_close(ctx);
    }
    if (which != 2) {
        if (!tune_db_default_path(path, sizeof path))
            printf("no tuning database: the cache directory is disabled and PTXKIT_TUNE_DB is not set\n");
        else
            show_entries(path, have_key ? &key : NULL, format);
    }
    if (which == 1) return 0;
    if (!tune_record_default_path(record, sizeof record)) {
        if (format == OUT_TABLE) printf("no tuning record (PTXKIT_TUNE_RECORD=off, or no database path)\n");
    } else {
        if (format == OUT_TABLE && which == 0) fputc('\n', stdout);
        show_record(record, have_key ? &key : NULL, format);
    }
    return 0;
}
