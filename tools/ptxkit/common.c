/* Shared pieces of the ptxkit command. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <math.h>

#include <cjson/cJSON.h>

#include "ptxkit_tune.h"
#include "cli.h"
#include "report.h"
#include "lab.h"

bool cli_is_tty(void) { return isatty(STDOUT_FILENO) != 0; }

/* ---- argument values ---- */

bool cli_parse_long(const char *text, long lo, long hi, long *out) {
    if (!text || !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9'))) return false;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_parse_size(const char *text, size_t *out) {
    if (!text || !(text[0] >= '0' && text[0] <= '9')) return false; /* strtoull takes "-1" as 2^64 - 1 */
    char *end;
    errno = 0;
    if (text[0] == '2' && text[1] == '^') {
        if (!(text[2] >= '0' && text[2] <= '9')) return false;
        unsigned long k = strtoul(text + 2, &end, 10);
        if (errno || *end || k >= sizeof(size_t) * 8) return false;
        *out = (size_t)1 << k;
        return true;
    }
    /* base 16 only after 0x: base 0 read "0512" as octal 330 (found by fuzz_cli_args) */
    bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (hex && !isxdigit((unsigned char)text[2])) return false;
    unsigned long long v = strtoull(text, &end, hex ? 16 : 10);
    if (errno || end == text) return false;
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (*end || v > (unsigned long long)SIZE_MAX >> shift) return false;
    *out = (size_t)(v << shift);
    return true;
}

bool cli_parse_define(const char *text) {
    if (!text || strlen(text) > CLI_DEFINE_MAX) return false;
    const char *p = text;
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_')) return false;
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
    if (*p++ != '=' || !*p) return false;
    for (; *p; p++)
        if (*p < 0x20 || *p > 0x7e) return false;
    return true;
}

bool cli_arg_int(const char *command, const char *option, const char *text, long lo, long hi, int *out) {
    long v;
    if (cli_parse_long(text, lo, hi, &v)) {
        *out = (int)v;
        return true;
    }
    fprintf(stderr, "ptxkit %s: %s takes a whole number in [%ld, %ld], not '%s'\n", command, option, lo, hi,
            text ? text : "");
    return false;
}

bool cli_arg_size(const char *command, const char *option, const char *text, size_t lo, size_t hi, size_t *out) {
    size_t v;
    if (cli_parse_size(text, &v) && v >= lo && v <= hi) {
        *out = v;
        return true;
    }
    fprintf(stderr, "ptxkit %s: %s takes a size in [%zu, %zu] as N, 2^K or N with K/M/G, not '%s'\n", command, option,
            lo, hi, text ? text : "");
    return false;
}

ptxkit_context *cli_open_context(const char *command, int device) {
    ptxkit_context *ctx = NULL;
    ptxkit_status st = ptxkit_context_create(device, &ctx);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit %s: no usable GPU: %s\n", command, ptxkit_last_error());
        return NULL;
    }
    report_note_device(ctx);
    return ctx;
}

ptxkit_context *cli_open_context_at_least(const char *command, int device, int arch, const char *what,
                                          ptxkit_device_info *dev) {
    ptxkit_context *ctx = cli_open_context(command, device);
    if (!ctx) return NULL;
    ptxkit_device_info_get(ctx, dev);
    int have = dev->cc_major * 10 + dev->cc_minor;
    if (have < arch) {
        fprintf(stderr, "ptxkit %s: %s needs sm_%d or newer, this GPU is sm_%d\n", command, what, arch, have);
        ptxkit_context_destroy(ctx);
        return NULL;
    }
    return ctx;
}

void cli_fail(const char *command, ptxkit_context *ctx, ptxkit_status st) {
    (void)ctx; /* the message is the calling thread's, whatever the context */
    fprintf(stderr, "ptxkit %s: %s: %s\n", command, ptxkit_status_string(st), ptxkit_last_error());
}

