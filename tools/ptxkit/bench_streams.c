/* ptxkit bench streams: the streams lecture's experiment ("CUDA Streams:
 * why bother?") on this GPU, through the public API. Data in host memory
 * go through a pipeline of chunks over k streams, each chunk a copy in
 * (H2D), a kernel and a copy out (D2H) on its stream, so that one chunk's
 * copies overlap another's kernel. Swept: 1, 2, 4, 8 streams, chunks of
 * 64 KiB to 64 MiB, pinned, pageable and mapped host memory (mapped: the
 * kernel reads and writes the host memory itself, no copies), a kernel of
 * light and one of heavy arithmetic. Beside it, the pinned and pageable
 * copy bandwidths of the same run, an event timeline of one pipelined run
 * (--svg), and the lecture's caveats, each a small measured case. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "report.h"
#include "svg.h"

enum {
    MAX_STREAMS = 16,
    MAX_LIST = 8,
    BLOCK = 256,
    PROBE_ITERS = 64,     /* the heavy kernel's iterations while its time is calibrated */
    RANDOM_SAMPLES = 1024,
    MAX_GRANULES = 1 << 17,
    CAVEAT_STREAMS = 4,
    CAVEAT_CHUNKS = 32,
    TIMELINE_STREAMS = 4,
};

typedef enum memory_kind { MEM_PINNED, MEM_PAGEABLE, MEM_MAPPED, MEM_COUNT } memory_kind;
static const char *const memory_names[] = {"pinned", "pageable", "mapped", NULL};
enum { KERNEL_LIGHT, KERNEL_HEAVY, KERNEL_COUNT };
static const char *const kernel_names[] = {"light", "heavy", NULL};

/* out[i] = in[i] after ITERS dependent multiply-adds per component: one
 * (light) leaves the pipeline to the copies, many (heavy) make the kernel
 * as long as a chunk's copy, where overlap gains most. fmaf, so that the
 * CPU reference is exact. */
static const char kernel_source[] =
    "#ifndef ITERS\n"
    "#define ITERS 1\n"
    "#endif\n"
    "extern \"C\" __global__ void stream_work(const float4 *__restrict__ in, float4 *__restrict__ out,\n"
    "                                         unsigned long long n) {\n"
    "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {\n"
    "        float4 v = in[i];\n"
    "        for (int k = 0; k < ITERS; k++) {\n"
    "            v.x = fmaf(v.x, 0.999f, 0.001f);\n"
    "            v.y = fmaf(v.y, 0.999f, 0.001f);\n"
    "            v.z = fmaf(v.z, 0.999f, 0.001f);\n"
    "            v.w = fmaf(v.w, 0.999f, 0.001f);\n"
    "        }\n"
    "        out[i] = v;\n"
    "    }\n"
    "}\n";

static float reference(float x, int iters) {
    for (int k = 0; k < iters; k++) x = fmaf(x, 0.999f, 0.001f);
    return x;
}

/* What the host issues between two chunks of a caveat's pipeline. */
typedef enum breaker {
    BREAK_NONE,
    BREAK_LEGACY,       /* an empty kernel on the legacy default stream (NULL) */
    BREAK_DEVICE_ALLOC, /* ptxkit_memory_alloc of 1 MiB */
    BREAK_HOST_ALLOC,   /* ptxkit_host_alloc of 1 MiB */
    BREAK_MEMSET,       /* ptxkit_memory_set8_async of 1 MiB on another stream */
    BREAK_DTOD,         /* ptxkit_memory_copy_async of 1 MiB on another stream */
} breaker;
#define BREAK_BYTES ((size_t)1 << 20)

typedef struct host_buffers {
    char *in, *out;
    ptxkit_dptr map_in, map_out; /* mapped memory's device addresses */
    memory_kind kind;
} host_buffers;

typedef struct bench {
    ptxkit_context *ctx;
    ptxkit_device_info dev;
    ptxkit_stream *streams[MAX_STREAMS];  /* non-blocking, as ptxkit_stream_create makes them */
    ptxkit_stream *blocking[MAX_STREAMS]; /* PTXKIT_STREAM_BLOCKING: caveat (a) */
    ptxkit_stream *other;                 /* the memset and device copy of the caveats */
    ptxkit_dptr dev_in[MAX_STREAMS], dev_out[MAX_STREAMS], scratch;
    ptxkit_event *start, *stop, *done[MAX_STREAMS + 1];
    ptxkit_program *program;
    ptxkit_kernel *kernel[KERNEL_COUNT];
    unsigned grid[KERNEL_COUNT];
    int iters[KERNEL_COUNT];
    int stream_count; /* of each set */
    int reps;
    /* the checked positions (float indices) and their expected values */
    size_t *pos;
    float *want[KERNEL_COUNT];
    size_t pos_count;
    /* allocations made by the breakers, freed after each run */
    ptxkit_dptr *dallocs;
    void **hallocs;
    size_t alloc_count, alloc_room;
} bench;

typedef struct plan {
    int streams;
    size_t chunk, total;
    int kernel;
    const host_buffers *h;
    breaker brk;
    bool blocking;
    ptxkit_event **marks; /* 4 per chunk (before H2D, after H2D, after the kernel, after D2H), or NULL */
} plan;

static size_t chunk_count(const plan *p) { return (p->total + p->chunk - 1) / p->chunk; }

static ptxkit_status launch_work(bench *b, int k, ptxkit_dptr in, ptxkit_dptr out, size_t bytes, ptxkit_stream *s) {
    unsigned long long n = bytes / 16;
    unsigned long long blocks = (n + BLOCK - 1) / BLOCK;
    unsigned grid = blocks < b->grid[k] ? (unsigned)(blocks ? blocks : 1) : b->grid[k];
    void *args[] = {&in, &out, &n};
    return ptxkit_kernel_launch(b->kernel[k], (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){BLOCK, 1, 1}, 0, s, args);
}

