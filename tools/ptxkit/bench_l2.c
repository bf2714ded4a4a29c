/* ptxkit bench l2: L2 persistence through the public L2 residency calls.
 *
 * Random updates (the lecture's experiment): even threads atomically add 1
 * to random words of a hot array of 0.25 x L2, odd threads to a cold array
 * of 4 x L2, with the hot array in a persisting access policy window of
 * the stream (misses streaming), for set-asides from 0 to the maximum and
 * hit ratios from 0.25 to 1, against no window. Reports time, updates as
 * bytes (4 read + 4 written each) per second and their share of the
 * datasheet bandwidth, and the speedup; checks that every update landed.
 *
 * Producer -> consumer: the producer writes an array P while copying an
 * unrelated 2 x L2 array (which evicts P from ordinary L2); the consumer
 * sums P. P in a persisting window of the producer's launch (and of the
 * consumer's; with the maximum set-aside, and with a set-aside of just P)
 * against no window, for P half the maximum set-aside and twice it. Kernels: lab/kernels/l2_lab.cu through the public API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "cli.h"
#include "lab.h"
#include "commands.h"
#include "args.h"
#include "bench_harness.h"
#include "svg.h"

enum { ITERS = 64, BLOCK = 256, MAX_POINTS = 64 };

static const char usage_text[] =
    "usage: ptxkit bench l2 [--reps N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--svg FILE] [--device N]\n";
static const char help_text[] =
    "L2 persistence (sm_80+, not in MIG or under MPS). Random atomic updates, even threads on a hot array\n"
    "of 0.25 x L2 in a persisting window (hit ratios 0.25, 0.5, 0.75, 1; misses streaming), odd threads\n"
    "on a cold array of 4 x L2, for set-asides of 0, 1/4, 1/2, 3/4 and all of the maximum, against no\n"
    "window; then a producer -> consumer pair where the producer's output P persists for the consumer\n"
    "while the producer also streams a 2 x L2 copy, for P of half and twice the maximum set-aside.\n"
    "Medians of --reps runs (default 9), with their count, fastest and slowest. The set-aside is\n"
    "restored and persisting lines reset at the end.\n";

typedef struct updates_run {
    ptxkit_kernel *k;
    unsigned grid;
    ptxkit_dptr hot, cold;
    unsigned hot_words, cold_words, salt;
} updates_run;

static ptxkit_status launch_updates(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    (void)ctx;
    updates_run *r = arg;
    r->salt += 0x9e3779b9u; /* other addresses each run */
    void *args[] = {&r->hot, &r->hot_words, &r->cold, &r->cold_words, &r->salt};
    return ptxkit_kernel_launch(r->k, (ptxkit_dim3){r->grid, 1, 1}, (ptxkit_dim3){BLOCK, 1, 1}, 0, s, args);
}

/* One updates row: its set-aside and window, the arrays' totals before
 * and after (each launch adds a known amount), and the baseline's time. */
typedef struct updates_row {
    updates_run u; /* first: the row is launch_updates' argument too */
    ptxkit_stream *stream;
    int config, reps; /* config -1: no window, no set-aside */
    size_t set_aside;
    ptxkit_access_window window;
    double updates, base_ms, (*speedup)[4];
    uint32_t before[2];
    int wrong;
} updates_row;

static ptxkit_status array_total(ptxkit_context *ctx, ptxkit_dptr a, size_t words, uint32_t *total);

