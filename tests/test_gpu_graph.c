/* GPU tests of the ops inside CUDA graphs: copy, reduce, scan, transpose and
 * gemm captured on a stream (cuStreamBeginCapture on ptxkit_stream_handle_get),
 * each alone and in a sequence, instantiated and replayed several times
 * with fresh inputs written into the same buffers between replays (a
 * graph's arguments are fixed pointers), uncaptured calls on the same
 * stream between replays, a capture on a stream that never ran the op, and
 * two streams captured at once, their ops alternating.
 *
 * Integers and copies must match exactly. gemm (float32) is compared with a
 * double reference within the bound ptxkit.h documents: (k + 2) * 2^-24 *
 * sum_k |a_ik b_kj| (alpha 1, beta 0).
 *
 * The first tests drive graphs through the driver itself (libcuda.so.1
 * opened here, its entry points from cuGetProcAddress, as the library
 * does), as an application with its own CUDA code does; the later ones
 * through ptxkit_graph (issue 26): each op captured and replayed, updated
 * in place with new arguments, re-instantiated when the topology changes,
 * host functions and a fork/join across streams inside a capture. Where a
 * call refuses capture it must return PTXKIT_ERROR_CAPTURE and leave the
 * capture whole (ptxkit.h, the stream functions and "graphs"). */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "ptxkit_ops.h"
#include "raw_graph_api.h"
#include "test_util.h"

/* ---- problems: device buffers, fresh inputs, CPU checks ----------------- */

enum { COPY_BYTES = (1 << 20) + 13, REDUCE_N = (1 << 20) + 7, SCAN_N = 3000017, T_ROWS = 1000, T_COLS = 777,
       G_M = 128, G_N = 96, G_K = 4099 };

typedef struct problems {
    ptxkit_dptr copy_src, copy_dst;
    ptxkit_dptr red_in, red_out;
    ptxkit_dptr scan_in, scan_out;
    ptxkit_dptr t_src, t_dst;
    ptxkit_dptr ga, gb, gc;
    unsigned char *h_copy;
    uint32_t *h_red, *h_scan, *h_scan_out;
    float *h_t, *h_t_out, *ha, *hb, *hc;
} problems;

static uint64_t rng;

static void problems_alloc(ptxkit_context *ctx, problems *p) {
    memset(p, 0, sizeof *p);
    assert_ok(ctx, ptxkit_memory_alloc(ctx, COPY_BYTES, &p->copy_src));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, COPY_BYTES, &p->copy_dst));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)REDUCE_N * 4, &p->red_in));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 8, &p->red_out));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)SCAN_N * 4, &p->scan_in));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)SCAN_N * 4, &p->scan_out));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)T_ROWS * T_COLS * 4, &p->t_src));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)T_ROWS * T_COLS * 4, &p->t_dst));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)G_M * G_K * 4, &p->ga));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)G_K * G_N * 4, &p->gb));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)G_M * G_N * 4, &p->gc));
    p->h_copy = malloc(2 * (size_t)COPY_BYTES);
    p->h_red = malloc((size_t)REDUCE_N * 4);
    p->h_scan = malloc((size_t)SCAN_N * 4);
    p->h_scan_out = malloc((size_t)SCAN_N * 4);
    p->h_t = malloc((size_t)T_ROWS * T_COLS * 4);
    p->h_t_out = malloc((size_t)T_ROWS * T_COLS * 4);
    p->ha = malloc((size_t)G_M * G_K * 4);
    p->hb = malloc((size_t)G_K * G_N * 4);
    p->hc = malloc((size_t)G_M * G_N * 4);
    assert_non_null(p->hc);
}

static void problems_free(ptxkit_context *ctx, problems *p) {
    ptxkit_dptr d[] = {p->copy_src, p->copy_dst, p->red_in, p->red_out, p->scan_in, p->scan_out,
                       p->t_src,    p->t_dst,    p->ga,     p->gb,      p->gc};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) ptxkit_memory_free(ctx, d[i]);
    free(p->h_copy), free(p->h_red), free(p->h_scan), free(p->h_scan_out), free(p->h_t), free(p->h_t_out);
    free(p->ha), free(p->hb), free(p->hc);
}

