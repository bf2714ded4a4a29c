/* Shared pieces of the ptxkit command. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "runtime/runtime.h"

bool cli_is_tty(void) { return isatty(STDOUT_FILENO) != 0; }

static bool common_usage_error(void) {
    fprintf(stderr, "usage: ptxkit COMMAND [--device N] [--csv|--json] [--svg FILE] [OPTIONS]"
                    " (ptxkit COMMAND --help describes a command's options)\n");
    return false;
}

bool cli_parse_common(int *argc, char **argv, cli_common *common) {
    common->device = 0;
    common->format = OUT_TABLE;
    common->svg_path = NULL;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--csv") == 0) {
            common->format = OUT_CSV;
        } else if (strcmp(a, "--json") == 0) {
            common->format = OUT_JSON;
        } else if (strcmp(a, "--device") == 0 || strcmp(a, "--svg") == 0) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "ptxkit: %s needs a value\n", a);
                return common_usage_error();
            }
            if (a[2] == 'd') {
                char *end;
                long d = strtol(argv[++i], &end, 10);
                if (*end || d < 0 || d > 1024) {
                    fprintf(stderr, "ptxkit: --device takes a GPU number, not '%s'\n", argv[i]);
                    return common_usage_error();
                }
                common->device = (int)d;
            } else {
                common->svg_path = argv[++i];
            }
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = NULL;
    return true;
}

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
    ptxkit_status st = ptxkit_context_open(device, &ctx);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit %s: no usable GPU: %s\n", command, ptxkit_last_error(NULL));
        return NULL;
    }
    return ctx;
}

void cli_fail(const char *command, ptxkit_context *ctx, ptxkit_status st) {
    fprintf(stderr, "ptxkit %s: %s: %s\n", command, ptxkit_status_string(st), ptxkit_last_error(ctx));
}

/* ---- tables ---- */

struct cli_table {
    char *title;
    int columns, rows, capacity;
    char **cells; /* rows x columns, row 0 the headers */
};

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

static bool is_number(const char *s) {
    if (!*s) return false;
    char *end;
    strtod(s, &end);
    return *end == 0;
}

static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(out, "\\u%04x", *s);
        else fputc(*s, out);
    }
    fputc('"', out);
}

void table_print(const cli_table *t, out_format format, FILE *out) {
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
        fprintf(out, "{\"title\": ");
        json_string(out, t->title);
        fprintf(out, ", \"rows\": [");
        for (int r = 1; r < t->rows; r++) {
            fprintf(out, "%s\n  {", r > 1 ? "," : "");
            for (int c = 0; c < t->columns; c++) {
                const char *cell = t->cells[(size_t)r * t->columns + c];
                json_string(out, t->cells[c]);
                fputs(": ", out);
                if (is_number(cell)) fputs(cell, out);
                else json_string(out, cell);
                if (c + 1 < t->columns) fputs(", ", out);
            }
            fputc('}', out);
        }
        fprintf(out, "\n]}\n");
        return;
    }
    int width[64] = {0};
    for (int r = 0; r < t->rows; r++)
        for (int c = 0; c < t->columns && c < 64; c++) {
            int w = (int)strlen(t->cells[(size_t)r * t->columns + c]);
            if (w > width[c]) width[c] = w;
        }
    if (t->title[0]) fprintf(out, "%s\n", t->title);
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
    free(t->title);
    free(t);
}

/* ---- timing ---- */

static int compare_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

ptxkit_status time_median_ms(ptxkit_context *ctx, timed_fn fn, void *arg, int warmup, int reps, float *median_ms) {
    if (reps < 1 || reps > 100000) return PTXKIT_ERROR_INVALID_ARGUMENT;
    ptxkit_stream *stream = NULL;
    ptxkit_status st = ptxkit_stream_create(ctx, &stream);
    if (st != PTXKIT_SUCCESS) return st;
    float *times = calloc((size_t)reps, sizeof *times);
    ptxkit_event **events = calloc((size_t)reps + 1, sizeof *events);
    if (!times || !events) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    for (int i = 0; st == PTXKIT_SUCCESS && i <= reps; i++) st = ptxkit_event_create(ctx, &events[i]);
    for (int i = 0; st == PTXKIT_SUCCESS && i < warmup; i++) st = fn(ctx, stream, arg);
    /* Back-to-back runs separated by events: launch gaps stay hidden behind
     * the previous run, as in a real pipeline. */
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, events[0], stream);
    for (int i = 0; st == PTXKIT_SUCCESS && i < reps; i++) {
        st = fn(ctx, stream, arg);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, events[i + 1], stream);
    }
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(ctx, stream);
    for (int i = 0; st == PTXKIT_SUCCESS && i < reps; i++) st = ptxkit_event_elapsed_ms(ctx, events[i], events[i + 1], &times[i]);
    if (st == PTXKIT_SUCCESS) {
        qsort(times, (size_t)reps, sizeof *times, compare_float);
        *median_ms = reps % 2 ? times[reps / 2] : 0.5f * (times[reps / 2 - 1] + times[reps / 2]);
    }
    for (int i = 0; events && i <= reps; i++) ptxkit_event_destroy(ctx, events[i]);
    free(events);
    free(times);
    ptxkit_stream_destroy(ctx, stream);
    return st;
}

