/* ptxkit tune --show: the tuning database (one winner per GPU, build,
 * family, variant and size bucket) and the tuning record (every
 * configuration measured on the way), as tables, read through the public
 * ptxkit_tune_db_read / ptxkit_tune_record_read. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptxkit_tune.h"
#include "tune_exchange.h"
#include "report.h"

void tune_size_text(size_t n, char *buf, size_t size) {
    if (n && (n & (n - 1)) == 0) {
        int log2 = 0;
        while ((n >> log2) > 1) log2++;
        snprintf(buf, size, "2^%d", log2);
    } else {
        snprintf(buf, size, "%zu", n);
    }
}

/* "block=256 items=4 vec=16 bpsm=- load=nc": 0 is "-" (the family's default). */
static void launch_fields_text(int block_size, int items, int vector_bytes, int blocks_per_sm, ptxkit_load_op load_op,
                               char *buf, size_t size) {
    if (block_size == 0 && items == 0 && vector_bytes == 0 && blocks_per_sm == 0 && load_op == PTXKIT_LOAD_DEFAULT) {
        snprintf(buf, size, "built-in defaults");
        return;
    }
    const int values[4] = {block_size, items, vector_bytes, blocks_per_sm};
    char v[4][16];
    for (int i = 0; i < 4; i++) {
        if (values[i]) snprintf(v[i], sizeof v[i], "%d", values[i]);
        else snprintf(v[i], sizeof v[i], "-");
    }
    const char *load = ptxkit_load_op_name(load_op);
    snprintf(buf, size, "block=%s items=%s vec=%s bpsm=%s load=%s", v[0], v[1], v[2], v[3], load ? load : "?");
}

/* "block_size=256 loads_in_flight=4 load_op=nc": the parameters set (the
 * path left out), a load operator by name; none: "built-in defaults". */
void tune_options_text(const ptxkit_config *c, char *buf, size_t size) {
    size_t used = 0;
    if (size) buf[0] = 0;
    for (int i = 0; c && i < c->count && i < PTXKIT_CONFIG_MAX_PARAMS && used < size; i++) {
        const ptxkit_config_param *p = &c->params[i];
        if (strcmp(p->name, "path") == 0) continue;
        const char *load = strcmp(p->name, "load_op") == 0 ? ptxkit_load_op_name((ptxkit_load_op)p->value) : NULL;
        int n = load ? snprintf(buf + used, size - used, "%s%s=%s", used ? " " : "", p->name, load)
                     : snprintf(buf + used, size - used, "%s%s=%lld", used ? " " : "", p->name, p->value);
        if (n < 0) break;
        used += (size_t)n;
    }
    if (size && !buf[0]) snprintf(buf, size, "built-in defaults");
}

/* Whether an entry or record line is of the GPU and build of `key`. */
static bool same_key(const ptxkit_tune_entry *key, const ptxkit_tune_entry *e) {
    return key && strcmp(key->device, e->device) == 0 && key->cc == e->cc && key->sm_count == e->sm_count &&
           key->driver == e->driver && key->nvrtc_major == e->nvrtc_major && key->nvrtc_minor == e->nvrtc_minor &&
           strcmp(key->library, e->library) == 0;
}

/* The time in local time; a time localtime_r cannot represent as a number. */
static void when_text(long long when, char *buf, size_t size) {
    time_t tt = (time_t)when;
    struct tm tmv;
    if (!localtime_r(&tt, &tmv) || !strftime(buf, size, "%Y-%m-%d %H:%M", &tmv)) snprintf(buf, size, "%lld", when);
}

static void show_entries(const char *path, const ptxkit_tune_entry *key, out_format format) {
    char msg[4400];
    ptxkit_tune_entry *db = NULL;
    size_t count = 0;
    /* a damaged file is reported in the title, not an error of the command */
    if (ptxkit_tune_db_read(path, &db, &count) != PTXKIT_SUCCESS) snprintf(msg, sizeof msg, "%s", ptxkit_last_error());
    else if (access(path, F_OK) != 0) snprintf(msg, sizeof msg, "no tuning database at %s yet", path);
    else snprintf(msg, sizeof msg, "%s: %zu entr%s", path, count, count == 1 ? "y" : "ies");
    const char *headers[] = {"this_gpu", "device", "cc", "sms", "driver", "nvrtc", "lib", "family", "variant", "n",
                             "choice", "GBps", "default_GBps", "speedup", "tuned_at"};
    cli_table *t = table_new("tuning database", 15, headers);
    table_id(t, "tune_database");
    table_note(t, msg); /* the file's state: not in the title, which stays fixed text */
    table_types(t, "sssnnssssscnnns");
    for (size_t i = 0; i < count; i++) {
        const ptxkit_tune_entry *e = &db[i];
        char choice[128], when[32], nvrtc[16], n[16];
        long long f[5] = {0};
        static const char *const fixed[5] = {"block", "items", "vec", "bpsm", "load"};
        int found = 0;
        for (int k = 0; k < 5; k++) found += ptxkit_config_get(&e->config, fixed[k], &f[k]) == PTXKIT_SUCCESS;
        if (found == e->config.count) /* a launch-option family's five fields */
            launch_fields_text((int)f[0], (int)f[1], (int)f[2], (int)f[3], (ptxkit_load_op)f[4], choice, sizeof choice);
        else /* gemm's or an application's tunable's named parameters */
            for (int p = 0, used = 0; p < e->config.count && used < (int)sizeof choice; p++)
                used += snprintf(choice + used, sizeof choice - (size_t)used, "%s%s=%lld", p ? " " : "",
                                 e->config.params[p].name, e->config.params[p].value);
        when_text(e->when, when, sizeof when);
        snprintf(nvrtc, sizeof nvrtc, "%d.%d", e->nvrtc_major, e->nvrtc_minor);
        snprintf(n, sizeof n, "2^%d", e->log2n);
        table_addf(t, "%s\t%s\t%d.%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t%.3f\t%s",
                   same_key(key, e) ? "*" : "", e->device, e->cc / 10, e->cc % 10, e->sm_count, e->driver, nvrtc,
                   e->library, e->family, e->variant, n, choice, e->gbs, e->default_gbs,
                   e->default_gbs > 0 ? e->gbs / e->default_gbs : 0, when);
    }
    table_print(t, format, stdout);
    table_free(t);
    ptxkit_tune_entries_free(db);
}