static ptxkit_status do_break(bench *b, breaker brk) {
    ptxkit_status st = PTXKIT_SUCCESS;
    if ((brk == BREAK_DEVICE_ALLOC || brk == BREAK_HOST_ALLOC) && b->alloc_count == b->alloc_room) {
        size_t room = b->alloc_room ? 2 * b->alloc_room : 64;
        ptxkit_dptr *d = realloc(b->dallocs, room * sizeof *d);
        if (d) b->dallocs = d;
        void **h = realloc(b->hallocs, room * sizeof *h);
        if (h) b->hallocs = h;
        if (!d || !h) return PTXKIT_ERROR_OUT_OF_MEMORY;
        b->alloc_room = room;
    }
    switch (brk) {
    case BREAK_NONE: break;
    case BREAK_LEGACY: st = launch_work(b, KERNEL_LIGHT, 0, 0, 0, NULL); break;
    case BREAK_DEVICE_ALLOC:
        b->hallocs[b->alloc_count] = NULL;
        st = ptxkit_memory_alloc(b->ctx, BREAK_BYTES, &b->dallocs[b->alloc_count]);
        if (st == PTXKIT_SUCCESS) b->alloc_count++;
        break;
    case BREAK_HOST_ALLOC:
        b->dallocs[b->alloc_count] = 0;
        st = ptxkit_host_alloc(b->ctx, BREAK_BYTES, PTXKIT_HOST_DEFAULT, &b->hallocs[b->alloc_count]);
        if (st == PTXKIT_SUCCESS) b->alloc_count++;
        break;
    case BREAK_MEMSET: st = ptxkit_memory_set8_async(b->ctx, b->scratch, 0x5a, BREAK_BYTES, b->other); break;
    case BREAK_DTOD: st = ptxkit_memory_copy_async(b->ctx, b->scratch + BREAK_BYTES, b->scratch, BREAK_BYTES, b->other); break;
    }
    return st;
}

static void free_breaker_allocations(bench *b) {
    for (size_t i = 0; i < b->alloc_count; i++) {
        if (b->dallocs[i]) ptxkit_memory_free(b->ctx, b->dallocs[i]);
        if (b->hallocs[i]) ptxkit_host_free(b->ctx, b->hallocs[i]);
    }
    b->alloc_count = 0;
}

/* One run of the pipeline, timed from an event before the first call to
 * one after the last, on the first stream; the other streams start after
 * the first event and the first waits for them before the last. */
static ptxkit_status run_once(bench *b, const plan *p, float *ms) {
    ptxkit_context *ctx = b->ctx;
    ptxkit_stream **S = p->blocking ? b->blocking : b->streams;
    const host_buffers *h = p->h;
    int k = p->streams;
    ptxkit_status st = ptxkit_event_record(ctx, b->start, S[0]);
    for (int s = 1; s < k && st == PTXKIT_SUCCESS; s++) st = ptxkit_stream_wait_event(ctx, S[s], b->start);
    size_t chunks = chunk_count(p);
    for (size_t c = 0; c < chunks && st == PTXKIT_SUCCESS; c++) {
        int s = (int)(c % (size_t)k);
        size_t off = c * p->chunk, len = p->total - off < p->chunk ? p->total - off : p->chunk;
        ptxkit_event **m = p->marks ? p->marks + 4 * c : NULL;
        if (m) st = ptxkit_event_record(ctx, m[0], S[s]);
        if (h->kind == MEM_MAPPED) {
            if (m && st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, m[1], S[s]);
            if (st == PTXKIT_SUCCESS) st = launch_work(b, p->kernel, h->map_in + off, h->map_out + off, len, S[s]);
            if (m && st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, m[2], S[s]);
        } else {
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write_async(ctx, b->dev_in[s], h->in + off, len, S[s]);
            if (m && st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, m[1], S[s]);
            if (st == PTXKIT_SUCCESS) st = launch_work(b, p->kernel, b->dev_in[s], b->dev_out[s], len, S[s]);
            if (m && st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, m[2], S[s]);
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read_async(ctx, h->out + off, b->dev_out[s], len, S[s]);
        }
        if (m && st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, m[3], S[s]);
        if (c + 1 < chunks && st == PTXKIT_SUCCESS) st = do_break(b, p->brk);
    }
    for (int s = 1; s < k && st == PTXKIT_SUCCESS; s++) {
        st = ptxkit_event_record(ctx, b->done[s], S[s]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_stream_wait_event(ctx, S[0], b->done[s]);
    }
    if (st == PTXKIT_SUCCESS && (p->brk == BREAK_MEMSET || p->brk == BREAK_DTOD)) {
        st = ptxkit_event_record(ctx, b->done[MAX_STREAMS], b->other);
        if (st == PTXKIT_SUCCESS) st = ptxkit_stream_wait_event(ctx, S[0], b->done[MAX_STREAMS]);
    }
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, b->stop, S[0]);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_synchronize(ctx, b->stop);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms_get(ctx, b->start, b->stop, ms);
    free_breaker_allocations(b);
    return st;
}

/* Poisons the checked positions of the output, runs reps times, and tells
 * whether every checked position then holds the kernel's result. */