static void fill_floats(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = (float)((double)(test_rand(&rng) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* Fresh inputs in place, poisoned outputs; the stream is idle (synchronous copies). */
static void problems_refresh(ptxkit_context *ctx, problems *p) {
    test_fill_random(p->h_copy, COPY_BYTES, &rng);
    test_fill_random(p->h_red, (size_t)REDUCE_N * 4, &rng);
    test_fill_random(p->h_scan, (size_t)SCAN_N * 4, &rng);
    fill_floats(p->h_t, (size_t)T_ROWS * T_COLS);
    fill_floats(p->ha, (size_t)G_M * G_K);
    fill_floats(p->hb, (size_t)G_K * G_N);
    assert_ok(ctx, ptxkit_memory_write(ctx, p->copy_src, p->h_copy, COPY_BYTES));
    assert_ok(ctx, ptxkit_memory_write(ctx, p->red_in, p->h_red, (size_t)REDUCE_N * 4));
    assert_ok(ctx, ptxkit_memory_write(ctx, p->scan_in, p->h_scan, (size_t)SCAN_N * 4));
    assert_ok(ctx, ptxkit_memory_write(ctx, p->t_src, p->h_t, (size_t)T_ROWS * T_COLS * 4));
    assert_ok(ctx, ptxkit_memory_write(ctx, p->ga, p->ha, (size_t)G_M * G_K * 4));
    assert_ok(ctx, ptxkit_memory_write(ctx, p->gb, p->hb, (size_t)G_K * G_N * 4));
    ptxkit_dptr outs[] = {p->copy_dst, p->red_out, p->scan_out, p->t_dst, p->gc};
    size_t sizes[] = {COPY_BYTES, 8, (size_t)SCAN_N * 4, (size_t)T_ROWS * T_COLS * 4, (size_t)G_M * G_N * 4};
    for (int i = 0; i < 5; i++) assert_ok(ctx, ptxkit_memory_set8_async(ctx, outs[i], 0xCD, sizes[i], NULL));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
}

enum { OP_COPY = 1, OP_REDUCE = 2, OP_SCAN = 4, OP_TRANSPOSE = 8, OP_GEMM = 16, OP_ALL = 31 };

static ptxkit_status run_op(ptxkit_context *ctx, problems *p, int op, ptxkit_stream *s) {
    switch (op) {
    case OP_COPY: return ptxkit_copy(ctx, p->copy_dst, p->copy_src, COPY_BYTES, NULL, s);
    case OP_REDUCE: return ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, p->red_out, p->red_in, REDUCE_N, NULL, s);
    case OP_SCAN:
        return ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, p->scan_out, p->scan_in, SCAN_N,
                           NULL, s);
    case OP_TRANSPOSE:
        return ptxkit_transpose(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, p->t_dst, p->t_src, T_ROWS, T_COLS, NULL, s);
    default:
        return ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, G_M, G_N, G_K, 1.0, p->ga, G_K, p->gb, G_N,
                           0.0, p->gc, G_N, NULL, s);
    }
}

static ptxkit_status run_ops(ptxkit_context *ctx, problems *p, int ops, ptxkit_stream *s) {
    for (int op = 1; op <= OP_GEMM; op <<= 1)
        if (ops & op) {
            ptxkit_status st = run_op(ctx, p, op, s);
            if (st != PTXKIT_SUCCESS) return st;
        }
    return PTXKIT_SUCCESS;
}