/* ---- tables ---- */

struct cli_table {
    char *title;
    char *id;     /* NULL: the report's kind (report_default_table_id) */
    char *note;   /* NULL, or what the table's rows rest on (a file's state) */
    int columns, rows, capacity;
    char **cells; /* rows x columns, row 0 the headers */
    char *types;  /* NULL, or 'n' / 's' per column */
};

void table_types(cli_table *t, const char *types) {
    if (!t || !types || (int)strlen(types) != t->columns || strspn(types, "nsc-") != strlen(types)) return;
    free(t->types);
    t->types = strdup(types);
}

cli_table *table_copy(const cli_table *t) {
    cli_table *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->title = strdup(t->title);
    c->id = t->id ? strdup(t->id) : NULL;
    c->note = t->note ? strdup(t->note) : NULL;
    c->columns = t->columns;
    c->rows = c->capacity = t->rows;
    c->cells = calloc((size_t)t->rows * (size_t)t->columns, sizeof *c->cells);
    c->types = t->types ? strdup(t->types) : NULL;
    if (!c->title || !c->cells || (t->types && !c->types)) {
        free(c->title);
        free(c->cells);
        free(c->types);
        free(c);
        return NULL;
    }
    for (size_t i = 0; i < (size_t)t->rows * (size_t)t->columns; i++) c->cells[i] = strdup(t->cells[i] ? t->cells[i] : "");
    return c;
}

void table_id(cli_table *t, const char *id) {
    if (!t || !id) return;
    free(t->id);
    t->id = strdup(id);
}

void table_note(cli_table *t, const char *note) {
    if (!t || !note) return;
    free(t->note);
    t->note = strdup(note);
}

const char *table_get_id(const cli_table *t) { return t->id ? t->id : report_default_table_id(); }

void column_name(const char *header, char *out, size_t size) {
    size_t n = 0;
    bool gap = false;
    for (const char *p = header; *p && n + 1 < size; p++) {
        char ch = *p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
        } else if (ch >= 'A' && ch <= 'Z') {
            ch = (char)(ch - 'A' + 'a');
        } else {
            gap = n > 0;
            continue;
        }
        if (gap && n + 2 < size) out[n++] = '_';
        gap = false;
        out[n++] = ch;
    }
    out[n] = 0;
}

int table_columns(const cli_table *t) { return t->columns; }
int table_rows(const cli_table *t) { return t->rows - 1; }
const char *table_cell(const cli_table *t, int row, int column) { return t->cells[(size_t)row * t->columns + column]; }

cli_table *table_new(const char *title, int columns, const char *const *headers) {
    cli_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->title = strdup(title ? title : "");
    t->columns = columns;
    t->capacity = 16;
    t->cells = calloc((size_t)t->capacity * (size_t)columns, sizeof *t->cells);
    for (int c = 0; c < columns; c++) t->cells[c] = strdup(headers[c]);
    t->rows = 1;
    return t;
}

static char **table_new_row(cli_table *t) {
    if (t->rows == t->capacity) {
        char **grown = realloc(t->cells, (size_t)t->capacity * 2 * (size_t)t->columns * sizeof *grown);
        if (!grown) return NULL;
        t->cells = grown;
        t->capacity *= 2;
    }
    return t->cells + (size_t)t->rows++ * (size_t)t->columns;
}

void table_add(cli_table *t, ...) {
    char **row = table_new_row(t);
    if (!row) return;
    va_list ap;
    va_start(ap, t);
    for (int c = 0; c < t->columns; c++) {
        const char *cell = va_arg(ap, const char *);
        row[c] = strdup(cell ? cell : "");
    }
    va_end(ap);
}

void table_addf(cli_table *t, const char *fmt, ...) {
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char **row = table_new_row(t);
    if (!row) return;
    char *p = line;
    for (int c = 0; c < t->columns; c++) {
        char *tab = p ? strchr(p, '\t') : NULL;
        if (tab) *tab = 0;
        row[c] = strdup(p ? p : "");
        p = tab ? tab + 1 : NULL;
    }
}