static ptxkit_status measure(bench *b, const plan *p, int reps, time_stats *ts, bool *ok) {
    float nan_value = nanf("");
    float *out = (float *)(void *)p->h->out;
    for (size_t i = 0; i < b->pos_count; i++)
        if (b->pos[i] * 4 < p->total) out[b->pos[i]] = nan_value;
    float *times = malloc((size_t)reps * sizeof *times);
    if (!times) return PTXKIT_ERROR_OUT_OF_MEMORY;
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int r = 0; r < reps && st == PTXKIT_SUCCESS; r++) st = run_once(b, p, &times[r]);
    if (st == PTXKIT_SUCCESS) stats_of_samples(times, reps, ts);
    free(times);
    *ok = true;
    for (size_t i = 0; i < b->pos_count && st == PTXKIT_SUCCESS; i++)
        if (b->pos[i] * 4 < p->total && memcmp(&out[b->pos[i]], &b->want[p->kernel][i], 4) != 0) *ok = false;
    return st;
}

/* The first and last float of every granule (no chunk is smaller, so a
 * chunk left out is caught) and random positions. */
static ptxkit_status choose_positions(bench *b, size_t total, size_t granule) {
    while (total / granule > MAX_GRANULES) granule *= 2;
    size_t granules = total / granule;
    b->pos = malloc((2 * granules + RANDOM_SAMPLES) * sizeof *b->pos);
    if (!b->pos) return PTXKIT_ERROR_OUT_OF_MEMORY;
    size_t n = 0;
    for (size_t g = 0; g < granules; g++) {
        b->pos[n++] = g * granule / 4;
        b->pos[n++] = (g + 1) * granule / 4 - 1;
    }
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < RANDOM_SAMPLES; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b->pos[n++] = (size_t)(x % (total / 4));
    }
    b->pos_count = n;
    for (int k = 0; k < KERNEL_COUNT; k++) {
        b->want[k] = malloc(n * sizeof(float));
        if (!b->want[k]) return PTXKIT_ERROR_OUT_OF_MEMORY;
    }
    return PTXKIT_SUCCESS;
}

static void compute_expected(bench *b, const float *in, int k) {
    for (size_t i = 0; i < b->pos_count; i++) b->want[k][i] = reference(in[b->pos[i]], b->iters[k]);
}

static void fill_input(float *in, size_t total) {
    uint32_t x = 0x2545f491u;
    for (size_t i = 0; i < total / 4; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        in[i] = (float)(x >> 8) * (1.0f / 16777216.0f);
    }
}

static ptxkit_status host_buffers_alloc(bench *b, memory_kind kind, size_t total, const char *src, host_buffers *h) {
    *h = (host_buffers){.kind = kind};
    ptxkit_status st = PTXKIT_SUCCESS;
    if (kind == MEM_PAGEABLE) {
        h->in = malloc(total);
        h->out = malloc(total);
        if (!h->in || !h->out) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    } else {
        unsigned flags = kind == MEM_MAPPED ? PTXKIT_HOST_MAPPED : 0;
        st = ptxkit_host_alloc(b->ctx, total, flags, (void **)&h->in);
        if (st == PTXKIT_SUCCESS) st = ptxkit_host_alloc(b->ctx, total, flags, (void **)&h->out);
        if (st == PTXKIT_SUCCESS && kind == MEM_MAPPED) st = ptxkit_host_device_pointer_get(b->ctx, h->in, &h->map_in);
        if (st == PTXKIT_SUCCESS && kind == MEM_MAPPED) st = ptxkit_host_device_pointer_get(b->ctx, h->out, &h->map_out);
    }
    if (st != PTXKIT_SUCCESS) return st;
    /* touched before timing: a first touch of pageable memory would time the kernel's page faults */
    if (src) memcpy(h->in, src, total);
    else fill_input((float *)(void *)h->in, total);
    memset(h->out, 0, total);
    return PTXKIT_SUCCESS;
}

static void host_buffers_free(bench *b, host_buffers *h) {
    if (h->kind == MEM_PAGEABLE) {
        free(h->in);
        free(h->out);
    } else {
        if (h->in) ptxkit_host_free(b->ctx, h->in);
        if (h->out) ptxkit_host_free(b->ctx, h->out);
    }
    *h = (host_buffers){.kind = h->kind};
}

/* ---- copy bandwidths of the same run ---- */

typedef struct copy_row {
    const char *copy, *memory;
    size_t bytes;
    time_stats ts;
    double gbs;
} copy_row;