/* Compares the outputs of `ops` with the CPU (after the stream finished). */
static void problems_check(ptxkit_context *ctx, problems *p, int ops) {
    if (ops & OP_COPY) {
        unsigned char *out = p->h_copy + COPY_BYTES;
        assert_ok(ctx, ptxkit_memory_read(ctx, out, p->copy_dst, COPY_BYTES));
        assert_memory_equal(out, p->h_copy, COPY_BYTES);
    }
    if (ops & OP_REDUCE) {
        uint32_t want = 0, got = 0;
        for (size_t i = 0; i < REDUCE_N; i++) want += p->h_red[i];
        assert_ok(ctx, ptxkit_memory_read(ctx, &got, p->red_out, 4));
        assert_int_equal(got, want);
    }
    if (ops & OP_SCAN) {
        assert_ok(ctx, ptxkit_memory_read(ctx, p->h_scan_out, p->scan_out, (size_t)SCAN_N * 4));
        uint32_t sum = 0;
        for (size_t i = 0; i < SCAN_N; i++) {
            sum += p->h_scan[i];
            if (p->h_scan_out[i] != sum) fail_msg("scan: element %zu is %u, want %u", i, p->h_scan_out[i], sum);
        }
    }
    if (ops & OP_TRANSPOSE) {
        assert_ok(ctx, ptxkit_memory_read(ctx, p->h_t_out, p->t_dst, (size_t)T_ROWS * T_COLS * 4));
        for (size_t r = 0; r < T_ROWS; r++)
            for (size_t c = 0; c < T_COLS; c++)
                if (memcmp(&p->h_t_out[c * T_ROWS + r], &p->h_t[r * T_COLS + c], 4) != 0)
                    fail_msg("transpose: (%zu, %zu) differs", r, c);
    }
    if (ops & OP_GEMM) {
        assert_ok(ctx, ptxkit_memory_read(ctx, p->hc, p->gc, (size_t)G_M * G_N * 4));
        for (size_t i = 0; i < G_M; i++)
            for (size_t j = 0; j < G_N; j++) {
                double exact = 0, mag = 0;
                for (size_t k = 0; k < G_K; k++) {
                    double t = (double)p->ha[i * G_K + k] * (double)p->hb[k * G_N + j];
                    exact += t;
                    mag += fabs(t);
                }
                double bound = (G_K + 2) * ldexp(1.0, -24) * mag;
                if (!(fabs((double)p->hc[i * G_N + j] - exact) <= bound))
                    fail_msg("gemm: C(%zu, %zu) = %.9g, want %.9g within %.3g", i, j, p->hc[i * G_N + j], exact, bound);
            }
    }
}

/* ---- capture ------------------------------------------------------------ */

static void begin(ptxkit_context *ctx, ptxkit_stream *s, CUstreamCaptureMode mode) {
    assert_ok(ctx, ptxkit_context_enter(ctx));
    CUresult r = drv.begin((CUstream)ptxkit_stream_handle_get(s), mode);
    assert_ok(ctx, ptxkit_context_leave(ctx));
    assert_int_equal(r, CUDA_SUCCESS);
}

/* Ends the capture; a capture the driver invalidated fails the test. */
static CUgraph end_capture(ptxkit_context *ctx, ptxkit_stream *s) {
    CUgraph graph = NULL;
    assert_ok(ctx, ptxkit_context_enter(ctx));
    CUresult r = drv.end((CUstream)ptxkit_stream_handle_get(s), &graph);
    assert_ok(ctx, ptxkit_context_leave(ctx));
    if (r != CUDA_SUCCESS) fail_msg("ending the capture: CUresult %d", (int)r);
    return graph;
}

/* Instantiates a captured graph (and destroys the graph). Instantiation may
 * allocate, which a thread may not do while it has a capture of its own
 * under way in global or thread-local mode: end every capture first. */
static CUgraphExec instantiate(ptxkit_context *ctx, CUgraph graph) {
    CUgraphExec exec = NULL;
    assert_ok(ctx, ptxkit_context_enter(ctx));
    CUresult r = drv.instantiate(&exec, graph, 0);
    drv.destroy(graph);
    assert_ok(ctx, ptxkit_context_leave(ctx));
    if (r != CUDA_SUCCESS) fail_msg("instantiating the capture: CUresult %d", (int)r);
    return exec;
}

static CUgraphExec end(ptxkit_context *ctx, ptxkit_stream *s) { return instantiate(ctx, end_capture(ctx, s)); }

static void replay(ptxkit_context *ctx, CUgraphExec exec, ptxkit_stream *s) {
    assert_ok(ctx, ptxkit_context_enter(ctx));
    CUresult r = drv.launch(exec, (CUstream)ptxkit_stream_handle_get(s));
    assert_ok(ctx, ptxkit_context_leave(ctx));
    assert_int_equal(r, CUDA_SUCCESS);
}

static void exec_destroy(ptxkit_context *ctx, CUgraphExec exec) {
    ptxkit_context_enter(ctx);
    drv.exec_destroy(exec);
    ptxkit_context_leave(ctx);
}

enum { REPLAYS = 4 };

