/* Report files: see report.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

#ifndef PTXKIT_BUILD_TYPE
#define PTXKIT_BUILD_TYPE "unknown"
#endif

const char *report_build_type(void) { return PTXKIT_BUILD_TYPE; }

#define MAX_CEILINGS 16

static struct {
    const char *json, *csv, *md;
    char command[1024];
    char kind[64];      /* "bench reduce", "tune --show": names the schema */
    char table_id[64];  /* the kind as an id: "bench_reduce" */
    bool have_device;
    ptxkit_device_info device;
    int ceiling_count;
    struct { char name[16]; size_t bytes; double gbs; } ceilings[MAX_CEILINGS];
    cli_table **tables;
    int table_count;
} rep;

void report_set_kind(const char *kind) {
    snprintf(rep.kind, sizeof rep.kind, "%s", kind);
    column_name(kind, rep.table_id, sizeof rep.table_id);
}

const char *report_kind(void) { return rep.kind; }
const char *report_default_table_id(void) { return rep.table_id[0] ? rep.table_id : "table"; }

void report_set_command(int argc, char **argv) {
    char kind[64] = "";
    bool bench = argc > 1 && (strcmp(argv[0], "bench") == 0 || strcmp(argv[0], "report") == 0 ||
                               strcmp(argv[0], "ladder") == 0);
    if (argc > 0) snprintf(kind, sizeof kind, "%s%s%s", argv[0], bench ? " " : "", bench ? argv[1] : "");
    report_set_kind(kind);
    size_t used = 0;
    rep.command[0] = 0;
    for (int i = 0; i < argc && used < sizeof rep.command; i++) {
        int n = snprintf(rep.command + used, sizeof rep.command - used, "%s%s", i ? " " : "", argv[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
}

void report_set_paths(const char *json, const char *csv, const char *md) {
    rep.json = json;
    rep.csv = csv;
    rep.md = md;
}

bool report_wanted(void) { return rep.json || rep.csv || rep.md; }

void report_note_device(ptxkit_context *ctx) {
    rep.have_device = ptxkit_device_info_get(ctx, &rep.device) == PTXKIT_SUCCESS;
}

void report_note_device_of(int ordinal) {
    ptxkit_context *ctx = NULL;
    if (rep.have_device || !report_wanted() || ptxkit_context_create(ordinal, &ctx) != PTXKIT_SUCCESS) return;
    report_note_device(ctx);
    ptxkit_context_destroy(ctx);
}

void report_note_ceiling(const char *name, size_t bytes, double gbs) {
    if (rep.ceiling_count == MAX_CEILINGS) return;
    snprintf(rep.ceilings[rep.ceiling_count].name, sizeof rep.ceilings[0].name, "%s", name);
    rep.ceilings[rep.ceiling_count].bytes = bytes;
    rep.ceilings[rep.ceiling_count++].gbs = gbs;
}

void report_keep_table(const cli_table *t) {
    if (!report_wanted()) return;
    cli_table **grown = realloc(rep.tables, (size_t)(rep.table_count + 1) * sizeof *grown);
    if (!grown) return;
    rep.tables = grown;
    cli_table *copy = table_copy(t);
    if (copy) rep.tables[rep.table_count++] = copy;
}

cJSON *report_metadata(void) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "command", rep.command);
    cJSON_AddStringToObject(m, "library", PTXKIT_VERSION_STRING);
    cJSON_AddStringToObject(m, "build_type", report_build_type());
    char date[32];
    time_t now = time(NULL);
    struct tm tmv;
    if (gmtime_r(&now, &tmv) && strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv)) cJSON_AddStringToObject(m, "date", date);
    else cJSON_AddNullToObject(m, "date");
    ptxkit_versions v;
    ptxkit_versions_get(&v);
    if (v.nvrtc_major) {
        char s[32];
        snprintf(s, sizeof s, "%d.%d", v.nvrtc_major, v.nvrtc_minor);
        cJSON_AddStringToObject(m, "nvrtc", s);
    } else {
        cJSON_AddNullToObject(m, "nvrtc");
    }
    if (v.driver) cJSON_AddNumberToObject(m, "driver", v.driver);
    else cJSON_AddNullToObject(m, "driver");
    /* PTXKIT_TUNE as the library reads it: whether rows may have run tuned
     * configurations (each row's config_source says which did) */
    const char *tune = getenv("PTXKIT_TUNE");
    const char *mode = !tune || !*tune || strcmp(tune, "cached") == 0 ? "cached"
                       : strcmp(tune, "off") == 0 || strcmp(tune, "0") == 0 ? "off"
                       : strcmp(tune, "auto") == 0 ? "auto" : "cached";
    cJSON_AddStringToObject(m, "tuning_mode", mode);
    if (rep.have_device) {
        cJSON *d = cJSON_AddObjectToObject(m, "device");
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", rep.device.cc_major, rep.device.cc_minor);
        cJSON_AddNumberToObject(d, "ordinal", rep.device.ordinal);
        cJSON_AddStringToObject(d, "name", rep.device.name);
        cJSON_AddStringToObject(d, "compute_capability", cc);
        cJSON_AddNumberToObject(d, "sm_count", rep.device.sm_count);
        cJSON_AddNumberToObject(d, "datasheet_gbs", rep.device.peak_bandwidth_gbs);
    } else {
        cJSON_AddNullToObject(m, "device");
    }
    cJSON *c = cJSON_AddArrayToObject(m, "ceilings");
    for (int i = 0; i < rep.ceiling_count; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", rep.ceilings[i].name);
        cJSON_AddNumberToObject(o, "bytes", (double)rep.ceilings[i].bytes);
        cJSON_AddNumberToObject(o, "gbs", rep.ceilings[i].gbs);
        cJSON_AddItemToArray(c, o);
    }
    return m;
}