/* The JSON number grammar: strtod alone also takes inf, nan, 0x10, " 1". */
static bool is_json_number(const char *s) {
    const char *p = s;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return false;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == 0;
}

static char column_type(const cli_table *t, int c) { return t->types && t->types[c] != '-' ? t->types[c] : 0; }

/* "block=512 items=8 vec=- load=nc" as {"block": 512, "items": 8, "load": "nc"}:
 * a parameter at "-" (the built-in default) is left out, so "built-in
 * defaults", which names none, is {}. */
static cJSON *config_json(const char *cell) {
    cJSON *o = cJSON_CreateObject();
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", cell);
    for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || strcmp(eq + 1, "-") == 0 || cJSON_GetObjectItemCaseSensitive(o, tok)) continue;
        *eq = 0;
        const char *v = eq + 1;
        double x = is_json_number(v) ? strtod(v, NULL) : NAN;
        cJSON_AddItemToObject(o, tok, isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateString(v));
    }
    return o;
}

static cJSON *cell_json(const cli_table *t, int c, const char *cell) {
    char type = column_type(t, c);
    if (type == 's') return cJSON_CreateString(cell);
    if (type == 'c') return config_json(cell);
    if (type == 'n' && cell[0] == '+' && cell[1] != '-') cell++; /* %+f: a signed difference */
    if (is_json_number(cell)) {
        double v = strtod(cell, NULL);
        return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
    }
    return type == 'n' ? cJSON_CreateNull() : cJSON_CreateString(cell);
}

/* The column a regression shows in: the first of these (lower is better). */
static const char *const metric_names[] = {"time_us", "time_ms", "ms", "median_ms", "us_per_launch",
                                           "cycles_per_access", "cycles_per_reduction", "cycles_per_byte"};

int table_metric_column(const cli_table *t) {
    char name[128];
    for (int c = 0; c < t->columns; c++) {
        column_name(t->cells[c], name, sizeof name);
        for (size_t i = 0; i < sizeof metric_names / sizeof metric_names[0]; i++)
            if (strcmp(name, metric_names[i]) == 0) return c;
    }
    return -1;
}

static const char *column_type_name(const cli_table *t, int c) {
    bool number = column_type(t, c) == 'n';
    if (!column_type(t, c)) { /* undeclared: a number column when every cell is one */
        number = t->rows > 1;
        for (int r = 1; r < t->rows && number; r++) number = is_json_number(t->cells[(size_t)r * t->columns + c]);
    }
    return column_type(t, c) == 'c' ? "object" : number ? "number" : "string";
}

struct cJSON *table_to_json(const cli_table *t, bool columns) {
    (void)columns;
    cJSON *o = cJSON_CreateObject();
    char name[128];
    cJSON_AddStringToObject(o, "id", table_get_id(t));
    cJSON_AddStringToObject(o, "title", t->title);
    if (t->note) cJSON_AddStringToObject(o, "note", t->note);
    /* the row's identity for `ptxkit report compare`: the columns before the
     * measured one (none where the table times nothing) */
    int metric = table_metric_column(t);
    cJSON *keys = cJSON_AddArrayToObject(o, "keys");
    for (int c = 0; c < metric; c++) {
        column_name(t->cells[c], name, sizeof name);
        cJSON_AddItemToArray(keys, cJSON_CreateString(name));
    }
    if (metric >= 0) {
        column_name(t->cells[metric], name, sizeof name);
        cJSON_AddStringToObject(o, "metric", name);
    } else {
        cJSON_AddNullToObject(o, "metric");
    }
    cJSON *cols = cJSON_AddArrayToObject(o, "columns");
    for (int c = 0; c < t->columns; c++) {
        cJSON *col = cJSON_CreateObject();
        column_name(t->cells[c], name, sizeof name);
        cJSON_AddStringToObject(col, "name", name);
        cJSON_AddStringToObject(col, "type", column_type_name(t, c));
        cJSON_AddItemToArray(cols, col);
    }
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (int r = 1; r < t->rows; r++) {
        cJSON *row = cJSON_CreateObject();
        for (int c = 0; c < t->columns; c++) {
            column_name(t->cells[c], name, sizeof name);
            cJSON_AddItemToObject(row, name, cell_json(t, c, t->cells[(size_t)r * t->columns + c]));
        }
        cJSON_AddItemToArray(rows, row);
    }
    return o;
}