/* Runs `ops` once on s (the preparation the capture rules ask for), captures
 * them, and replays the graph with fresh inputs, an uncaptured run of the
 * same ops on the stream between replays. */
static void capture_and_replay(int ops) {
    ptxkit_context *ctx = test_gpu();
    problems p;
    problems_alloc(ctx, &p);
    ptxkit_stream *s;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    problems_refresh(ctx, &p);
    assert_ok(ctx, run_ops(ctx, &p, ops, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    problems_check(ctx, &p, ops);

    begin(ctx, s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    ptxkit_status st = run_ops(ctx, &p, ops, s);
    CUgraphExec exec = end(ctx, s);
    if (st != PTXKIT_SUCCESS) fail_msg("captured ops %d: %s: %s", ops, ptxkit_status_string(st), ptxkit_last_error());
    for (int i = 0; i < REPLAYS; i++) {
        problems_refresh(ctx, &p);
        replay(ctx, exec, s);
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        problems_check(ctx, &p, ops);
        /* uncaptured calls between replays share the stream's scratch */
        problems_refresh(ctx, &p);
        assert_ok(ctx, run_ops(ctx, &p, ops, s));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        problems_check(ctx, &p, ops);
    }
    exec_destroy(ctx, exec);
    ptxkit_stream_destroy(s);
    problems_free(ctx, &p);
}

static void test_graph_copy(void **state) { (void)state; capture_and_replay(OP_COPY); }
static void test_graph_reduce(void **state) { (void)state; capture_and_replay(OP_REDUCE); }
static void test_graph_scan(void **state) { (void)state; capture_and_replay(OP_SCAN); }
static void test_graph_transpose(void **state) { (void)state; capture_and_replay(OP_TRANSPOSE); }
static void test_graph_gemm(void **state) { (void)state; capture_and_replay(OP_GEMM); }
static void test_graph_sequence(void **state) { (void)state; capture_and_replay(OP_ALL); }

/* A capture on a fresh stream: each op either records (and its replays are
 * right) or returns PTXKIT_ERROR_CAPTURE, recording nothing, the capture still valid. */
static void test_graph_unprepared_stream(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    problems p;
    problems_alloc(ctx, &p);
    /* the kernels are loaded by another stream: only scratch is missing */
    ptxkit_stream *other;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &other));
    problems_refresh(ctx, &p);
    assert_ok(ctx, run_ops(ctx, &p, OP_ALL, other));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, other));
    for (int op = 1; op <= OP_GEMM; op <<= 1) {
        ptxkit_stream *s;
        assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
        begin(ctx, s, CU_STREAM_CAPTURE_MODE_GLOBAL);
        ptxkit_status st = run_op(ctx, &p, op, s);
        CUgraphExec exec = end(ctx, s);
        if (st == PTXKIT_SUCCESS) {
            for (int i = 0; i < 2; i++) {
                problems_refresh(ctx, &p);
                replay(ctx, exec, s);
                assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
                problems_check(ctx, &p, op);
            }
        } else {
            assert_int_equal(st, PTXKIT_ERROR_CAPTURE);
            assert_non_null(strstr(ptxkit_last_error(), "capture"));
            /* nothing recorded: the empty graph replays harmlessly */
            replay(ctx, exec, s);
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        }
        /* copy and transpose need no scratch: they always record */
        if (op == OP_COPY || op == OP_TRANSPOSE) assert_int_equal(st, PTXKIT_SUCCESS);
        exec_destroy(ctx, exec);
        /* the stream still works uncaptured, and on the other stream too */
        problems_refresh(ctx, &p);
        assert_ok(ctx, run_op(ctx, &p, op, s));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        problems_check(ctx, &p, op);
        ptxkit_stream_destroy(s);
    }
    ptxkit_stream_destroy(other);
    problems_free(ctx, &p);
}

/* Two streams captured at once, their ops alternating between them; the
 * graphs replayed alternately, and then at the same time on their streams,
 * while uncaptured calls run on more streams than there are slots. */