void record_summary(const char *path, ptxkit_tune_record_line **lines, size_t *count, char *msg, size_t msg_size) {
    size_t ignored = 0;
    ptxkit_tune_record_line *got = NULL;
    *count = 0;
    if (ptxkit_tune_record_read(path, &got, count, &ignored) != PTXKIT_SUCCESS)
        snprintf(msg, msg_size, "%s", ptxkit_last_error());
    else if (access(path, F_OK) != 0)
        snprintf(msg, msg_size, "no tuning record at %s yet", path);
    else
        snprintf(msg, msg_size, "%s: %zu configuration%s, %zu damaged line%s ignored", path, *count,
                 *count == 1 ? "" : "s", ignored, ignored == 1 ? "" : "s");
    if (lines) *lines = got;
    else ptxkit_tune_record_free(got);
}

/* Every configuration of the record, in the order measured; a line's
 * timing is reused by a later run of the same problem on a GPU and build
 * marked * (and the same kernel code). */
static void show_record(const char *path, const ptxkit_tune_entry *key, out_format format) {
    char msg[4400];
    ptxkit_tune_record_line *lines = NULL;
    size_t count = 0;
    record_summary(path, &lines, &count, msg, sizeof msg); /* unreadable: said in the note */
    const char *headers[] = {"this_gpu", "device", "driver", "lib", "family", "variant", "code", "n",
                             "config", "outcome", "time_us", "GBps", "samples", "measured_at", "note"};
    cli_table *t = table_new("tuning record", 15, headers);
    table_id(t, "tune_record");
    table_note(t, msg);
    table_types(t, "ssnssssncsnnnss");
    for (size_t i = 0; i < count; i++) {
        const ptxkit_tune_record_line *l = &lines[i];
        char config[512] = "", when[32], n[32], time_us[32] = "-", gbs[32] = "-", note[160];
        for (int p = 0, used = 0; p < l->config.count && used < (int)sizeof config; p++)
            used += snprintf(config + used, sizeof config - (size_t)used, "%s%s=%lld", p ? " " : "",
                             l->config.params[p].name, l->config.params[p].value);
        when_text(l->when, when, sizeof when);
        snprintf(n, sizeof n, "%zu", l->n); /* the exact size: a record is of one n, not a bucket */
        if (l->outcome == PTXKIT_TUNE_OK) snprintf(time_us, sizeof time_us, "%.2f", l->ms * 1e3);
        if (l->outcome == PTXKIT_TUNE_OK && l->gbs > 0) snprintf(gbs, sizeof gbs, "%.0f", l->gbs);
        snprintf(note, sizeof note, "%s", l->note);
        for (char *c = note; *c; c++) /* one table line: tabs and newlines of a compiler log */
            if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
        table_addf(t, "%s\t%s\t%d\t%s\t%s\t%s\t%016llx\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s",
                   same_key(key, &l->key) ? "*" : "", l->key.device, l->key.driver, l->key.library, l->key.family,
                   l->key.variant, l->code, n, config, ptxkit_tune_outcome_name(l->outcome), time_us, gbs, l->samples,
                   when, note);
    }
    table_print(t, format, stdout);
    table_free(t);
    ptxkit_tune_record_free(lines);
}

int tune_show(int device, out_format format, int which) {
    char path[4096], record[4096];
    /* The current GPU's key marks its entries; without a GPU, none are. */
    ptxkit_tune_entry key;
    bool have_key = false;
    ptxkit_context *ctx = NULL;
    int count = 0;
    if (ptxkit_device_count_get(&count) == PTXKIT_SUCCESS && device < count && ptxkit_context_create(device, &ctx) == PTXKIT_SUCCESS) {
        have_key = ptxkit_tune_key_get(ctx, &key) == PTXKIT_SUCCESS;
        report_note_device(ctx); /* the report's metadata names the GPU whose entries are marked */
        ptxkit_context_destroy(ctx);
    }
    if (which != 2) {
        if (ptxkit_tune_db_path_get(path, sizeof path) != PTXKIT_SUCCESS || !path[0])
            printf("no tuning database: the cache directory is disabled and PTXKIT_TUNE_DB is not set\n");
        else
            show_entries(path, have_key ? &key : NULL, format);
    }
    if (which == 1) return 0;
    if (ptxkit_tune_record_path_get(record, sizeof record) != PTXKIT_SUCCESS || !record[0]) {
        if (format == OUT_TABLE) printf("no tuning record (PTXKIT_TUNE_RECORD=off, or no database path)\n");
    } else {
        if (format == OUT_TABLE && which == 0) fputc('\n', stdout);
        show_record(record, have_key ? &key : NULL, format);
    }
    return 0;
}