void table_print_markdown(const cli_table *t, FILE *out) {
    if (t->title[0]) fprintf(out, "## %s\n\n", t->title);
    if (t->note) fprintf(out, "%s\n\n", t->note);
    for (int r = 0; r < t->rows; r++) {
        fputc('|', out);
        for (int c = 0; c < t->columns; c++) {
            fputc(' ', out);
            for (const char *p = t->cells[(size_t)r * t->columns + c]; *p; p++) {
                if (*p == '|') fputs("\\|", out);
                else if (*p == '\n') fputc(' ', out);
                else fputc(*p, out);
            }
            fputs(" |", out);
        }
        fputc('\n', out);
        if (r == 0) {
            fputc('|', out);
            for (int c = 0; c < t->columns; c++) fputs(column_type(t, c) == 'n' ? " ---: |" : " --- |", out);
            fputc('\n', out);
        }
    }
}

void table_print(const cli_table *t, out_format format, FILE *out) {
    if (!t) return;
    if (out == stdout) report_keep_table(t);
    table_emit(t, format, out);
}

void table_emit(const cli_table *t, out_format format, FILE *out) {
    if (format == OUT_NONE) return;
    if (format == OUT_CSV) {
        for (int r = 0; r < t->rows; r++)
            for (int c = 0; c < t->columns; c++) {
                const char *cell = t->cells[(size_t)r * t->columns + c];
                bool quote = strpbrk(cell, ",\"\n") != NULL;
                if (quote) {
                    fputc('"', out);
                    for (const char *p = cell; *p; p++) fprintf(out, *p == '"' ? "\"\"" : "%c", *p);
                    fputc('"', out);
                } else {
                    fputs(cell, out);
                }
                fputc(c + 1 == t->columns ? '\n' : ',', out);
            }
        return;
    }
    if (format == OUT_JSON) {
        cJSON *o = table_to_json(t, false);
        char *text = o ? cJSON_Print(o) : NULL;
        if (text) fprintf(out, "%s\n", text);
        free(text);
        cJSON_Delete(o);
        return;
    }
    int width[64] = {0};
    for (int r = 0; r < t->rows; r++)
        for (int c = 0; c < t->columns && c < 64; c++) {
            int w = (int)strlen(t->cells[(size_t)r * t->columns + c]);
            if (w > width[c]) width[c] = w;
        }
    if (t->title[0]) fprintf(out, "%s\n", t->title);
    if (t->note) fprintf(out, "%s\n", t->note);
    for (int r = 0; r < t->rows; r++) {
        for (int c = 0; c < t->columns; c++)
            fprintf(out, c ? "  %*s" : "%-*s", c < 64 ? width[c] : 0, t->cells[(size_t)r * t->columns + c]);
        fputc('\n', out);
    }
}

void table_free(cli_table *t) {
    if (!t) return;
    for (int i = 0; i < t->rows * t->columns; i++) free(t->cells[i]);
    free(t->cells);
    free(t->types);
    free(t->title);
    free(t->id);
    free(t->note);
    free(t);
}

/* ---- timing ---- */

static int compare_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