static void test_graph_two_streams(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    problems pa, pb;
    problems_alloc(ctx, &pa);
    problems_alloc(ctx, &pb);
    ptxkit_stream *a, *b;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &a));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b));
    const int ops_a = OP_REDUCE | OP_SCAN | OP_GEMM, ops_b = OP_SCAN | OP_REDUCE | OP_COPY | OP_GEMM;
    problems_refresh(ctx, &pa);
    problems_refresh(ctx, &pb);
    assert_ok(ctx, run_ops(ctx, &pa, ops_a, a));
    assert_ok(ctx, run_ops(ctx, &pb, ops_b, b));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));

    begin(ctx, a, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    begin(ctx, b, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    assert_ok(ctx, run_op(ctx, &pa, OP_REDUCE, a));
    assert_ok(ctx, run_op(ctx, &pb, OP_SCAN, b));
    assert_ok(ctx, run_op(ctx, &pa, OP_SCAN, a));
    assert_ok(ctx, run_op(ctx, &pb, OP_REDUCE, b));
    assert_ok(ctx, run_op(ctx, &pb, OP_COPY, b));
    assert_ok(ctx, run_op(ctx, &pa, OP_GEMM, a));
    assert_ok(ctx, run_op(ctx, &pb, OP_GEMM, b));
    CUgraph graph_a = end_capture(ctx, a), graph_b = end_capture(ctx, b);
    CUgraphExec ga = instantiate(ctx, graph_a), gb = instantiate(ctx, graph_b);

    enum { EXTRA = 20 }; /* more than the 16 slots of reduce and scan */
    ptxkit_stream *extra[EXTRA];
    problems px;
    problems_alloc(ctx, &px);
    for (int i = 0; i < EXTRA; i++) assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &extra[i]));
    for (int i = 0; i < REPLAYS; i++) {
        problems_refresh(ctx, &pa);
        problems_refresh(ctx, &pb);
        if (i % 2 == 0) {
            /* one after the other */
            replay(ctx, ga, a);
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, a));
            replay(ctx, gb, b);
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, b));
        } else {
            /* at once, with uncaptured reductions and scans on other streams
             * (into their own outputs: only the scratch is shared) */
            problems_refresh(ctx, &px);
            replay(ctx, ga, a);
            replay(ctx, gb, b);
            for (int k = 0; k < EXTRA; k++)
                assert_ok(ctx, ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, px.red_out + 0, px.red_in, REDUCE_N,
                                             NULL, extra[k]));
            assert_ok(ctx, ptxkit_context_synchronize(ctx));
            problems_check(ctx, &px, OP_REDUCE);
        }
        problems_check(ctx, &pa, ops_a);
        problems_check(ctx, &pb, ops_b);
    }
    for (int i = 0; i < EXTRA; i++) ptxkit_stream_destroy(extra[i]);
    exec_destroy(ctx, ga);
    exec_destroy(ctx, gb);
    ptxkit_stream_destroy(a);
    ptxkit_stream_destroy(b);
    problems_free(ctx, &pa);
    problems_free(ctx, &pb);
    problems_free(ctx, &px);
}

/* ---- the ptxkit_graph API -------------------------------------------------- */

static int popcount(int x) {
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}

/* As capture_and_replay, through ptxkit_graph_capture_begin/_end/_launch. */
static void api_capture_and_replay(int ops) {
    ptxkit_context *ctx = test_gpu();
    problems p;
    problems_alloc(ctx, &p);
    ptxkit_stream *s;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    problems_refresh(ctx, &p);
    assert_ok(ctx, run_ops(ctx, &p, ops, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    problems_check(ctx, &p, ops);

    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
    ptxkit_status st = run_ops(ctx, &p, ops, s);
    ptxkit_graph *g = NULL;
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &g));
    if (st != PTXKIT_SUCCESS) fail_msg("captured ops %d: %s: %s", ops, ptxkit_status_string(st), ptxkit_last_error());
    size_t nodes = 0;
    assert_ok(ctx, ptxkit_graph_node_count_get(ctx, g, &nodes));
    assert_true(nodes >= (size_t)popcount(ops));
    for (int i = 0; i < REPLAYS; i++) {
        problems_refresh(ctx, &p);
        assert_ok(ctx, ptxkit_graph_launch(ctx, g, s));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        problems_check(ctx, &p, ops);
        problems_refresh(ctx, &p);
        assert_ok(ctx, run_ops(ctx, &p, ops, s));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        problems_check(ctx, &p, ops);
    }
    ptxkit_graph_destroy(g);
    ptxkit_stream_destroy(s);
    problems_free(ctx, &p);
}