static ptxkit_status updates_setup(bench *h, void *arg) {
    updates_row *row = arg;
    ptxkit_status st = ptxkit_l2_persisting_reset(h->ctx);
    if (st == PTXKIT_SUCCESS) st = ptxkit_l2_persisting_set(h->ctx, row->set_aside, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_access_window_set(h->ctx, row->stream, row->config < 0 ? NULL : &row->window);
    if (st == PTXKIT_SUCCESS) st = array_total(h->ctx, row->u.hot, row->u.hot_words, &row->before[0]);
    if (st == PTXKIT_SUCCESS) st = array_total(h->ctx, row->u.cold, row->u.cold_words, &row->before[1]);
    return st;
}

static ptxkit_status updates_cells(bench *h, void *arg, bench_result *out) {
    updates_row *row = arg;
    uint32_t after[2] = {0, 0};
    ptxkit_status st = array_total(h->ctx, row->u.hot, row->u.hot_words, &after[0]);
    if (st == PTXKIT_SUCCESS) st = array_total(h->ctx, row->u.cold, row->u.cold_words, &after[1]);
    if (st != PTXKIT_SUCCESS) return st;
    /* reps + 1 launches, half the threads on each array (mod 2^32) */
    uint32_t per_array = (uint32_t)((uint64_t)(row->reps + 1) * (uint64_t)(row->updates / 2));
    bool ok = after[0] - row->before[0] == per_array && after[1] - row->before[1] == per_array;
    row->wrong += !ok;
    double ms = out->ts.median_ms;
    if (row->config < 0) row->base_ms = ms;
    else row->speedup[row->config / 4][row->config % 4] = row->base_ms / ms;
    snprintf(out->cells, sizeof out->cells, "%.2f\t%s", row->base_ms / ms, ok ? "ok" : "WRONG");
    return PTXKIT_SUCCESS;
}

typedef struct pair_run {
    ptxkit_context *ctx;
    ptxkit_kernel *produce, *consume;
    unsigned grid;
    ptxkit_dptr p, big_in, big_out, sum;
    unsigned long long p_words, big_vecs;
    const ptxkit_launch_attributes *produce_attr, *consume_attr;
    ptxkit_event *mid;     /* recorded between producer and consumer */
    ptxkit_event *start;
    float consumer_ms_sum;
    int launches;
} pair_run;

static ptxkit_status launch_pair(void *arg, ptxkit_stream *s) {
    pair_run *r = arg;
    void *pargs[] = {&r->p, &r->p_words, &r->big_in, &r->big_out, &r->big_vecs};
    unsigned long long vecs = r->p_words / 4;
    void *cargs[] = {&r->p, &vecs, &r->sum};
    ptxkit_status st = ptxkit_kernel_launch_ex(r->produce, (ptxkit_dim3){r->grid, 1, 1}, (ptxkit_dim3){BLOCK, 1, 1}, 0, s, pargs, NULL, 0,
                                        r->produce_attr);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(r->ctx, r->mid, s);
    if (st == PTXKIT_SUCCESS)
        st = ptxkit_kernel_launch_ex(r->consume, (ptxkit_dim3){r->grid, 1, 1}, (ptxkit_dim3){BLOCK, 1, 1}, 0, s, cargs, NULL, 0,
                              r->consume_attr);
    r->launches++;
    return st;
}

static uint32_t mix(uint32_t x) {
    x *= 0x9e3779b1u;
    x ^= x >> 15;
    x *= 0x85ebca77u;
    x ^= x >> 13;
    return x;
}

static ptxkit_status array_total(ptxkit_context *ctx, ptxkit_dptr a, size_t words, uint32_t *total) {
    return ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, total, a, words, NULL);
}

static int write_svg(const char *path, const char *gpu, double setasides[5], double ratios[4], double speedup[5][4],
                     double base_ms) {
    static char names[5][40];
    svg_series series[5];
    for (int s = 0; s < 5; s++) {
        snprintf(names[s], sizeof names[s], "set-aside %.1f MiB", setasides[s] / 1048576.0);
        series[s] = (svg_series){.name = names[s], .x = ratios, .y = speedup[s], .count = 4};
    }
    svg_reference ref = {.label = "no window", .y = 1.0};
    svg_chart chart = {.kind = SVG_LINES, .title = "random updates: hot 0.25 x L2 persisting, cold 4 x L2",
                       .x_label = "hit ratio of the hot array's window", .y_label = "speedup over no window",
                       .series = series, .series_count = 5, .references = &ref, .reference_count = 1};
    char title[300], subtitle[200];
    snprintf(title, sizeof title, "L2 persistence on %s", gpu);
    snprintf(subtitle, sizeof subtitle, "no window: %.3f ms per launch; median of the timed launches", base_ms);
    if (svg_save_figure(path, title, subtitle, &chart, 1) != 0) {
        fprintf(stderr, "ptxkit bench l2: cannot write %s\n", path);
        return 1;
    }
    fprintf(stderr, "ptxkit bench l2: chart written to %s\n", path);
    return 0;
}