const char *stats_cells(const time_stats *s, char *buf, size_t size) {
    if (!s || s->samples < 1) snprintf(buf, size, "\t-\t-\t-");
    else snprintf(buf, size, "\t%d\t%.2f\t%.2f", s->samples, s->min_ms * 1e3, s->max_ms * 1e3);
    return buf;
}

ptxkit_status time_median_ms(ptxkit_context *ctx, timed_fn fn, void *arg, int warmup, int reps, float *median_ms) {
    time_stats s = {0};
    ptxkit_status st = time_stats_ms(ctx, fn, arg, warmup, reps, &s);
    if (st == PTXKIT_SUCCESS) *median_ms = (float)s.median_ms;
    return st;
}

void stats_of_samples(float *times, int count, time_stats *stats) {
    qsort(times, (size_t)count, sizeof *times, compare_float);
    stats->samples = count;
    stats->min_ms = times[0];
    stats->max_ms = times[count - 1];
    stats->median_ms = count % 2 ? times[count / 2] : 0.5f * (times[count / 2 - 1] + times[count / 2]);
}

/* The function of time_turns_ms's run r: run r is of round r / n, which
 * starts at function (r / n) % n. */
static int turn_function(int r, int n) { return (r / n + r % n) % n; }

ptxkit_status time_turns_ms(ptxkit_context *ctx, int n, const timed_fn *fns, void *const *args, int warmup, int reps,
                            float *times) {
    if (n < 1 || n > 16 || reps < 1 || reps > 100000) return PTXKIT_ERROR_INVALID_ARGUMENT;
    int runs = n * reps;
    ptxkit_stream *stream = NULL;
    ptxkit_status st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &stream);
    if (st != PTXKIT_SUCCESS) return st;
    ptxkit_event **events = calloc((size_t)runs + 1, sizeof *events);
    if (!events) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    for (int i = 0; st == PTXKIT_SUCCESS && i <= runs; i++) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &events[i]);
    for (int i = 0; st == PTXKIT_SUCCESS && i < warmup * n; i++) st = fns[i % n](ctx, stream, args[i % n]);
    /* Back-to-back runs separated by events: launch gaps stay hidden behind
     * the previous run, as in a real pipeline. */
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, events[0], stream);
    for (int r = 0; st == PTXKIT_SUCCESS && r < runs; r++) {
        int f = turn_function(r, n);
        st = fns[f](ctx, stream, args[f]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, events[r + 1], stream);
    }
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(ctx, stream);
    for (int r = 0; st == PTXKIT_SUCCESS && r < runs; r++)
        st = ptxkit_event_elapsed_ms_get(ctx, events[r], events[r + 1], &times[turn_function(r, n) * reps + r / n]);
    for (int i = 0; events && i <= runs; i++) ptxkit_event_destroy(events[i]);
    free(events);
    ptxkit_stream_destroy(stream);
    return st;
}

ptxkit_status time_samples_ms(ptxkit_context *ctx, timed_fn fn, void *arg, int warmup, int reps, float *times) {
    return time_turns_ms(ctx, 1, &fn, &arg, warmup, reps, times);
}

ptxkit_status time_stats_ms(ptxkit_context *ctx, timed_fn fn, void *arg, int warmup, int reps, time_stats *stats) {
    if (reps < 1 || reps > 100000) return PTXKIT_ERROR_INVALID_ARGUMENT;
    float *times = calloc((size_t)reps, sizeof *times);
    if (!times) return PTXKIT_ERROR_OUT_OF_MEMORY;
    ptxkit_status st = time_samples_ms(ctx, fn, arg, warmup, reps, times);
    if (st == PTXKIT_SUCCESS) stats_of_samples(times, reps, stats);
    free(times);
    return st;
}

/* ---- ceilings ---- */

typedef struct copy_arg {
    ptxkit_dptr dst, src;
    size_t bytes;
} copy_arg;

static ptxkit_status run_dtod(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    copy_arg *a = arg;
    return ptxkit_memory_copy_async(ctx, a->dst, a->src, a->bytes, s);
}