/* Whether path can be written, before any work: a directory cannot; an
 * existing file is opened for writing without truncating it; a new one is
 * created and removed again (a permission check alone is not an answer for
 * root, nor in /proc). */
bool report_path_writable(const char *command, const char *path) {
    if (!path || strcmp(path, "-") == 0) return true;
    struct stat st;
    const char *why = NULL;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        why = "is a directory";
    } else {
        bool existed = stat(path, &st) == 0;
        /* non-blocking: a FIFO without a reader must not hang the command */
        int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | (existed ? 0 : O_CREAT | O_EXCL), 0644);
        if (fd < 0) {
            why = strerror(errno);
        } else {
            close(fd);
            if (!existed) unlink(path);
        }
    }
    if (why) fprintf(stderr, "ptxkit %s: cannot write %s: %s\n", command, path, why);
    return why == NULL;
}

static void csv_cell(FILE *f, const char *cell) {
    if (strpbrk(cell, ",\"\n") == NULL) {
        fputs(cell, f);
        return;
    }
    fputc('"', f);
    for (const char *p = cell; *p; p++) fprintf(f, *p == '"' ? "\"\"" : "%c", *p);
    fputc('"', f);
}

/* One CSV document for every report: a `table` column (the table's id),
 * then every column of every table in order of first appearance; a cell of
 * a column its table lacks is empty. */