/* dir 0: H2D, 1: D2H, 2: both at once (H2D on the first stream, D2H on the second). */
static ptxkit_status time_copy(bench *b, int dir, const host_buffers *h, ptxkit_dptr din, ptxkit_dptr dout, size_t total,
                               copy_row *row) {
    ptxkit_context *ctx = b->ctx;
    float *times = malloc((size_t)b->reps * sizeof *times);
    if (!times) return PTXKIT_ERROR_OUT_OF_MEMORY;
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int r = -1; r < b->reps && st == PTXKIT_SUCCESS; r++) { /* r = -1: untimed warm-up */
        float ms = 0;
        st = ptxkit_event_record(ctx, b->start, b->streams[0]);
        if (st == PTXKIT_SUCCESS && dir == 2) st = ptxkit_stream_wait_event(ctx, b->streams[1], b->start);
        if (st == PTXKIT_SUCCESS && dir != 1) st = ptxkit_memory_write_async(ctx, din, h->in, total, b->streams[0]);
        ptxkit_stream *s = dir == 2 ? b->streams[1] : b->streams[0];
        if (st == PTXKIT_SUCCESS && dir != 0) st = ptxkit_memory_read_async(ctx, h->out, dout, total, s);
        if (st == PTXKIT_SUCCESS && dir == 2) st = ptxkit_event_record(ctx, b->done[1], b->streams[1]);
        if (st == PTXKIT_SUCCESS && dir == 2) st = ptxkit_stream_wait_event(ctx, b->streams[0], b->done[1]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(ctx, b->stop, b->streams[0]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_synchronize(ctx, b->stop);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms_get(ctx, b->start, b->stop, &ms);
        if (r >= 0) times[r] = ms;
    }
    if (st == PTXKIT_SUCCESS) {
        stats_of_samples(times, b->reps, &row->ts);
        row->bytes = dir == 2 ? 2 * total : total;
        row->gbs = (double)row->bytes / (row->ts.median_ms * 1e-3) / 1e9;
    }
    free(times);
    return st;
}

/* ---- the heavy kernel's length ---- */

static ptxkit_status get_kernel(bench *b, int k, int iters) {
    char def[32];
    snprintf(def, sizeof def, "ITERS=%d", iters);
    const char *defines[] = {def};
    ptxkit_status st = ptxkit_program_kernel_get(b->ctx, b->program, "stream_work", defines, 1, &b->kernel[k]);
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_grid_size_get(b->kernel[k], BLOCK, 0, 0, &b->grid[k]);
    if (st == PTXKIT_SUCCESS) b->iters[k] = iters;
    return st;
}

/* Times fn-like work on the first stream: median of 5 after one warm-up. */
static ptxkit_status time_chunk(bench *b, bool kernel, const host_buffers *h, size_t bytes, float *median) {
    float t[5];
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int r = -1; r < 5 && st == PTXKIT_SUCCESS; r++) {
        float ms = 0;
        st = ptxkit_event_record(b->ctx, b->start, b->streams[0]);
        if (st == PTXKIT_SUCCESS)
            st = kernel ? launch_work(b, KERNEL_HEAVY, b->dev_in[0], b->dev_out[0], bytes, b->streams[0])
                        : ptxkit_memory_write_async(b->ctx, b->dev_in[0], h->in, bytes, b->streams[0]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(b->ctx, b->stop, b->streams[0]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_synchronize(b->ctx, b->stop);
        if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms_get(b->ctx, b->start, b->stop, &ms);
        if (r >= 0) t[r] = ms;
    }
    if (st == PTXKIT_SUCCESS) {
        time_stats ts;
        stats_of_samples(t, 5, &ts);
        *median = (float)ts.median_ms;
    }
    return st;
}

/* The heavy kernel's iterations: as many as make its time on one chunk
 * that of the chunk's pinned copy in (a power of two), unless given. Twice:
 * at the probe's count the kernel's memory traffic and launch weigh more
 * than its arithmetic, so the first estimate falls short. */
static ptxkit_status calibrate_heavy(bench *b, const host_buffers *pinned, size_t chunk, int *iters) {
    int n = PROBE_ITERS;
    float copy_ms = 0;
    ptxkit_status st = time_chunk(b, false, pinned, chunk, &copy_ms);
    for (int pass = 0; pass < 2 && st == PTXKIT_SUCCESS; pass++) {
        float kernel_ms = 0;
        st = get_kernel(b, KERNEL_HEAVY, n);
        if (st == PTXKIT_SUCCESS) st = time_chunk(b, true, pinned, chunk, &kernel_ms);
        if (st != PTXKIT_SUCCESS) break;
        double want = kernel_ms > 0 ? n * (double)copy_ms / (double)kernel_ms : n;
        n = 1;
        while (n < (1 << 16) && n * 1.5 < want) n *= 2;
    }
    *iters = n;
    return st;
}

/* ---- the timeline ---- */

typedef struct spans {
    double *t0[3], *t1[3];
    int *lane;
    size_t count;
} spans;

/* The spans of one run from its marks, in ms after its start event: a
 * bar starts when its stream reached the call and ends when the call had
 * finished, so a copy waiting for a copy engine (or a kernel for the SMs)
 * is drawn from the time it could have started. Events cannot tell when
 * the engine took it: copies of several streams may share the engines. */
static ptxkit_status read_spans(bench *b, const plan *p, spans *sp) {
    size_t chunks = chunk_count(p);
    ptxkit_status st = PTXKIT_SUCCESS;
    for (size_t c = 0; c < chunks && st == PTXKIT_SUCCESS; c++) {
        float t[4];
        for (int i = 0; i < 4 && st == PTXKIT_SUCCESS; i++)
            st = ptxkit_event_elapsed_ms_get(b->ctx, b->start, p->marks[4 * c + (size_t)i], &t[i]);
        sp->lane[c] = (int)(c % (size_t)p->streams);
        for (int w = 0; w < 3; w++) {
            sp->t0[w][c] = t[w];
            sp->t1[w][c] = t[w + 1];
        }
    }
    sp->count = chunks;
    return st;
}

static ptxkit_status run_timeline(bench *b, const plan *p, spans *sp, float *ms) {
    ptxkit_status st = run_once(b, p, ms); /* warm: the streams' first use */
    if (st == PTXKIT_SUCCESS) st = run_once(b, p, ms);
    if (st == PTXKIT_SUCCESS) st = read_spans(b, p, sp);
    return st;
}

static int write_timeline(const char *path, const char *gpu, const plan *p, const spans *serial, float serial_ms,
                          const spans *piped, float piped_ms) {
    static const char *const rows[] = {"stream 0", "stream 1", "stream 2", "stream 3", "stream 4", "stream 5",
                                       "stream 6", "stream 7", "stream 8", "stream 9", "stream 10", "stream 11",
                                       "stream 12", "stream 13", "stream 14", "stream 15"};
    static const char *const names[3] = {"copy in (H2D)", "kernel", "copy out (D2H)"};
    static const char *const colors[3] = {"#4e79a7", "#f28e2b", "#59a14f"};
    const spans *sp[2] = {serial, piped};
    svg_series series[2][3];
    svg_chart charts[2];
    char titles[2][160];
    double end = serial_ms > piped_ms ? serial_ms : piped_ms;
    for (int c = 0; c < 2; c++) {
        for (int w = 0; w < 3; w++)
            series[c][w] = (svg_series){.name = names[w], .x = sp[c]->t0[w], .y = sp[c]->t1[w], .lane = sp[c]->lane,
                                        .count = sp[c]->count, .color = colors[w]};
        int streams = c ? p->streams : 1;
        snprintf(titles[c], sizeof titles[c], "%d stream%s: %.2f ms", streams, streams > 1 ? "s" : "",
                 c ? piped_ms : serial_ms);
        charts[c] = (svg_chart){.kind = SVG_TIMELINE, .title = titles[c], .x_label = "time since the first call (ms)",
                                .y_label = "stream", .categories = rows, .category_count = (size_t)streams,
                                .series = series[c], .series_count = 3, .x_max = end};
    }
    char title[400], subtitle[400];
    bool mib = p->chunk % ((size_t)1 << 20) == 0;
    snprintf(title, sizeof title, "H2D -> kernel -> D2H in %zu chunks of %zu %s, pinned memory, on %s", chunk_count(p),
             mib ? p->chunk >> 20 : p->chunk >> 10, mib ? "MiB" : "KiB", gpu);
    snprintf(subtitle, sizeof subtitle,
             "events around each call: a bar starts when its stream reached the call (a copy may then wait "
             "for a copy engine)");
    if (svg_save_figure(path, title, subtitle, charts, 2) != 0) {
        fprintf(stderr, "ptxkit bench streams: cannot write %s\n", path);
        return 1;
    }
    fprintf(stderr, "ptxkit bench streams: timeline written to %s\n", path);
    return 0;
}

/* ---- the caveats ---- */

typedef struct caveat {
    const char *name, *expected; /* expected: "serializes" or "overlaps" */
    breaker brk;
    bool blocking, pageable;
} caveat;

static const caveat caveats[] = {
    {"none (reference): pinned memory, non-blocking streams", "overlaps", BREAK_NONE, false, false},
    {"(a) legacy default stream: a kernel on it between chunks, blocking streams", "serializes", BREAK_LEGACY, true, false},
    {"(a) the same with non-blocking streams", "overlaps", BREAK_LEGACY, false, false},
    {"(b) device allocation (ptxkit_memory_alloc) between chunks", "serializes", BREAK_DEVICE_ALLOC, false, false},
    {"(b) page-locked allocation (ptxkit_host_alloc) between chunks", "serializes", BREAK_HOST_ALLOC, false, false},
    {"(c) memset (ptxkit_memory_set8_async, another stream) between chunks", "serializes", BREAK_MEMSET, false, false},
    {"(d) pageable host memory", "serializes", BREAK_NONE, false, true},
    {"(e) copy within the device (ptxkit_memory_copy_async, another stream) between chunks", "serializes", BREAK_DTOD,
     false, false},
};
#define CAVEAT_COUNT (sizeof caveats / sizeof caveats[0])

typedef struct caveat_row {
    double serial_ms, overlapped_ms, gain;
    bool ok;
} caveat_row;

/* Whether the measured case behaves as the lecture says: overlap lost
 * when less than half of the reference pipeline's gain remains. */
static const char *verdict(const caveat *c, const caveat_row *r, double reference_gain, bool reference) {
    if (reference) return reference_gain >= 0.1 ? "yes" : "no";
    if (reference_gain < 0.1) return "unclear (no overlap to lose)";
    bool serialized = r->gain < 0.5 * reference_gain;
    return serialized == (strcmp(c->expected, "serializes") == 0) ? "yes" : "no";
}

/* ---- the command ---- */

static const char usage_text[] =
    "usage: ptxkit bench streams [--log2 K] [--streams LIST] [--chunks LIST] [--memory LIST] [--kernels LIST]\n"
    "                            [--heavy-iters N] [--reps N] [--no-caveats] [--svg FILE]\n"
    "                            [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--device N]\n";
static const char help_text[] =
    "The streams lecture's experiment: 2^K bytes of floats (--log2, default 30: 1 GiB) in host memory go\n"
    "through a pipeline of chunks over k streams, each chunk copied in (H2D), transformed by a kernel and\n"
    "copied out (D2H) on its stream, so that the copies of one chunk overlap the kernel of another.\n"
    "Swept: streams (--streams, default 1,2,4,8), chunk sizes (--chunks, default 64K,256K,1M,4M,16M,64M),\n"
    "host memory (--memory: pinned, pageable and mapped, where the kernel reads and writes the host memory\n"
    "itself and nothing is copied) and kernels (--kernels: light, one multiply-add per element; heavy, as\n"
    "many as make the kernel on a 16 MiB chunk as long as its pinned copy, or --heavy-iters N). Each row:\n"
    "the median time of --reps runs (default 3), GB/s of input processed and its percent of the pinned H2D\n"
    "bandwidth measured at the start of the same run (a first table: pinned H2D, D2H and both directions\n"
    "at once, pageable H2D and D2H); sampled outputs are checked against the CPU.\n"
    "Then the lecture's caveats, each a small pipeline (up to 256 MiB in 32 chunks, heavy kernel) run on\n"
    "one stream (serial) and on four (overlapped), with whether the caveat still holds on this driver:\n"
    "(a) a kernel on the legacy default stream between chunks serializes blocking streams, not\n"
    "non-blocking ones; (b) a device or a page-locked allocation, (c) a memset and (e) a copy within the\n"
    "device (both on another stream) between chunks break overlap; (d) pageable copies do not overlap\n"
    "kernels. --no-caveats leaves them out. --svg FILE draws the event timeline of one pipelined run (4\n"
    "streams, 16 chunks of 16 MiB, pinned, heavy) under that of the same work on one stream: a bar runs\n"
    "from its stream reaching the call to the call's end, waiting for a copy engine included.\n";

int bench_streams(int argc, char **argv) {
    static const char cmd[] = "bench streams";
    int log2_total = 30, stream_list[MAX_LIST] = {1, 2, 4, 8}, nstreams = 4, heavy_iters = 0, reps = 3;
    size_t chunks[MAX_LIST] = {64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
    int nchunks = 6;
    bool memories[MEM_COUNT] = {false}, kernels[KERNEL_COUNT] = {false}, no_caveats = false;
    const arg_option options[] = {
        {.name = "log2", .kind = ARG_INT, .value = &log2_total, .lo = 20, .hi = 34},
        {.name = "streams", .kind = ARG_INTS, .value = stream_list, .count = &nstreams, .max = MAX_LIST, .lo = 1,
         .hi = MAX_STREAMS},
        {.name = "chunks", .kind = ARG_SIZES, .value = chunks, .count = &nchunks, .max = MAX_LIST, .lo = 4096,
         .hi = 1LL << 30},
        {.name = "memory", .kind = ARG_CHOICES, .value = memories, .names = memory_names},
        {.name = "kernels", .kind = ARG_CHOICES, .value = kernels, .names = kernel_names},
        {.name = "heavy-iters", .kind = ARG_INT, .value = &heavy_iters, .lo = 1, .hi = 1 << 20},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 1000},
        {.name = "no-caveats", .kind = ARG_FLAG, .value = &no_caveats},
        {0}};
    const arg_spec spec = {.command = cmd, .usage = usage_text, .help = help_text,
                           .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG, .options = options};
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    for (int i = 0; i < nchunks; i++)
        if (chunks[i] % 16) return args_error(&spec, "--chunks takes multiples of 16 bytes, not %zu", chunks[i]);
    bool any_memory = false, any_kernel = false;
    for (int i = 0; i < MEM_COUNT; i++) any_memory |= memories[i];
    for (int i = 0; i < KERNEL_COUNT; i++) any_kernel |= kernels[i];
    for (int i = 0; i < MEM_COUNT && !any_memory; i++) memories[i] = true;
    for (int i = 0; i < KERNEL_COUNT && !any_kernel; i++) kernels[i] = true;

    size_t total = (size_t)1 << log2_total;
    /* the timeline's and the caveats' pipelines: 16 MiB chunks where the data give 16 of them */
    size_t tl_chunk = (size_t)16 << 20;
    while (total / tl_chunk < 16 && tl_chunk > 4096) tl_chunk /= 2;
    while (total / tl_chunk > 1024) tl_chunk *= 2;
    size_t cv_total = total < ((size_t)256 << 20) ? total : (size_t)256 << 20;
    size_t cv_chunk = cv_total / CAVEAT_CHUNKS;
    size_t ring = tl_chunk > cv_chunk ? tl_chunk : cv_chunk, smallest = ring;
    int most_streams = TIMELINE_STREAMS;
    for (int i = 0; i < nchunks; i++) {
        if (chunks[i] <= total && chunks[i] > ring) ring = chunks[i];
        if (chunks[i] < smallest) smallest = chunks[i];
    }
    for (int i = 0; i < nstreams; i++) most_streams = stream_list[i] > most_streams ? stream_list[i] : most_streams;

    bench b = {.reps = reps, .stream_count = most_streams};
    b.ctx = cli_open_context(cmd, common.device);
    if (!b.ctx) return 1;
    ptxkit_context *ctx = b.ctx;
    ptxkit_status st = ptxkit_device_info_get(ctx, &b.dev);
    for (int s = 0; s < most_streams && st == PTXKIT_SUCCESS; s++) {
        st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b.streams[s]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_stream_create(ctx, PTXKIT_STREAM_BLOCKING, 0, &b.blocking[s]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, ring, &b.dev_in[s]);
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, ring, &b.dev_out[s]);
    }
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b.other);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, 2 * BREAK_BYTES, &b.scratch);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &b.start);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &b.stop);
    for (int s = 0; s <= MAX_STREAMS && st == PTXKIT_SUCCESS; s++) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &b.done[s]);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_create("streams.cu", kernel_source, NULL, 0, &b.program);
    if (st == PTXKIT_SUCCESS) st = get_kernel(&b, KERNEL_LIGHT, 1);

    /* The input, and the copy bandwidths of this run. */
    host_buffers pinned = {.kind = MEM_PINNED}, pageable = {.kind = MEM_PAGEABLE};
    if (st == PTXKIT_SUCCESS) st = host_buffers_alloc(&b, MEM_PINNED, total, NULL, &pinned);
    if (st == PTXKIT_SUCCESS && memories[MEM_PAGEABLE]) st = host_buffers_alloc(&b, MEM_PAGEABLE, total, pinned.in, &pageable);
    copy_row copies[5] = {{.copy = "H2D", .memory = "pinned"}, {.copy = "D2H", .memory = "pinned"},
                          {.copy = "both directions", .memory = "pinned"}, {.copy = "H2D", .memory = "pageable"},
                          {.copy = "D2H", .memory = "pageable"}};
    int ncopies = memories[MEM_PAGEABLE] ? 5 : 3;
    if (st == PTXKIT_SUCCESS) {
        ptxkit_dptr din = 0, dout = 0;
        st = ptxkit_memory_alloc(ctx, total, &din);
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, total, &dout);
        for (int i = 0; i < ncopies && st == PTXKIT_SUCCESS; i++)
            st = time_copy(&b, i < 3 ? i : i - 3, i < 3 ? &pinned : &pageable, din, dout, total, &copies[i]);
        ptxkit_memory_free(ctx, din);
        ptxkit_memory_free(ctx, dout);
    }
    double h2d_gbs = copies[0].gbs;
    if (st == PTXKIT_SUCCESS) {
        report_note_ceiling("h2d", total, copies[0].gbs);
        report_note_ceiling("d2h", total, copies[1].gbs);
        report_note_ceiling("h2d+d2h", 2 * total, copies[2].gbs);
    }

    /* The heavy kernel, and the expected values of the checked positions. */
    if (st == PTXKIT_SUCCESS && (kernels[KERNEL_HEAVY] || !no_caveats || common.svg_path)) {
        int iters = heavy_iters;
        if (!iters) st = calibrate_heavy(&b, &pinned, tl_chunk, &iters);
        if (st == PTXKIT_SUCCESS) st = get_kernel(&b, KERNEL_HEAVY, iters);
    }
    if (st == PTXKIT_SUCCESS) st = choose_positions(&b, total, smallest < cv_chunk ? smallest : cv_chunk);
    for (int k = 0; k < KERNEL_COUNT && st == PTXKIT_SUCCESS; k++)
        if (b.kernel[k]) compute_expected(&b, (const float *)(void *)pinned.in, k);

    /* The sweep. */
    typedef struct row {
        int streams, memory, kernel;
        size_t chunk;
        time_stats ts;
        bool ok;
    } row;
    row *rows = calloc((size_t)MEM_COUNT * KERNEL_COUNT * MAX_LIST * MAX_LIST, sizeof *rows);
    if (!rows && st == PTXKIT_SUCCESS) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    int count = 0;
    for (int m = 0; m < MEM_COUNT && st == PTXKIT_SUCCESS; m++) {
        if (!memories[m]) continue;
        host_buffers mapped = {.kind = MEM_MAPPED};
        const host_buffers *h = m == MEM_PINNED ? &pinned : m == MEM_PAGEABLE ? &pageable : &mapped;
        if (m == MEM_MAPPED) st = host_buffers_alloc(&b, MEM_MAPPED, total, pinned.in, &mapped);
        for (int k = 0; k < KERNEL_COUNT && st == PTXKIT_SUCCESS; k++) {
            if (!kernels[k]) continue;
            for (int s = 0; s < nstreams && st == PTXKIT_SUCCESS; s++)
                for (int c = 0; c < nchunks && st == PTXKIT_SUCCESS; c++) {
                    if (chunks[c] > total) continue;
                    row *r = &rows[count];
                    *r = (row){.streams = stream_list[s], .memory = m, .kernel = k, .chunk = chunks[c]};
                    plan p = {.streams = r->streams, .chunk = r->chunk, .total = total, .kernel = k, .h = h};
                    st = measure(&b, &p, reps, &r->ts, &r->ok);
                    count++;
                    if (cli_is_tty() && common.format == OUT_TABLE) fprintf(stderr, "\r%d rows", count);
                }
        }
        host_buffers_free(&b, &mapped);
    }
    if (cli_is_tty() && common.format == OUT_TABLE) fprintf(stderr, "\n");

    /* The caveats. */
    caveat_row cv[CAVEAT_COUNT];
    memset(cv, 0, sizeof cv);
    bool caveats_ran = false;
    if (st == PTXKIT_SUCCESS && !no_caveats) {
        host_buffers small_pageable = {.kind = MEM_PAGEABLE};
        st = host_buffers_alloc(&b, MEM_PAGEABLE, cv_total, pinned.in, &small_pageable);
        int cv_reps = reps < 3 ? 3 : reps;
        for (size_t i = 0; i < CAVEAT_COUNT && st == PTXKIT_SUCCESS; i++) {
            const caveat *c = &caveats[i];
            plan p = {.chunk = cv_chunk, .total = cv_total, .kernel = KERNEL_HEAVY,
                      .h = c->pageable ? &small_pageable : &pinned, .brk = c->brk, .blocking = c->blocking};
            time_stats ts;
            bool ok1 = false, ok2 = false;
            p.streams = 1;
            st = measure(&b, &p, cv_reps, &ts, &ok1);
            cv[i].serial_ms = ts.median_ms;
            p.streams = CAVEAT_STREAMS;
            if (st == PTXKIT_SUCCESS) st = measure(&b, &p, cv_reps, &ts, &ok2);
            cv[i].overlapped_ms = ts.median_ms;
            cv[i].gain = cv[i].serial_ms > 0 ? 1 - cv[i].overlapped_ms / cv[i].serial_ms : 0;
            cv[i].ok = ok1 && ok2;
        }
        host_buffers_free(&b, &small_pageable);
        caveats_ran = st == PTXKIT_SUCCESS;
    }

    /* The timeline. */
    int svg_rc = 0;
    if (st == PTXKIT_SUCCESS && common.svg_path) {
        /* 16 chunks: the lecture's picture, where each bar can be seen */
        size_t tl_total = total < 16 * tl_chunk ? total : 16 * tl_chunk;
        plan p = {.streams = TIMELINE_STREAMS, .chunk = tl_chunk, .total = tl_total, .kernel = KERNEL_HEAVY, .h = &pinned};
        size_t n = chunk_count(&p);
        ptxkit_event **marks = calloc(4 * n, sizeof *marks);
        double *buf = calloc(12 * n, sizeof *buf);
        int *lanes = calloc(2 * n, sizeof *lanes);
        spans sp[2];
        if (!marks || !buf || !lanes) st = PTXKIT_ERROR_OUT_OF_MEMORY;
        for (size_t i = 0; i < 4 * n && st == PTXKIT_SUCCESS; i++) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &marks[i]);
        for (int c = 0; c < 2 && st == PTXKIT_SUCCESS; c++) {
            for (int w = 0; w < 3; w++) {
                sp[c].t0[w] = buf + (size_t)(6 * c + 2 * w) * n;
                sp[c].t1[w] = buf + (size_t)(6 * c + 2 * w + 1) * n;
            }
            sp[c].lane = lanes + (size_t)c * n;
        }
        float serial_ms = 0, piped_ms = 0;
        p.marks = marks;
        p.streams = 1;
        if (st == PTXKIT_SUCCESS) st = run_timeline(&b, &p, &sp[0], &serial_ms);
        p.streams = TIMELINE_STREAMS;
        if (st == PTXKIT_SUCCESS) st = run_timeline(&b, &p, &sp[1], &piped_ms);
        if (st == PTXKIT_SUCCESS) svg_rc = write_timeline(common.svg_path, b.dev.name, &p, &sp[0], serial_ms, &sp[1], piped_ms);
        for (size_t i = 0; marks && i < 4 * n; i++) ptxkit_event_destroy(marks[i]);
        free(marks);
        free(buf);
        free(lanes);
    }

    /* The tables. */
    if (st != PTXKIT_SUCCESS) cli_fail(cmd, ctx, st);
    char title[400], spread[96];
    snprintf(title, sizeof title, "host <-> device copies on %s, %zu MiB (median of %d)", b.dev.name, total >> 20, reps);
    const char *copy_headers[] = {"copy", "memory", "bytes", "time_ms", "GBps", STATS_COLUMNS};
    cli_table *ct = table_new(title, 8, copy_headers);
    table_id(ct, "bench_streams_bandwidth");
    table_types(ct, "ssnnn" STATS_TYPES);
    for (int i = 0; i < ncopies && copies[i].ts.samples; i++)
        table_addf(ct, "%s\t%s\t%zu\t%.3f\t%.2f%s", copies[i].copy, copies[i].memory, copies[i].bytes,
                   copies[i].ts.median_ms, copies[i].gbs, stats_cells(&copies[i].ts, spread, sizeof spread));
    table_print(ct, common.format, stdout);
    table_free(ct);

    snprintf(title, sizeof title,
             "H2D -> kernel -> D2H pipelines over streams on %s, %zu MiB of floats (light: 1, heavy: %d multiply-adds "
             "per element; median of %d)",
             b.dev.name, total >> 20, b.iters[KERNEL_HEAVY], reps);
    const char *headers[] = {"streams", "chunk_bytes", "memory", "kernel", "time_ms", "GBps", "pct_of_pinned_h2d",
                             "check", STATS_COLUMNS};
    cli_table *t = table_new(title, 11, headers);
    table_types(t, "nnssnnns" STATS_TYPES);
    int wrong = 0;
    for (int i = 0; i < count; i++) {
        const row *r = &rows[i];
        if (!r->ts.samples) continue;
        double gbs = (double)total / (r->ts.median_ms * 1e-3) / 1e9;
        wrong += !r->ok;
        table_addf(t, "%d\t%zu\t%s\t%s\t%.3f\t%.2f\t%.1f\t%s%s", r->streams, r->chunk, memory_names[r->memory],
                   kernel_names[r->kernel], r->ts.median_ms, gbs, h2d_gbs > 0 ? 100 * gbs / h2d_gbs : NAN,
                   r->ok ? "ok" : "WRONG", stats_cells(&r->ts, spread, sizeof spread));
    }
    table_print(t, common.format, stdout);
    table_free(t);

    if (caveats_ran) {
        snprintf(title, sizeof title,
                 "the lecture's caveats on %s: %zu MiB in %d chunks, heavy kernel, 1 stream (serial) vs %d "
                 "(overlapped)",
                 b.dev.name, cv_total >> 20, CAVEAT_CHUNKS, CAVEAT_STREAMS);
        const char *cv_headers[] = {"caveat", "expected", "serial ms", "overlapped ms", "gain_pct", "holds", "check"};
        cli_table *vt = table_new(title, 7, cv_headers);
        table_id(vt, "bench_streams_caveats");
        table_types(vt, "ssnnnss");
        table_note(vt, "holds: the case behaves as expected; serializes when less than half of the reference's gain "
                       "remains");
        for (size_t i = 0; i < CAVEAT_COUNT; i++) {
            wrong += !cv[i].ok;
            table_addf(vt, "%s\t%s\t%.3f\t%.3f\t%.1f\t%s\t%s", caveats[i].name, caveats[i].expected, cv[i].serial_ms,
                       cv[i].overlapped_ms, 100 * cv[i].gain, verdict(&caveats[i], &cv[i], cv[0].gain, i == 0),
                       cv[i].ok ? "ok" : "WRONG");
        }
        table_print(vt, common.format, stdout);
        table_free(vt);
    }

    rc = st == PTXKIT_SUCCESS ? svg_rc : 1;
    if (wrong) {
        fprintf(stderr, "ptxkit %s: %d runs left wrong values in the output\n", cmd, wrong);
        rc = 1;
    }
    free(rows);
    free(b.pos);
    for (int k = 0; k < KERNEL_COUNT; k++) free(b.want[k]);
    free(b.dallocs);
    free(b.hallocs);
    host_buffers_free(&b, &pinned);
    host_buffers_free(&b, &pageable);
    for (int s = 0; s < most_streams; s++) {
        ptxkit_stream_destroy(b.streams[s]);
        ptxkit_stream_destroy(b.blocking[s]);
        ptxkit_memory_free(ctx, b.dev_in[s]);
        ptxkit_memory_free(ctx, b.dev_out[s]);
    }
    ptxkit_stream_destroy(b.other);
    ptxkit_memory_free(ctx, b.scratch);
    ptxkit_event_destroy(b.start);
    ptxkit_event_destroy(b.stop);
    for (int s = 0; s <= MAX_STREAMS; s++) ptxkit_event_destroy(b.done[s]);
    ptxkit_program_destroy(b.program);
    ptxkit_context_destroy(ctx);
    return rc;
}