static void test_api_copy(void **state) { (void)state; api_capture_and_replay(OP_COPY); }
static void test_api_reduce(void **state) { (void)state; api_capture_and_replay(OP_REDUCE); }
static void test_api_scan(void **state) { (void)state; api_capture_and_replay(OP_SCAN); }
static void test_api_transpose(void **state) { (void)state; api_capture_and_replay(OP_TRANSPOSE); }
static void test_api_gemm(void **state) { (void)state; api_capture_and_replay(OP_GEMM); }
static void test_api_sequence(void **state) { (void)state; api_capture_and_replay(OP_ALL); }

static void capture_ops(ptxkit_context *ctx, problems *p, int ops, ptxkit_stream *s) {
    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
    ptxkit_status st = run_ops(ctx, p, ops, s);
    if (st != PTXKIT_SUCCESS) fail_msg("captured ops %d: %s: %s", ops, ptxkit_status_string(st), ptxkit_last_error());
}

static uint32_t read_u32(ptxkit_context *ctx, ptxkit_dptr p) {
    uint32_t v = 0;
    assert_ok(ctx, ptxkit_memory_read(ctx, &v, p, 4));
    return v;
}

/* The same calls on other buffers: the executable graph is patched in
 * place and then writes only the new buffers; another set of calls
 * re-instantiates it. */