static void write_csv(FILE *f) {
    char (*names)[128] = calloc(1024, sizeof *names);
    int count = 0;
    if (!names) return;
    for (int i = 0; i < rep.table_count; i++)
        for (int c = 0; c < table_columns(rep.tables[i]); c++) {
            char name[128];
            column_name(table_cell(rep.tables[i], 0, c), name, sizeof name);
            int k = 0;
            while (k < count && strcmp(names[k], name) != 0) k++;
            if (k == count && count < 1024) snprintf(names[count++], sizeof names[0], "%s", name);
        }
    fputs("table", f);
    for (int k = 0; k < count; k++) {
        fputc(',', f);
        csv_cell(f, names[k]);
    }
    fputc('\n', f);
    for (int i = 0; i < rep.table_count; i++) {
        const cli_table *t = rep.tables[i];
        int *where = calloc((size_t)count + 1, sizeof *where);
        if (!where) break;
        for (int k = 0; k < count; k++) where[k] = -1;
        for (int c = 0; c < table_columns(t); c++) {
            char name[128];
            column_name(table_cell(t, 0, c), name, sizeof name);
            for (int k = 0; k < count; k++)
                if (strcmp(names[k], name) == 0 && where[k] < 0) where[k] = c;
        }
        for (int r = 1; r <= table_rows(t); r++) {
            csv_cell(f, table_get_id(t));
            for (int k = 0; k < count; k++) {
                fputc(',', f);
                if (where[k] >= 0) csv_cell(f, table_cell(t, r, where[k]));
            }
            fputc('\n', f);
        }
        free(where);
    }
    free(names);
}

static FILE *open_out(const char *command, const char *path) {
    if (strcmp(path, "-") == 0) return stdout;
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "ptxkit %s: cannot write %s: %s\n", command, path, strerror(errno));
    return f;
}

static bool close_out(const char *command, const char *path, FILE *f) {
    bool ok = !ferror(f);
    if (f == stdout) ok = fflush(f) == 0 && ok;
    else ok = fclose(f) == 0 && ok;
    if (!ok) fprintf(stderr, "ptxkit %s: cannot write %s\n", command, path);
    return ok;
}

bool report_write_json(const char *command, const char *path, const cJSON *doc) {
    if (!path) return true;
    char *text = cJSON_Print(doc);
    if (!text) {
        fprintf(stderr, "ptxkit %s: out of memory writing %s\n", command, path);
        return false;
    }
    FILE *f = open_out(command, path);
    if (f) fprintf(f, "%s\n", text);
    free(text);
    return f && close_out(command, path, f);
}

bool report_finish(const char *command, int rc) {
    if (!report_wanted() || (rc != 0 && rep.table_count == 0)) return true;
    bool ok = true;
    if (rep.json) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", "ptxkit-report/2");
        cJSON_AddStringToObject(doc, "kind", rep.kind);
        cJSON_AddItemToObject(doc, "metadata", report_metadata());
        cJSON *tables = cJSON_AddArrayToObject(doc, "tables");
        for (int i = 0; i < rep.table_count; i++) cJSON_AddItemToArray(tables, table_to_json(rep.tables[i], true));
        ok = report_write_json(command, rep.json, doc) && ok;
        cJSON_Delete(doc);
    }
    if (rep.csv) {
        FILE *f = open_out(command, rep.csv);
        if (f) write_csv(f);
        ok = f && close_out(command, rep.csv, f) && ok;
    }
    if (rep.md) {
        FILE *f = open_out(command, rep.md);
        if (f) {
            cJSON *m = report_metadata();
            fprintf(f, "# ptxkit %s\n\n", rep.command);
            for (cJSON *it = m->child; it; it = it->next) {
                if (strcmp(it->string, "command") == 0) continue;
                char *v = NULL;
                if (cJSON_IsString(it)) v = strdup(it->valuestring);
                else if (cJSON_IsObject(it) && cJSON_GetObjectItem(it, "name"))
                    v = strdup(cJSON_GetObjectItem(it, "name")->valuestring);
                else v = cJSON_PrintUnformatted(it);
                fprintf(f, "- %s: %s\n", it->string, v ? v : "");
                free(v);
            }
            cJSON_Delete(m);
            for (int i = 0; i < rep.table_count; i++) {
                fputc('\n', f);
                table_print_markdown(rep.tables[i], f);
            }
        }
        ok = f && close_out(command, rep.md, f) && ok;
    }
    for (int i = 0; i < rep.table_count; i++) table_free(rep.tables[i]);
    free(rep.tables);
    rep.tables = NULL;
    rep.table_count = 0;
    return ok;
}