ptxkit_status measure_dtod_gbs(ptxkit_context *ctx, size_t bytes, double *gbs) {
    return measure_dtod_stats(ctx, bytes, gbs, NULL);
}

ptxkit_status measure_dtod_stats(ptxkit_context *ctx, size_t bytes, double *gbs, time_stats *stats) {
    copy_arg a = {0, 0, bytes};
    ptxkit_status st = ptxkit_memory_alloc(ctx, bytes, &a.src);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &a.dst);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, a.src, bytes, 7);
    time_stats s = {0};
    if (st == PTXKIT_SUCCESS) st = time_stats_ms(ctx, run_dtod, &a, 3, 20, &s);
    if (st == PTXKIT_SUCCESS) *gbs = 2.0 * (double)bytes / (s.median_ms * 1e-3) / 1e9;
    if (st == PTXKIT_SUCCESS && stats) *stats = s;
    if (st == PTXKIT_SUCCESS) report_note_ceiling("dtod", bytes, *gbs);
    ptxkit_memory_free(ctx, a.src);
    ptxkit_memory_free(ctx, a.dst);
    return st;
}

typedef struct read_arg {
    ptxkit_kernel *fn;
    unsigned grid, block;
    ptxkit_dptr in, out;
    unsigned long long count;
} read_arg;

static ptxkit_status run_read(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    (void)ctx;
    read_arg *a = arg;
    void *args[] = {&a->in, &a->count, &a->out};
    return ptxkit_kernel_launch(a->fn, (ptxkit_dim3){a->grid, 1, 1}, (ptxkit_dim3){a->block, 1, 1}, 0, s, args);
}

/* A kernel of the lab's ceiling.cu, 512 threads a block, plain loads, and
 * the grid of a grid-stride loop. */
enum { CEILING_BLOCK = 512 };
static ptxkit_status ceiling_kernel(ptxkit_context *ctx, const char *entry, ptxkit_kernel **fn, unsigned *grid, int *block) {
    const char *defines[] = {"BLOCK_SIZE=512", "LOAD_OP=0"};
    *block = CEILING_BLOCK;
    ptxkit_status st = lab_kernel_get(ctx, "ceiling.cu", entry, defines, 2, fn);
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_grid_size_get(*fn, CEILING_BLOCK, 0, 0, grid);
    return st;
}

ptxkit_status measure_read_gbs_in(ptxkit_context *ctx, ptxkit_dptr in, size_t bytes, ptxkit_dptr out, double *gbs) {
    read_arg a = {.in = in, .out = out, .count = bytes / 16};
    int block;
    ptxkit_status st = ceiling_kernel(ctx, "ptxkit_read_stream", &a.fn, &a.grid, &block);
    a.block = (unsigned)block;
    float ms = 0;
    if (st == PTXKIT_SUCCESS) st = time_median_ms(ctx, run_read, &a, 3, 20, &ms);
    if (st == PTXKIT_SUCCESS) *gbs = (double)(a.count * 16) / (ms * 1e-3) / 1e9;
    if (st == PTXKIT_SUCCESS) report_note_ceiling("read", (size_t)a.count * 16, *gbs);
    return st;
}

ptxkit_status measure_read_gbs(ptxkit_context *ctx, size_t bytes, double *gbs) {
    ptxkit_dptr in = 0, out = 0;
    ptxkit_status st = ptxkit_memory_alloc(ctx, bytes, &in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, 16, &out);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, in, bytes, 11);
    if (st == PTXKIT_SUCCESS) st = measure_read_gbs_in(ctx, in, bytes, out, gbs);
    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, out);
    return st;
}