static void test_api_update(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    problems pa, pb;
    problems_alloc(ctx, &pa);
    problems_alloc(ctx, &pb);
    ptxkit_stream *s;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    const int ops = OP_REDUCE | OP_SCAN | OP_COPY | OP_GEMM;
    problems_refresh(ctx, &pa);
    assert_ok(ctx, run_ops(ctx, &pa, ops, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));

    capture_ops(ctx, &pa, ops, s);
    ptxkit_graph *g = NULL;
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &g));
    size_t nodes = 0, nodes_after = 0;
    assert_ok(ctx, ptxkit_graph_node_count_get(ctx, g, &nodes));
    problems_refresh(ctx, &pa);
    assert_ok(ctx, ptxkit_graph_launch(ctx, g, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    problems_check(ctx, &pa, ops);

    for (int round = 0; round < 2; round++) {
        problems *now = round == 0 ? &pb : &pa, *before = round == 0 ? &pa : &pb;
        capture_ops(ctx, now, ops, s);
        ptxkit_graph_update_kind how = (ptxkit_graph_update_kind)-1;
        assert_ok(ctx, ptxkit_graph_update(ctx, g, s, &how));
        assert_int_equal(how, PTXKIT_GRAPH_UPDATED_IN_PLACE);
        assert_ok(ctx, ptxkit_graph_node_count_get(ctx, g, &nodes_after));
        assert_int_equal(nodes_after, nodes);
        for (int i = 0; i < 2; i++) {
            problems_refresh(ctx, now);
            problems_refresh(ctx, before); /* poisons its outputs: the graph must leave them */
            assert_ok(ctx, ptxkit_graph_launch(ctx, g, s));
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
            problems_check(ctx, now, ops);
            assert_int_equal(read_u32(ctx, before->red_out), 0xCDCDCDCDu);
            assert_int_equal(read_u32(ctx, before->copy_dst), 0xCDCDCDCDu);
        }
    }
    /* another topology: one call more */
    capture_ops(ctx, &pb, ops | OP_TRANSPOSE, s);
    ptxkit_graph_update_kind how = PTXKIT_GRAPH_UPDATED_IN_PLACE;
    assert_ok(ctx, ptxkit_graph_update(ctx, g, s, &how));
    assert_int_equal(how, PTXKIT_GRAPH_REINSTANTIATED);
    assert_ok(ctx, ptxkit_graph_node_count_get(ctx, g, &nodes_after));
    assert_true(nodes_after > nodes);
    problems_refresh(ctx, &pb);
    assert_ok(ctx, ptxkit_graph_launch(ctx, g, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    problems_check(ctx, &pb, ops | OP_TRANSPOSE);
    /* updating from a stream that is not captured: the graph stays */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_update(ctx, g, s, &how));
    problems_refresh(ctx, &pb);
    assert_ok(ctx, ptxkit_graph_launch(ctx, g, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    problems_check(ctx, &pb, ops | OP_TRANSPOSE);
    ptxkit_graph_destroy(g);
    ptxkit_stream_destroy(s);
    problems_free(ctx, &pa);
    problems_free(ctx, &pb);
}

/* Calls that cannot be captured return PTXKIT_ERROR_CAPTURE mid-capture,
 * do nothing, and the graph holds exactly the calls that succeeded. */
static void test_api_refusals_keep_capture_whole(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    problems p;
    problems_alloc(ctx, &p);
    ptxkit_stream *s, *other;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &other));
    const int ops = OP_REDUCE | OP_COPY;
    problems_refresh(ctx, &p);
    assert_ok(ctx, run_ops(ctx, &p, ops, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    /* the reference: the same calls captured alone */
    capture_ops(ctx, &p, ops, s);
    ptxkit_graph *ref = NULL;
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &ref));
    size_t ref_nodes = 0, nodes = 0;
    assert_ok(ctx, ptxkit_graph_node_count_get(ctx, ref, &ref_nodes));
    ptxkit_graph_destroy(ref);

    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
    assert_ok(ctx, run_op(ctx, &p, OP_REDUCE, s));
    ptxkit_dptr d = 1;
    uint32_t word = 0;
    void *h = NULL;
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_alloc(ctx, 64, &d));
    assert_true(d == 0);
    assert_non_null(strstr(ptxkit_last_error(), "capture"));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_free(ctx, p.red_in));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_host_alloc(ctx, 64, PTXKIT_HOST_DEFAULT, &h));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_read(ctx, &word, p.red_out, 4));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_write(ctx, p.red_out, &word, 4));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_stream_synchronize(ctx, s));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_stream_synchronize(ctx, other));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_stream_query(ctx, s));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_context_synchronize(ctx));
    assert_status(PTXKIT_ERROR_CAPTURE,
                  ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, &word, p.red_in, REDUCE_N, NULL));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_graph_capture_begin(ctx, s));
    /* an op whose scratch this stream does not hold yet */
    assert_status(PTXKIT_ERROR_CAPTURE, run_op(ctx, &p, OP_SCAN, s));
    assert_ok(ctx, run_op(ctx, &p, OP_COPY, s));
    ptxkit_graph *g = NULL;
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &g));
    assert_ok(ctx, ptxkit_graph_node_count_get(ctx, g, &nodes));
    assert_int_equal(nodes, ref_nodes);
    /* the capture is over: the same calls work again */
    assert_ok(ctx, ptxkit_stream_query(ctx, s));
    for (int i = 0; i < 2; i++) {
        problems_refresh(ctx, &p);
        assert_ok(ctx, ptxkit_graph_launch(ctx, g, s));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        problems_check(ctx, &p, ops);
    }
    /* ending twice, and capturing the legacy stream, are argument errors */
    ptxkit_graph *none = (ptxkit_graph *)1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_capture_end(ctx, s, &none));
    assert_null(none);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_capture_begin(ctx, NULL));
    ptxkit_graph_destroy(g);
    ptxkit_stream_destroy(s);
    ptxkit_stream_destroy(other);
    problems_free(ctx, &p);
}

/* Two captures under way on one thread, their calls alternating, ended one
 * at a time (the first instantiation happens while the second capture is
 * still open); both graphs replay correctly. */