/* ---- ceilings ---- */

typedef struct copy_arg {
    ptxkit_dptr dst, src;
    size_t bytes;
} copy_arg;

static ptxkit_status run_dtod(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    copy_arg *a = arg;
    return ptxkit_memcpy_dtod_async(ctx, a->dst, a->src, a->bytes, s);
}

ptxkit_status measure_dtod_gbs(ptxkit_context *ctx, size_t bytes, double *gbs) {
    copy_arg a = {0, 0, bytes};
    ptxkit_status st = ptxkit_malloc(ctx, bytes, &a.src);
    if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, bytes, &a.dst);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, a.src, bytes, 7);
    float ms = 0;
    if (st == PTXKIT_SUCCESS) st = time_median_ms(ctx, run_dtod, &a, 3, 20, &ms);
    if (st == PTXKIT_SUCCESS) *gbs = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
    ptxkit_free(ctx, a.src);
    ptxkit_free(ctx, a.dst);
    return st;
}

typedef struct read_arg {
    CUfunction fn;
    unsigned grid, block;
    ptxkit_dptr in, out;
    unsigned long long count;
} read_arg;

static ptxkit_status run_read(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    read_arg *a = arg;
    void *args[] = {&a->in, &a->count, &a->out};
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    st = launch_kernel(ctx, a->fn, a->grid, 1, 1, a->block, 1, 1, 0, s, args);
    context_leave(ctx);
    return st;
}

static ptxkit_status ceiling_kernel(ptxkit_context *ctx, const char *entry, CUfunction *fn, unsigned *grid, int *block) {
    ptxkit_launch_options o = {.path = PTXKIT_PATH_AUTO};
    kernel_spec spec = {.family = "ceiling", .entry = entry};
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    st = family_kernel_get(ctx, &o, &spec, 512, fn, block);
    if (st == PTXKIT_SUCCESS) st = grid_size_for(ctx, *fn, *block, 0, 0, 0, grid);
    context_leave(ctx);
    return st;
}

ptxkit_status measure_read_gbs(ptxkit_context *ctx, size_t bytes, double *gbs) {
    read_arg a = {.count = bytes / 16};
    int block;
    ptxkit_status st = ceiling_kernel(ctx, "ptxkit_read_stream", &a.fn, &a.grid, &block);
    a.block = (unsigned)block;
    if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, bytes, &a.in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, 16, &a.out);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, a.in, bytes, 11);
    float ms = 0;
    if (st == PTXKIT_SUCCESS) st = time_median_ms(ctx, run_read, &a, 3, 20, &ms);
    if (st == PTXKIT_SUCCESS) *gbs = (double)(a.count * 16) / (ms * 1e-3) / 1e9;
    ptxkit_free(ctx, a.in);
    ptxkit_free(ctx, a.out);
    return st;
}

ptxkit_status fill_random_words(ptxkit_context *ctx, ptxkit_dptr dst, size_t bytes, uint32_t seed) {
    CUfunction fn;
    unsigned grid;
    int block;
    ptxkit_status st = ceiling_kernel(ctx, "ptxkit_fill_random", &fn, &grid, &block);
    if (st != PTXKIT_SUCCESS) return st;
    unsigned long long count = bytes / 4;
    void *args[] = {&dst, &count, &seed};
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    st = launch_kernel(ctx, fn, grid, 1, 1, (unsigned)block, 1, 1, 0, NULL, args);
    context_leave(ctx);
    if (st == PTXKIT_SUCCESS && bytes % 4) st = ptxkit_memset8(ctx, dst + count * 4, 0xA5, bytes % 4, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_synchronize(ctx);
    return st;
}