int bench_l2(int argc, char **argv) {
    static const char cmd[] = "bench l2";
    int reps = 9;
    const arg_option options[] = {{.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 1001}, {0}};
    const arg_spec spec = {.command = cmd, .usage = usage_text, .help = help_text,
                           .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG, .options = options};
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    bench h;
    ptxkit_device_info dev;
    if (!bench_begin(&h, cmd, &common, 1, reps, 0, NULL, &dev)) return 1;
    ptxkit_context *ctx = h.ctx;
    size_t original = 0, max = 0;
    ptxkit_status st = ptxkit_l2_persisting_get(ctx, &original, &max);
    if (st != PTXKIT_SUCCESS) {
        cli_fail(cmd, ctx, st);
        ptxkit_context_destroy(ctx);
        return 1;
    }
    size_t l2 = (size_t)dev.l2_bytes, window_max = (size_t)dev.access_window_max_bytes;
    unsigned hot_words = (unsigned)(l2 / 4 / 4), cold_words = (unsigned)(l2 * 4 / 4);
    ptxkit_dptr hot = 0, cold = 0;
    ptxkit_program *program = NULL;
    ptxkit_stream *stream = NULL;
    updates_run u = {.hot_words = hot_words, .cold_words = cold_words, .grid = (unsigned)dev.sm_count * 8};
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, (size_t)hot_words * 4, &hot);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, (size_t)cold_words * 4, &cold);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_set32_async(ctx, hot, 0, hot_words, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_set32_async(ctx, cold, 0, cold_words, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &stream);
    if (st == PTXKIT_SUCCESS) st = lab_program_create("l2_lab.cu", &program);
    char iters[32];
    snprintf(iters, sizeof iters, "ITERS=%d", ITERS);
    const char *defines[] = {iters};
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_kernel_get(ctx, program, "l2_updates", defines, 1, &u.k);
    u.hot = hot;
    u.cold = cold;
    double updates = (double)u.grid * BLOCK * ITERS;

    char title[400];
    snprintf(title, sizeof title,
             "random updates on %s: hot %.1f MiB (0.25 x L2) in the window, cold %.0f MiB (4 x L2); %.0fM atomic "
             "updates per launch; max set-aside %.1f MiB; median of %d",
             dev.name, hot_words * 4.0 / 1048576, cold_words * 4.0 / 1048576, updates / 1e6, max / 1048576.0, reps);
    const bench_column columns[] = {
        COL_TEXT("set_aside_mib", "n"), COL_TEXT("hit_ratio", "n"), COL_TEXT("window", "s"), COL("ms", BENCH_TIME_MS, "%.3f"),
        COL("update_GBps", BENCH_RATE, "%.0f"), COL("pct_of_peak", BENCH_PERCENT, "%.1f"), COL_TEXT("speedup", "n"),
        COL_TEXT("check", "s"), COL_STATS};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    h.timing = BENCH_EACH_SYNCED; /* on the stream whose window is set */
    h.stream = stream;
    double setasides[5] = {0, max / 4.0, max / 2.0, 3.0 * max / 4.0, (double)max}, ratios[4] = {0.25, 0.5, 0.75, 1.0};
    double speedup[5][4];
    updates_row row = {.u = u, .stream = stream, .reps = reps, .updates = updates, .speedup = speedup};
    /* config -1: no window, no set-aside (the baseline); then each set-aside x ratio */
    for (int c = -1; c < 20 && st == PTXKIT_SUCCESS; c++) {
        int s = c < 0 ? 0 : c / 4, r = c < 0 ? 0 : c % 4;
        row.config = c;
        row.set_aside = c < 0 ? 0 : (size_t)setasides[s];
        row.window = (ptxkit_access_window){
            .base = hot, .bytes = (size_t)hot_words * 4 < window_max ? (size_t)hot_words * 4 : window_max,
            .hit_ratio = (float)ratios[r], .hit_property = PTXKIT_ACCESS_PERSISTING,
            .miss_property = PTXKIT_ACCESS_STREAMING};
        char key[96];
        snprintf(key, sizeof key, "%.1f\t%.2f\t%s", row.set_aside / 1048576.0, c < 0 ? 0.0 : ratios[r],
                 c < 0 ? "none" : "stream");
        bench_case run = {.key = key, .setup = updates_setup, .run = launch_updates, .teardown = updates_cells,
                          .arg = &row, .work = updates * 8.0, .ceiling = dev.peak_bandwidth_gbs};
        st = bench_run(&h, st, &run, NULL);
    }
    double base_ms = row.base_ms;
    int wrong = row.wrong;
    if (stream) ptxkit_stream_access_window_set(ctx, stream, NULL);
    ptxkit_memory_free(ctx, hot);
    ptxkit_memory_free(ctx, cold);

    /* ---- producer -> consumer ---- */
    snprintf(title, sizeof title,
             "producer -> consumer on %s: the producer writes P and copies a %.0f MiB array; the consumer sums P "
             "(median of %d)", dev.name, 2.0 * l2 / 1048576, reps);
    const char *pheaders[] = {"p_mib", "windows", "set_aside_mib", "hit_ratio", "consumer_ms", "pair_ms",
                              "consumer_speedup", "pair_speedup", "check", STATS_COLUMNS};
    cli_table *ptab = table_new(title, 12, pheaders);
    table_id(ptab, "bench_l2_pairs");
    table_types(ptab, "nsnnnnnns" STATS_TYPES);
    pair_run pr = {.ctx = ctx, .grid = (unsigned)dev.sm_count * 8};
    pr.big_vecs = 2 * l2 / 16;
    size_t p_sizes[2] = {max / 2, 2 * max};
    p_sizes[0] -= p_sizes[0] % 16;
    p_sizes[1] -= p_sizes[1] % 16;
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_kernel_get(ctx, program, "l2_produce", NULL, 0, &pr.produce);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_kernel_get(ctx, program, "l2_consume", NULL, 0, &pr.consume);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, pr.big_vecs * 16, &pr.big_in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, pr.big_vecs * 16, &pr.big_out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, p_sizes[1], &pr.p);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, 4, &pr.sum);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, pr.big_in, pr.big_vecs * 16, 0x12);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &pr.mid);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &pr.start);
    for (int ps = 0; ps < 2 && st == PTXKIT_SUCCESS; ps++) {
        pr.p_words = p_sizes[ps] / 4;
        uint32_t p_sum = 0;
        for (unsigned long long i = 0; i < pr.p_words; i++) p_sum += mix((uint32_t)i);
        double base_consumer = 0, base_pair = 0;
        /* modes: no window; the producer's launch with P persisting, set-aside the maximum; the producer's
         * and the consumer's; the producer's with a set-aside of just P (where P fits) */
        for (int mode = 0; mode < 4 && st == PTXKIT_SUCCESS; mode++) {
            if (mode == 3 && p_sizes[ps] >= max) continue;
            size_t set_aside = mode == 0 ? 0 : mode == 3 ? p_sizes[ps] : max;
            float ratio = mode == 0 ? 0.0f : (float)fmin(1.0, (double)set_aside / (double)p_sizes[ps]);
            ptxkit_access_window w = {.base = pr.p, .bytes = p_sizes[ps] < window_max ? p_sizes[ps] : window_max,
                                      .hit_ratio = ratio, .hit_property = PTXKIT_ACCESS_PERSISTING,
                                      .miss_property = PTXKIT_ACCESS_STREAMING};
            ptxkit_launch_attributes with = {.access_window = &w};
            pr.produce_attr = mode >= 1 ? &with : NULL;
            pr.consume_attr = mode == 2 ? &with : NULL;
            st = ptxkit_l2_persisting_reset(ctx);
            if (st == PTXKIT_SUCCESS) st = ptxkit_l2_persisting_set(ctx, set_aside, NULL);
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_set32_async(ctx, pr.sum, 0, 1, stream);
            pr.launches = 0;
            /* the pair from start to end, the consumer from the event between */
            double pair_ms = 0, consumer_ms = 0;
            time_stats pair_ts = {0}, cons_ts = {0};
            float *cons = calloc((size_t)reps, sizeof *cons), *pairs = calloc((size_t)reps, sizeof *pairs);
            if (!cons || !pairs) st = PTXKIT_ERROR_OUT_OF_MEMORY;
            if (st == PTXKIT_SUCCESS) st = launch_pair(&pr, stream); /* warm-up */
            for (int r = 0; r < reps && st == PTXKIT_SUCCESS; r++) {
                ptxkit_event *end = NULL;
                st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &end);
                if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, pr.start, stream);
                if (st == PTXKIT_SUCCESS) st = launch_pair(&pr, stream);
                if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, end, stream);
                if (st == PTXKIT_SUCCESS) st = ptxkit_event_synchronize(ctx, end);
                if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms_get(ctx, pr.start, end, &pairs[r]);
                if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms_get(ctx, pr.mid, end, &cons[r]);
                ptxkit_event_destroy(end);
            }
            if (st == PTXKIT_SUCCESS) {
                stats_of_samples(cons, reps, &cons_ts);
                stats_of_samples(pairs, reps, &pair_ts);
                consumer_ms = cons_ts.median_ms;
                pair_ms = pair_ts.median_ms;
            }
            free(cons);
            free(pairs);
            uint32_t got = 0;
            if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(ctx, stream);
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, &got, pr.sum, 4);
            if (st != PTXKIT_SUCCESS) break;
            bool ok = got == (uint32_t)((uint64_t)p_sum * (uint64_t)pr.launches);
            wrong += !ok;
            if (mode == 0) base_consumer = consumer_ms, base_pair = pair_ms;
            static const char *const names[4] = {"none", "producer", "producer+consumer", "producer"};
            char spread[96]; /* the spread of the pair's time */
            table_addf(ptab, "%.1f\t%s\t%.1f\t%.2f\t%.3f\t%.3f\t%.2f\t%.2f\t%s%s", p_sizes[ps] / 1048576.0, names[mode],
                       set_aside / 1048576.0, (double)ratio, consumer_ms, pair_ms, base_consumer / consumer_ms,
                       base_pair / pair_ms, ok ? "ok" : "WRONG", stats_cells(&pair_ts, spread, sizeof spread));
        }
    }
    /* leave the GPU as found */
    ptxkit_l2_persisting_reset(ctx);
    ptxkit_l2_persisting_set(ctx, original, NULL);
    rc = bench_print(&h, st);
    if (common.format == OUT_TABLE) printf("\n");
    table_print(ptab, common.format, stdout);
    table_free(ptab);
    if (wrong) {
        fprintf(stderr, "ptxkit %s: %d rows failed their check\n", cmd, wrong);
        rc = 1;
    }
    if (rc == 0 && common.svg_path) rc = write_svg(common.svg_path, dev.name, setasides, ratios, speedup, base_ms);
    ptxkit_event_destroy(pr.mid);
    ptxkit_event_destroy(pr.start);
    ptxkit_memory_free(ctx, pr.big_in);
    ptxkit_memory_free(ctx, pr.big_out);
    ptxkit_memory_free(ctx, pr.p);
    ptxkit_memory_free(ctx, pr.sum);
    ptxkit_program_destroy(program);
    ptxkit_stream_destroy(stream);
    ptxkit_context_destroy(ctx);
    return rc;
}