ptxkit_status fill_random_words(ptxkit_context *ctx, ptxkit_dptr dst, size_t bytes, uint32_t seed) {
    ptxkit_kernel *fn;
    unsigned grid;
    int block;
    ptxkit_status st = ceiling_kernel(ctx, "ptxkit_fill_random", &fn, &grid, &block);
    if (st != PTXKIT_SUCCESS) return st;
    unsigned long long count = bytes / 4;
    void *args[] = {&dst, &count, &seed};
    st = ptxkit_kernel_launch(fn, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS && bytes % 4) st = ptxkit_memory_set8_async(ctx, dst + count * 4, 0xA5, bytes % 4, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    return st;
}

const ptxkit_device_info *cli_device(ptxkit_context *ctx) {
    static _Thread_local ptxkit_device_info info;
    if (ptxkit_device_info_get(ctx, &info) != PTXKIT_SUCCESS) memset(&info, 0, sizeof info);
    return &info;
}

double cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A regular file only: a helper is run or dlopen'ed, and dlopen opens a
 * FIFO blocking, forever (stat itself never blocks). */
bool cli_regular_file(const char *path) {
    struct stat st;
    return path && path[0] && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool executable_file(const char *path) { return cli_regular_file(path) && access(path, X_OK) == 0; }

bool cli_find_helper(const char *name, const char *env_var, char *path, size_t size) {
    const char *env = getenv(env_var);
    if (env && env[0]) {
        snprintf(path, size, "%s", env);
        return executable_file(path);
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return false;
    self[len] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = 0;
    static const char *const places[] = {"%s/%s", "%s/../bench/%s"};
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        int n = snprintf(path, size, places[i], self, name);
        if (n > 0 && (size_t)n < size && executable_file(path)) return true;
    }
#ifdef PTXKIT_LIBEXEC_DIR /* installed: a helper, not a command, so not in bin/ */
    int installed = snprintf(path, size, "%s/%s", PTXKIT_LIBEXEC_DIR, name);
    if (installed > 0 && (size_t)installed < size && executable_file(path)) return true;
#endif
    return false;
}

void cli_join_names(char *out, size_t size, const bool *flags, int count, const char *(*name_of)(int)) {
    out[0] = 0;
    for (int i = 0; i < count; i++)
        if (flags[i]) snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? "," : "", name_of(i));
}

ptxkit_status ceiling_for(ptxkit_context *ctx, ceiling_cache *c, size_t bytes, double *gbs) {
    for (int i = 0; i < c->count; i++)
        if (c->bytes[i] == bytes) {
            *gbs = c->gbs[i];
            return PTXKIT_SUCCESS;
        }
    ptxkit_status st = c->measure(ctx, bytes, gbs);
    if (st == PTXKIT_SUCCESS && c->count < (int)(sizeof c->bytes / sizeof c->bytes[0])) {
        c->bytes[c->count] = bytes;
        c->gbs[c->count++] = *gbs;
    }
    return st;
}

const ptxkit_config *cli_launch_config(const cli_launch *o, const char *items_name, ptxkit_config *out) {
    memset(out, 0, sizeof *out);
    if (o->path) ptxkit_config_set(out, "path", o->path);
    if (o->load_op) ptxkit_config_set(out, "load_op", o->load_op);
    if (o->block_size) ptxkit_config_set(out, "block_size", o->block_size);
    if (o->vector_bytes) ptxkit_config_set(out, "vector_bytes", o->vector_bytes);
    /* a name the op does not read is its error to report: pass it on */
    if (o->items_per_thread) ptxkit_config_set(out, items_name ? items_name : "items_per_thread", o->items_per_thread);
    if (o->blocks_per_sm) ptxkit_config_set(out, "blocks_per_sm", o->blocks_per_sm);
    return out;
}

const char *config_source(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                          const ptxkit_config *config) {
    int tuned = 0;
    if (ptxkit_tune_source_get(ctx, family, variant, n, config, &tuned) != PTXKIT_SUCCESS) tuned = 0;
    return tuned ? "tuned" : "default";
}
