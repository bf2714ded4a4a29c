/* The benchmarks' one harness (bench_harness.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_harness.h"

bool bench_begin(bench *b, const char *command, const cli_common *common, int warmup, int reps, int arch,
                 const char *what, ptxkit_device_info *dev) {
    memset(b, 0, sizeof *b);
    b->command = command;
    b->format = common->format;
    b->svg_path = common->svg_path;
    b->warmup = warmup;
    b->reps = reps;
    b->rate_unit = 1e9;
    if (arch > 0) {
        ptxkit_device_info info;
        b->ctx = cli_open_context_at_least(command, common->device, arch, what, dev ? dev : &info);
    } else {
        b->ctx = cli_open_context(command, common->device);
        if (b->ctx && dev) ptxkit_device_info_get(b->ctx, dev);
    }
    return b->ctx != NULL;
}

void bench_table(bench *b, const char *title, const bench_column *columns, int count) {
    const char *headers[BENCH_MAX_COLUMNS + 2];
    char types[BENCH_MAX_COLUMNS + 3];
    int n = 0;
    b->column_count = 0;
    for (int i = 0; i < count && b->column_count < BENCH_MAX_COLUMNS; i++) {
        if (!columns[i].header) continue;
        b->columns[b->column_count++] = columns[i];
        if (columns[i].cell == BENCH_STATS) {
            static const char *const stats[] = {STATS_COLUMNS};
            for (int s = 0; s < 3; s++, n++) headers[n] = stats[s], types[n] = 'n';
        } else {
            headers[n] = columns[i].header;
            types[n++] = columns[i].cell == BENCH_TEXT && columns[i].format ? columns[i].format[0] : 'n';
        }
    }
    types[n] = 0;
    b->table = table_new(title, n, headers);
    table_types(b->table, types);
}

double bench_rate(const bench *b, double work, const time_stats *ts) {
    return work / (ts->median_ms * 1e-3) / b->rate_unit;
}

/* One run after another, each between two events and waited for, on the
 * bench's stream. */
static ptxkit_status time_each_synced(bench *b, timed_fn run, void *arg, float *samples) {
    ptxkit_event *ev[2] = {NULL, NULL};
    ptxkit_status st = ptxkit_event_create(b->ctx, PTXKIT_EVENT_DEFAULT, &ev[0]);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(b->ctx, PTXKIT_EVENT_DEFAULT, &ev[1]);
    for (int i = 0; i < b->warmup && st == PTXKIT_SUCCESS; i++) st = run(b->ctx, b->stream, arg);
    for (int r = 0; r < b->reps && st == PTXKIT_SUCCESS; r++) {
        st = ptxkit_event_record(b->ctx, ev[0], b->stream);
        if (st == PTXKIT_SUCCESS) st = run(b->ctx, b->stream, arg);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(b->ctx, ev[1], b->stream);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_synchronize(b->ctx, ev[1]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms_get(b->ctx, ev[0], ev[1], &samples[r]);
    }
    ptxkit_event_destroy(ev[0]);
    ptxkit_event_destroy(ev[1]);
    return st;
}

ptxkit_status bench_time(bench *b, timed_fn run, void *arg, float *samples) {
    if (b->timing == BENCH_EACH_SYNCED) return time_each_synced(b, run, arg, samples);
    return time_samples_ms(b->ctx, run, arg, b->warmup, b->reps, samples);
}

ptxkit_status bench_measure(bench *b, ptxkit_status st, const bench_case *c, bench_result *out) {
    *out = (bench_result){.ceiling = c->ceiling};
    if (st != PTXKIT_SUCCESS) return st;
    float *samples = b->reps >= 1 ? calloc((size_t)b->reps, sizeof *samples) : NULL;
    if (!samples) return b->reps >= 1 ? PTXKIT_ERROR_OUT_OF_MEMORY : PTXKIT_ERROR_INVALID_ARGUMENT;
    if (c->setup) st = c->setup(b, c->arg);
    ptxkit_status ran = PTXKIT_SUCCESS;
    if (st == PTXKIT_SUCCESS) {
        ran = c->time ? c->time(b, c, samples) : bench_time(b, c->run, c->arg, samples);
        if (ran == PTXKIT_SUCCESS) {
            stats_of_samples(samples, b->reps, &out->ts);
            out->timed = true;
            out->rate = bench_rate(b, c->work, &out->ts);
        } else if (!c->row_on_failure) {
            st = ran;
        }
    }
    free(samples);
    if (st == PTXKIT_SUCCESS && c->teardown) st = c->teardown(b, c->arg, out);
    out->complete = st == PTXKIT_SUCCESS;
    return st == PTXKIT_SUCCESS ? ran : st;
}

ptxkit_status bench_run(bench *b, ptxkit_status st, const bench_case *c, bench_result *out) {
    bench_result r;
    st = bench_measure(b, st, c, &r);
    if (r.complete) bench_row(b, c->key, &r);
    if (out) *out = r;
    return st;
}

/* The next tab-separated cell of *p, copied into out. */
static void next_cell(const char **p, char *out, size_t size) {
    const char *s = *p ? *p : "", *tab = strchr(s, '\t');
    size_t len = tab ? (size_t)(tab - s) : strlen(s);
    snprintf(out, size, "%.*s", (int)len, s);
    *p = tab ? tab + 1 : NULL;
}

void bench_row(bench *b, const char *key, const bench_result *r) {
    char text[1024], line[4096] = "", cell[512];
    snprintf(text, sizeof text, "%s%s%s", key ? key : "", key && key[0] && r->cells[0] ? "\t" : "", r->cells);
    const char *p = text;
    bool ceiling = r->ceiling > 0;
    for (int i = 0; i < b->column_count; i++) {
        const bench_column *col = &b->columns[i];
        const char *missing = col->missing ? col->missing : "-";
        double value = 0;
        bool number = r->timed;
        switch (col->cell) {
        case BENCH_TEXT: next_cell(&p, cell, sizeof cell); number = false; break;
        case BENCH_TIME_US: value = r->ts.median_ms * 1e3; break;
        case BENCH_TIME_MS: value = r->ts.median_ms; break;
        case BENCH_RATE: value = r->rate; break;
        case BENCH_CEILING: value = r->ceiling; break;
        case BENCH_PERCENT: value = 100.0 * r->rate / r->ceiling; break;
        case BENCH_STATS: number = false; break;
        }
        if (col->cell == BENCH_STATS) {
            /* stats_cells' cells start with their tab */
            stats_cells(r->timed ? &r->ts : NULL, cell, sizeof cell);
            snprintf(line + strlen(line), sizeof line - strlen(line), "%s", i ? cell : cell + 1);
            continue;
        }
        if (number && (col->cell == BENCH_CEILING || col->cell == BENCH_PERCENT) && !ceiling)
            snprintf(cell, sizeof cell, "%s", missing);
        else if (number)
            snprintf(cell, sizeof cell, col->format, value);
        else if (col->cell != BENCH_TEXT)
            snprintf(cell, sizeof cell, "-");
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", i ? "\t" : "", cell);
    }
    table_addf(b->table, "%s", line);
}

int bench_print(bench *b, ptxkit_status st) {
    if (st != PTXKIT_SUCCESS) cli_fail(b->command, b->ctx, st);
    table_print(b->table, b->format, stdout);
    table_free(b->table);
    b->table = NULL;
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