static void test_api_two_captures_one_thread(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    problems pa, pb;
    problems_alloc(ctx, &pa);
    problems_alloc(ctx, &pb);
    ptxkit_stream *a, *b;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &a));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b));
    const int ops_a = OP_REDUCE | OP_SCAN, ops_b = OP_COPY | OP_REDUCE | OP_TRANSPOSE;
    problems_refresh(ctx, &pa);
    problems_refresh(ctx, &pb);
    assert_ok(ctx, run_ops(ctx, &pa, ops_a, a));
    assert_ok(ctx, run_ops(ctx, &pb, ops_b, b));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, a));
    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, b));
    assert_ok(ctx, run_op(ctx, &pa, OP_REDUCE, a));
    assert_ok(ctx, run_op(ctx, &pb, OP_COPY, b));
    assert_ok(ctx, run_op(ctx, &pa, OP_SCAN, a));
    assert_ok(ctx, run_op(ctx, &pb, OP_REDUCE, b));
    ptxkit_graph *ga = NULL, *gb = NULL;
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, a, &ga));
    /* b is still captured: the thread's synchronous calls stay refused */
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_context_synchronize(ctx));
    assert_ok(ctx, run_op(ctx, &pb, OP_TRANSPOSE, b));
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, b, &gb));
    for (int i = 0; i < REPLAYS; i++) {
        problems_refresh(ctx, &pa);
        problems_refresh(ctx, &pb);
        assert_ok(ctx, ptxkit_graph_launch(ctx, ga, a));
        assert_ok(ctx, ptxkit_graph_launch(ctx, gb, b));
        assert_ok(ctx, ptxkit_context_synchronize(ctx));
        problems_check(ctx, &pa, ops_a);
        problems_check(ctx, &pb, ops_b);
    }
    ptxkit_graph_destroy(ga);
    ptxkit_graph_destroy(gb);
    ptxkit_stream_destroy(a);
    ptxkit_stream_destroy(b);
    problems_free(ctx, &pa);
    problems_free(ctx, &pb);
}

static void count_replay(void *user) { (*(int *)user)++; }

/* A fork and join across two streams (event record and wait inside the
 * capture), with a host function: all replayed. */
static void test_api_fork_join_host_func(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    problems p;
    problems_alloc(ctx, &p);
    ptxkit_stream *s, *side;
    ptxkit_event *fork, *join;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &side));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DISABLE_TIMING, &fork));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DISABLE_TIMING, &join));
    problems_refresh(ctx, &p);
    assert_ok(ctx, run_ops(ctx, &p, OP_REDUCE, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    int replays = 0;
    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
    assert_ok(ctx, ptxkit_event_record(ctx, fork, s));
    assert_ok(ctx, ptxkit_stream_wait_event(ctx, side, fork));
    assert_ok(ctx, run_op(ctx, &p, OP_COPY, side));
    assert_ok(ctx, run_op(ctx, &p, OP_TRANSPOSE, side));
    assert_ok(ctx, run_op(ctx, &p, OP_REDUCE, s));
    assert_ok(ctx, ptxkit_event_record(ctx, join, side));
    assert_ok(ctx, ptxkit_stream_wait_event(ctx, s, join));
    assert_ok(ctx, ptxkit_host_func_launch(ctx, s, count_replay, &replays));
    ptxkit_graph *g = NULL;
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &g));
    assert_int_equal(replays, 0);
    for (int i = 1; i <= 3; i++) {
        problems_refresh(ctx, &p);
        assert_ok(ctx, ptxkit_graph_launch(ctx, g, s));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        assert_int_equal(replays, i);
        problems_check(ctx, &p, OP_COPY | OP_TRANSPOSE | OP_REDUCE);
    }
    ptxkit_graph_destroy(g);
    ptxkit_event_destroy(fork);
    ptxkit_event_destroy(join);
    ptxkit_stream_destroy(s);
    ptxkit_stream_destroy(side);
    problems_free(ctx, &p);
}

int main(void) {
    test_require_gpu();
    (void)test_gpu();
    if (!load_graph_api()) {
        printf("the driver has no graph API (cuStreamBeginCapture, cuGraphInstantiateWithFlags): skipped\n");
        return TEST_SKIP_EXIT;
    }
    rng = test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_copy),      cmocka_unit_test(test_graph_reduce),
        cmocka_unit_test(test_graph_scan),      cmocka_unit_test(test_graph_transpose),
        cmocka_unit_test(test_graph_gemm),      cmocka_unit_test(test_graph_sequence),
        cmocka_unit_test(test_graph_unprepared_stream), cmocka_unit_test(test_graph_two_streams),
        cmocka_unit_test(test_api_copy),        cmocka_unit_test(test_api_reduce),
        cmocka_unit_test(test_api_scan),        cmocka_unit_test(test_api_transpose),
        cmocka_unit_test(test_api_gemm),        cmocka_unit_test(test_api_sequence),
        cmocka_unit_test(test_api_update),      cmocka_unit_test(test_api_refusals_keep_capture_whole),
        cmocka_unit_test(test_api_fork_join_host_func), cmocka_unit_test(test_api_two_captures_one_thread),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    test_gpu_release();
    return failed;
}
