/* Several GPUs (src/multi): sharded reduce and scan (every operator, type
 * and kind), all-reduce, gather and scatter against a CPU reference over
 * uneven and empty shards, with poisoned outputs.
 *  1. one rank on GPU 0: exactly the single-GPU ptxkit_reduce / ptxkit_scan;
 *  2. 2 and 4 GPUs in this process (ptxkit_comm_create_all), as available;
 *  3. one process per GPU, 2 and 4 as available: the test runs itself as
 *     the children (--child), which exchange the unique id through a file
 *     (rank 0 writes it) and each check their own shards.
 *  4. in the one-process cases: a sharded scan and reduce captured into one
 *     CUDA graph per GPU and replayed on fresh inputs (a refused capture
 *     is a note, a wrong replay a failure).
 * Integers exact; float min/max exact; float sums within the bounds
 * include/ptxkit.h documents (see float_bound). Exit 77 without a GPU or
 * without NCCL; NCCL_NVLS_ENABLE=0 unless the environment sets it.
 * Every line of output says which phase, case and rank it is about.
 * PTXKIT_TEST_MULTI_QUICK=1 keeps int32 and float32 and the uneven layouts
 * (fewer kernels to compile on a machine's first run). */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "ptxkit.h"
#include "ptxkit_ops.h"
#include "raw_graph_api.h"
#include "test_values.h"

#define MAX_RANKS 8
static char who[64] = "gpu_multi";
static int failures;

static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("[%s] ", who);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

static void fail(const char *fmt, ...) {
    if (failures++ >= 20) return; /* the first twenty say enough */
    va_list ap;
    va_start(ap, fmt);
    printf("[%s] FAIL: ", who);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

/* A call that must succeed: on failure the status and message, and the
 * enclosing function returns false. */
#define CHECK(ctx, call)                                                                                    \
    do {                                                                                                    \
        ptxkit_status check_st_ = (call);                                                                   \
        if (check_st_ != PTXKIT_SUCCESS) {                                                                  \
            fail("%s:%d %s -> %s: %s", __FILE__, __LINE__, #call, ptxkit_status_string(check_st_),           \
                 ptxkit_last_error());                                                                   \
            return false;                                                                                   \
        }                                                                                                   \
    } while (0)

static uint64_t rng(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- CPU reference: values held as 8-byte slots ---- */

typedef test_value value;

static void store(void *base, ptxkit_dtype type, size_t i, value v) {
    size_t size = ptxkit_dtype_size(type);
    memcpy((char *)base + i * size, &v, size);
}

static bool is_float(ptxkit_dtype t) { return t == PTXKIT_FLOAT32 || t == PTXKIT_FLOAT64; }
static double as_double(ptxkit_dtype t, value v) { return t == PTXKIT_FLOAT32 ? v.f32 : v.f64; }

static void value_text(ptxkit_dtype type, value v, char *buf, size_t size) {
    switch (type) {
    case PTXKIT_INT32: snprintf(buf, size, "%d", v.i32); break;
    case PTXKIT_UINT32: snprintf(buf, size, "%u", v.u32); break;
    case PTXKIT_INT64: snprintf(buf, size, "%lld", (long long)v.i64); break;
    case PTXKIT_UINT64: snprintf(buf, size, "%llu", (unsigned long long)v.u64); break;
    case PTXKIT_FLOAT32: snprintf(buf, size, "%.9g", v.f32); break;
    default: snprintf(buf, size, "%.17g", v.f64); break;
    }
}

/* Float sums: the documented bounds, with u the unit roundoff and s the
 * sum of |x| over what the result covers. Reduce: (tol + R u) s, tol the
 * single-GPU 1e-5 / 1e-13. Scan at global index i: (ceil((i + 1) / T) + 48
 * + R) u s, T = 4096 (below every tile size ptxkit_scan documents, so
 * looser). */
static double float_bound(ptxkit_dtype type, bool scan, size_t i, int ranks, double abs_sum) {
    double u = type == PTXKIT_FLOAT32 ? 0x1p-24 : 0x1p-53;
    if (!scan) return ((type == PTXKIT_FLOAT32 ? 1e-5 : 1e-13) + ranks * u) * abs_sum;
    return ((double)((i + 1 + 4095) / 4096) + 48 + ranks) * u * abs_sum;
}

/* ---- one communicator's checks ---- */

typedef struct setup {
    ptxkit_comm *comm;
    int ranks, local, first;
    ptxkit_context *ctx[MAX_RANKS];
    ptxkit_stream *stream[MAX_RANKS];
    const char *label;
} setup;

/* The shard sizes of layout k over R ranks: uneven with empty shards. */
static void layout_counts(int k, int ranks, size_t *counts) {
    for (int r = 0; r < ranks; r++) {
        if (k == 0) {
            size_t offset;
            ptxkit_shard_split((1u << 20) + 7, ranks, r, &offset, &counts[r]);
        } else if (k == 1) {
            static const size_t pattern[4] = {1000003, 65537, 0, 4095};
            counts[r] = pattern[r % 4] - (size_t)(r / 4); /* 0 stays 0 only for r < 4 */
            if (r % 4 == 2) counts[r] = 0;
        } else if (k == 2) {
            counts[r] = r == 0 ? 0 : (size_t)r * 31 + 1; /* rank 0 empty; one rank: all empty */
        } else {
            counts[r] = r == ranks - 1 ? 3 : 1; /* tiny shards */
        }
    }
}
enum { LAYOUTS = 4 };

typedef struct buffers {
    ptxkit_dptr in[MAX_RANKS], out[MAX_RANKS], single[MAX_RANKS], red[MAX_RANKS];
} buffers;

static bool upload_all(setup *s, buffers *b, const void *host, ptxkit_dtype type, const size_t *counts,
                       const size_t *offsets) {
    size_t size = ptxkit_dtype_size(type);
    for (int l = 0; l < s->local; l++) {
        int r = s->first + l;
        if (counts[r])
            CHECK(s->ctx[l], ptxkit_memory_write(s->ctx[l], b->in[l], (const char *)host + offsets[r] * size,
                                                counts[r] * size));
    }
    return true;
}

static bool poison(setup *s, ptxkit_dptr *bufs, size_t bytes) {
    for (int l = 0; l < s->local; l++) {
        CHECK(s->ctx[l], ptxkit_memory_set8_async(s->ctx[l], bufs[l], 0xAB, bytes, s->stream[l]));
        CHECK(s->ctx[l], ptxkit_stream_synchronize(s->ctx[l], s->stream[l]));
    }
    return true;
}

static bool sync_all(setup *s) {
    for (int l = 0; l < s->local; l++) CHECK(s->ctx[l], ptxkit_stream_synchronize(s->ctx[l], s->stream[l]));
    CHECK(NULL, ptxkit_comm_check(s->comm));
    return true;
}

/* Reduce of (op, type) on layout counts; every local rank's result checked. */
static bool check_reduce(setup *s, buffers *b, const void *host, ptxkit_reduce_op op, ptxkit_dtype type,
                         const size_t *counts, const size_t *offsets, size_t total, int layout) {
    (void)offsets; /* the shards are in place already; the reference reads the whole array */
    size_t size = ptxkit_dtype_size(type);
    value want = test_value_identity(op, type);
    long double fsum = 0, abs_sum = 0;
    for (size_t i = 0; i < total; i++) {
        value x = test_value_load(type, host, i);
        want = test_value_combine(op, type, want, x);
        if (is_float(type)) fsum += as_double(type, x), abs_sum += fabsl((long double)as_double(type, x));
    }
    if (!poison(s, b->red, 8)) return false;
    size_t n[MAX_RANKS];
    for (int l = 0; l < s->local; l++) n[l] = counts[s->first + l];
    CHECK(s->ctx[0], ptxkit_comm_reduce(s->comm, op, type, b->red, b->in, n, NULL, s->stream));
    if (!sync_all(s)) return false;
    value first;
    memset(&first, 0, sizeof first);
    for (int l = 0; l < s->local; l++) {
        value got;
        memset(&got, 0, sizeof got);
        CHECK(s->ctx[l], ptxkit_memory_read(s->ctx[l], &got, b->red[l], size));
        char g[64], w[64];
        value_text(type, got, g, sizeof g);
        value_text(type, want, w, sizeof w);
        bool ok;
        if (is_float(type) && op == PTXKIT_REDUCE_SUM) {
            double err = fabs(as_double(type, got) - (double)fsum);
            ok = err <= float_bound(type, false, 0, s->ranks, (double)abs_sum);
            snprintf(w, sizeof w, "%.17g", (double)fsum);
        } else {
            ok = memcmp(&got, &want, size) == 0;
        }
        if (!ok)
            fail("%s layout %d: reduce %s %s on rank %d: got %s, want %s", s->label, layout, ptxkit_reduce_op_name(op),
                 ptxkit_dtype_name(type), s->first + l, g, w);
        if (l == 0) first = got;
        else if (memcmp(&got, &first, size) != 0)
            fail("%s layout %d: reduce %s %s: ranks disagree", s->label, layout, ptxkit_reduce_op_name(op),
                 ptxkit_dtype_name(type));
        /* one rank: exactly ptxkit_reduce's answer */
        if (s->ranks == 1) {
            value single;
            memset(&single, 0, sizeof single);
            CHECK(s->ctx[l], ptxkit_reduce(s->ctx[l], op, type, b->single[l], b->in[l], n[l], NULL, s->stream[l]));
            CHECK(s->ctx[l], ptxkit_stream_synchronize(s->ctx[l], s->stream[l]));
            CHECK(s->ctx[l], ptxkit_memory_read(s->ctx[l], &single, b->single[l], size));
            /* float sums: ptxkit_reduce's order may vary between runs; the bound above holds */
            if (memcmp(&single, &got, size) != 0 && is_float(type) && op == PTXKIT_REDUCE_SUM)
                say("note: %s layout %d: float sum with one rank differs in its last bits from ptxkit_reduce",
                    s->label, layout);
            else if (memcmp(&single, &got, size) != 0)
                fail("%s layout %d: reduce %s %s with one rank differs from ptxkit_reduce", s->label, layout,
                     ptxkit_reduce_op_name(op), ptxkit_dtype_name(type));
        }
    }
    return true;
}

/* Scan of (kind, op, type); in_place scans in[] itself (re-uploaded after). */
static bool check_scan(setup *s, buffers *b, const void *host, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                       ptxkit_dtype type, const size_t *counts, const size_t *offsets, size_t total, int layout,
                       bool in_place, void *want_buf, void *got_buf) {
    size_t size = ptxkit_dtype_size(type);
    bool fsum = is_float(type) && op == PTXKIT_REDUCE_SUM;
    /* the reference: exact for integers and min/max; long double sums */
    value acc = test_value_identity(op, type);
    long double lsum = 0, labs = 0;
    long double *exact = fsum ? malloc((total + 1) * sizeof *exact) : NULL, *abs_prefix = fsum ? malloc((total + 1) * sizeof *abs_prefix) : NULL;
    if (fsum && (!exact || !abs_prefix)) {
        free(exact), free(abs_prefix);
        fail("out of host memory");
        return false;
    }
    for (size_t i = 0; i < total; i++) {
        value x = test_value_load(type, host, i);
        if (kind == PTXKIT_SCAN_EXCLUSIVE) store(want_buf, type, i, acc);
        acc = test_value_combine(op, type, acc, x);
        if (fsum) {
            if (kind == PTXKIT_SCAN_EXCLUSIVE) exact[i] = lsum;
            lsum += as_double(type, x), labs += fabsl((long double)as_double(type, x));
            if (kind == PTXKIT_SCAN_INCLUSIVE) exact[i] = lsum;
            abs_prefix[i] = labs;
        }
        if (kind == PTXKIT_SCAN_INCLUSIVE) store(want_buf, type, i, acc);
    }
    ptxkit_dptr *dst = in_place ? b->in : b->out;
    if (!in_place && !poison(s, b->out, 8)) goto fail_free; /* the first bytes at least; all below */
    size_t n[MAX_RANKS];
    for (int l = 0; l < s->local; l++) {
        n[l] = counts[s->first + l];
        if (!in_place && n[l]) {
            ptxkit_status st = ptxkit_memory_set8_async(s->ctx[l], b->out[l], 0xAB, n[l] * size, s->stream[l]);
            if (st != PTXKIT_SUCCESS) {
                fail("poison: %s", ptxkit_last_error());
                goto fail_free;
            }
        }
    }
    {
        ptxkit_status st = ptxkit_comm_scan(s->comm, kind, op, type, dst, b->in, n, NULL, s->stream);
        if (st != PTXKIT_SUCCESS) {
            fail("%s layout %d: ptxkit_comm_scan -> %s: %s", s->label, layout, ptxkit_status_string(st),
                 ptxkit_last_error());
            goto fail_free;
        }
    }
    if (!sync_all(s)) goto fail_free;
    for (int l = 0; l < s->local; l++) {
        int r = s->first + l;
        if (!n[l]) continue;
        if (ptxkit_memory_read(s->ctx[l], got_buf, dst[l], n[l] * size) != PTXKIT_SUCCESS) {
            fail("download: %s", ptxkit_last_error());
            goto fail_free;
        }
        for (size_t k = 0; k < n[l]; k++) {
            size_t i = offsets[r] + k;
            value got = test_value_load(type, got_buf, k), want = test_value_load(type, want_buf, i);
            bool ok;
            if (fsum) {
                double err = fabs(as_double(type, got) - (double)exact[i]);
                ok = err <= float_bound(type, true, i, s->ranks, (double)abs_prefix[i]);
                if (!ok) {
                    fail("%s layout %d: %s scan %s %s%s on rank %d at %zu (global %zu): got %.17g, want %.17g (error "
                         "%.3g > bound %.3g)",
                         s->label, layout, ptxkit_scan_kind_name(kind), ptxkit_reduce_op_name(op),
                         ptxkit_dtype_name(type), in_place ? " in place" : "", r, k, i, as_double(type, got),
                         (double)exact[i], err, float_bound(type, true, i, s->ranks, (double)abs_prefix[i]));
                    break;
                }
            } else {
                ok = memcmp(&got, &want, size) == 0;
                if (!ok) {
                    char g[64], w[64];
                    value_text(type, got, g, sizeof g);
                    value_text(type, want, w, sizeof w);
                    fail("%s layout %d: %s scan %s %s%s on rank %d at %zu (global %zu): got %s, want %s", s->label,
                         layout, ptxkit_scan_kind_name(kind), ptxkit_reduce_op_name(op), ptxkit_dtype_name(type),
                         in_place ? " in place" : "", r, k, i, g, w);
                    break;
                }
            }
        }
        /* one rank: byte for byte ptxkit_scan's output */
        if (s->ranks == 1 && !in_place) {
            char *single = malloc(n[l] * size);
            if (!single) goto fail_free;
            bool same = ptxkit_scan(s->ctx[l], kind, op, type, b->single[l], b->in[l], n[l], NULL, s->stream[l]) ==
                            PTXKIT_SUCCESS &&
                        ptxkit_stream_synchronize(s->ctx[l], s->stream[l]) == PTXKIT_SUCCESS &&
                        ptxkit_memory_read(s->ctx[l], single, b->single[l], n[l] * size) == PTXKIT_SUCCESS;
            /* float sums may differ in their last bits from run to run (look-back timing):
             * compared above against the bound; the rest must be identical */
            if (!same) fail("single-GPU scan failed: %s", ptxkit_last_error());
            else if (!fsum && memcmp(single, got_buf, n[l] * size) != 0)
                fail("%s layout %d: %s scan %s %s with one rank differs from ptxkit_scan", s->label, layout,
                     ptxkit_scan_kind_name(kind), ptxkit_reduce_op_name(op), ptxkit_dtype_name(type));
            free(single);
        }
    }
    free(exact), free(abs_prefix);
    /* the input was overwritten: put it back for the next case */
    return in_place ? upload_all(s, b, host, type, counts, offsets) : true;
fail_free:
    free(exact), free(abs_prefix);
    return false;
}

/* All-reduce of a vector of m elements: rank r's vector is host + r * m. */
static bool check_allreduce(setup *s, buffers *b, const void *host, ptxkit_reduce_op op, ptxkit_dtype type, size_t m,
                            void *got_buf) {
    size_t size = ptxkit_dtype_size(type);
    for (int l = 0; l < s->local; l++)
        CHECK(s->ctx[l], ptxkit_memory_write(s->ctx[l], b->in[l], (const char *)host + (size_t)(s->first + l) * m * size,
                                            m * size));
    if (!poison(s, b->out, m * size)) return false;
    CHECK(s->ctx[0], ptxkit_comm_allreduce(s->comm, op, type, b->out, b->in, m, s->stream));
    if (!sync_all(s)) return false;
    for (int l = 0; l < s->local; l++) {
        CHECK(s->ctx[l], ptxkit_memory_read(s->ctx[l], got_buf, b->out[l], m * size));
        for (size_t k = 0; k < m; k++) {
            value want = test_value_load(type, host, k);
            long double sum = as_double(type, want), abs_sum = fabsl(sum);
            for (int r = 1; r < s->ranks; r++) {
                value x = test_value_load(type, host, (size_t)r * m + k);
                want = test_value_combine(op, type, want, x);
                if (is_float(type)) sum += as_double(type, x), abs_sum += fabsl((long double)as_double(type, x));
            }
            value got = test_value_load(type, got_buf, k);
            bool ok = is_float(type) && op == PTXKIT_REDUCE_SUM
                          ? fabs(as_double(type, got) - (double)sum) <=
                                s->ranks * (type == PTXKIT_FLOAT32 ? 0x1p-24 : 0x1p-53) * (double)abs_sum
                          : memcmp(&got, &want, size) == 0;
            if (!ok) {
                char g[64], w[64];
                value_text(type, got, g, sizeof g);
                value_text(type, want, w, sizeof w);
                fail("%s: allreduce %s %s on rank %d at %zu: got %s, want %s", s->label, ptxkit_reduce_op_name(op),
                     ptxkit_dtype_name(type), s->first + l, k, g, w);
                break;
            }
        }
    }
    return true;
}

/* Gather the shards of layout counts on root, then scatter them back. */
static bool check_gather_scatter(setup *s, buffers *b, const void *host, ptxkit_dtype type, const size_t *counts,
                                 const size_t *offsets, size_t total, int root, void *got_buf) {
    size_t size = ptxkit_dtype_size(type);
    if (!upload_all(s, b, host, type, counts, offsets)) return false;
    int root_local = root - s->first;
    bool here = root_local >= 0 && root_local < s->local;
    ptxkit_dptr root_out = here ? b->single[root_local] : 0;
    if (here && total) {
        CHECK(s->ctx[root_local], ptxkit_memory_set8_async(s->ctx[root_local], root_out, 0xAB, total * size, s->stream[root_local]));
    }
    CHECK(s->ctx[0], ptxkit_comm_gather(s->comm, type, root, root_out, b->in, counts, s->stream));
    if (!sync_all(s)) return false;
    if (here && total) {
        CHECK(s->ctx[root_local], ptxkit_memory_read(s->ctx[root_local], got_buf, root_out, total * size));
        if (memcmp(got_buf, host, total * size) != 0) fail("%s: gather to rank %d differs from the shards", s->label, root);
    }
    /* scatter root's gathered array back into poisoned shards */
    for (int l = 0; l < s->local; l++) {
        size_t c = counts[s->first + l];
        if (c) CHECK(s->ctx[l], ptxkit_memory_set8_async(s->ctx[l], b->out[l], 0xAB, c * size, s->stream[l]));
    }
    CHECK(s->ctx[0], ptxkit_comm_scatter(s->comm, type, root, b->out, root_out, counts, s->stream));
    if (!sync_all(s)) return false;
    for (int l = 0; l < s->local; l++) {
        int r = s->first + l;
        if (!counts[r]) continue;
        CHECK(s->ctx[l], ptxkit_memory_read(s->ctx[l], got_buf, b->out[l], counts[r] * size));
        if (memcmp(got_buf, (const char *)host + offsets[r] * size, counts[r] * size) != 0)
            fail("%s: scatter from rank %d: rank %d's shard differs", s->label, root, r);
    }
    return true;
}

/* Every check on one communicator; data from seed, the same in every process. */
static bool run_checks(setup *s, uint64_t seed) {
    size_t counts[MAX_RANKS], offsets[MAX_RANKS], total, max_shard = 0, max_total = 0;
    for (int k = 0; k < LAYOUTS; k++) {
        layout_counts(k, s->ranks, counts);
        ptxkit_shard_offsets_get(counts, s->ranks, offsets, &total);
        for (int r = 0; r < s->ranks; r++) max_shard = counts[r] > max_shard ? counts[r] : max_shard;
        max_total = total > max_total ? total : max_total;
    }
    const size_t m = 100003; /* all-reduce vector length */
    if (max_shard < m) max_shard = m;
    if (max_total < m * (size_t)s->ranks) max_total = m * (size_t)s->ranks;
    buffers b;
    memset(&b, 0, sizeof b);
    bool ok = false;
    char *host = malloc(max_total * 8), *want = malloc(max_total * 8), *got = malloc(max_total * 8);
    if (!host || !want || !got) {
        fail("out of host memory");
        goto done;
    }
    for (int l = 0; l < s->local; l++) {
        CHECK(s->ctx[l], ptxkit_memory_alloc(s->ctx[l], max_shard * 8 + 8, &b.in[l]));
        CHECK(s->ctx[l], ptxkit_memory_alloc(s->ctx[l], max_shard * 8 + 8, &b.out[l]));
        CHECK(s->ctx[l], ptxkit_memory_alloc(s->ctx[l], max_total * 8 + 8, &b.single[l]));
        CHECK(s->ctx[l], ptxkit_memory_alloc(s->ctx[l], 64, &b.red[l]));
    }
    int cases = 0;
    /* PTXKIT_TEST_MULTI_QUICK=1: int32 and float32, the uneven layouts only */
    const char *quick_env = getenv("PTXKIT_TEST_MULTI_QUICK");
    bool quick = quick_env && strcmp(quick_env, "1") == 0;
    for (int k = 0; k < LAYOUTS; k++) {
        if (quick && k != 1 && k != 2) continue;
        layout_counts(k, s->ranks, counts);
        ptxkit_shard_offsets_get(counts, s->ranks, offsets, &total);
        char shape[256] = "";
        for (int r = 0, used = 0; r < s->ranks && used < (int)sizeof shape - 24; r++)
            used += snprintf(shape + used, sizeof shape - (size_t)used, "%s%zu", r ? " " : "", counts[r]);
        say("%s layout %d: shards [%s], %zu elements", s->label, k, shape, total);
        for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++) {
            ptxkit_dtype type = (ptxkit_dtype)t;
            if (quick && type != PTXKIT_INT32 && type != PTXKIT_FLOAT32) continue;
            uint64_t st = seed * 1000003u + (uint64_t)(k * 16 + t);
            for (size_t i = 0; i < total; i++) {
                value v;
                uint64_t bits = rng(&st);
                memcpy(&v, &bits, 8);
                if (type == PTXKIT_FLOAT32) v.f32 = (float)((double)(bits >> 11) * 0x1p-53 * 2 - 1);
                if (type == PTXKIT_FLOAT64) v.f64 = (double)(bits >> 11) * 0x1p-53 * 2 - 1;
                store(host, type, i, v);
            }
            if (!upload_all(s, &b, host, type, counts, offsets)) goto done;
            for (int o = 0; o < PTXKIT_REDUCE_OP_COUNT; o++) {
                ptxkit_reduce_op op = (ptxkit_reduce_op)o;
                if (ptxkit_reduce_supported(NULL, op, type) == PTXKIT_SUCCESS) {
                    if (!check_reduce(s, &b, host, op, type, counts, offsets, total, k)) goto done;
                    cases++;
                }
                if (ptxkit_scan_supported(NULL, PTXKIT_SCAN_INCLUSIVE, op, type) != PTXKIT_SUCCESS) continue;
                for (int kind = 0; kind < PTXKIT_SCAN_KIND_COUNT; kind++) {
                    /* in place on one layout, for every operator of int32 and float32 */
                    bool in_place = k == 1 && (type == PTXKIT_INT32 || type == PTXKIT_FLOAT32);
                    if (!check_scan(s, &b, host, (ptxkit_scan_kind)kind, op, type, counts, offsets, total, k, false,
                                    want, got))
                        goto done;
                    if (in_place && !check_scan(s, &b, host, (ptxkit_scan_kind)kind, op, type, counts, offsets, total,
                                                k, true, want, got))
                        goto done;
                    cases += 1 + in_place;
                }
            }
        }
        if (!check_gather_scatter(s, &b, host, PTXKIT_INT64, counts, offsets, total, s->ranks - 1, got)) goto done;
        cases += 2;
    }
    /* all-reduce: sum, min, max of every type */
    for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++) {
        ptxkit_dtype type = (ptxkit_dtype)t;
        uint64_t st = seed * 7919u + (uint64_t)t;
        for (size_t i = 0; i < m * (size_t)s->ranks; i++) {
            value v;
            uint64_t bits = rng(&st);
            memcpy(&v, &bits, 8);
            if (type == PTXKIT_FLOAT32) v.f32 = (float)((double)(bits >> 11) * 0x1p-53 * 2 - 1);
            if (type == PTXKIT_FLOAT64) v.f64 = (double)(bits >> 11) * 0x1p-53 * 2 - 1;
            store(host, type, i, v);
        }
        for (int o = PTXKIT_REDUCE_SUM; o <= PTXKIT_REDUCE_MAX; o++) {
            if (!check_allreduce(s, &b, host, (ptxkit_reduce_op)o, type, m, got)) goto done;
            cases++;
        }
    }
    /* what NCCL cannot do is refused, not attempted */
    if (ptxkit_comm_allreduce(s->comm, PTXKIT_REDUCE_XOR, PTXKIT_INT32, b.out, b.in, 1, s->stream) !=
        PTXKIT_ERROR_UNSUPPORTED)
        fail("%s: allreduce xor is not UNSUPPORTED", s->label);
    say("%s: %d cases run", s->label, cases);
    ok = true;
done:
    for (int l = 0; l < s->local; l++) {
        ptxkit_memory_free(s->ctx[l], b.in[l]), ptxkit_memory_free(s->ctx[l], b.out[l]);
        ptxkit_memory_free(s->ctx[l], b.single[l]), ptxkit_memory_free(s->ctx[l], b.red[l]);
    }
    free(host), free(want), free(got);
    return ok;
}

/* ---- capture (the graph API straight from the driver: raw_graph_api.h) ---- */

/* A driver call on ctx's CUDA context; its CUresult. */
#define ON(ctx, expr)                                                \
    ({                                                               \
        CUresult on_r_ = CUDA_ERROR_INVALID_CONTEXT;                 \
        if (ptxkit_context_enter(ctx) == PTXKIT_SUCCESS) {           \
            on_r_ = (expr);                                          \
            ptxkit_context_leave(ctx);                               \
        }                                                            \
        on_r_;                                                       \
    })

/* A sharded int32 inclusive scan (sum) and reduce (max) of uneven shards,
 * captured on every GPU's stream at once (global mode, one thread, as
 * nccl-tests captures), instantiated, then replayed twice on new inputs
 * written into the same buffers. */
static bool capture_check(setup *s, uint64_t seed) {
    if (!load_graph_api()) {
        say("%s: capture: the driver has no graph API: skipped", s->label);
        return true;
    }
    size_t counts[MAX_RANKS], offsets[MAX_RANKS], total;
    for (int r = 0; r < s->ranks; r++) counts[r] = r == 1 ? 0 : (size_t)(300007 + 1001 * r);
    ptxkit_shard_offsets_get(counts, s->ranks, offsets, &total);
    bool ok = false;
    int32_t *host = malloc(total * 4 + 4), *got = malloc(total * 4 + 4);
    ptxkit_dptr in[MAX_RANKS] = {0}, out[MAX_RANKS] = {0}, red[MAX_RANKS] = {0};
    CUgraphExec exec[MAX_RANKS] = {0};
    size_t n[MAX_RANKS];
    if (!host || !got) goto done;
    for (int l = 0; l < s->local; l++) {
        n[l] = counts[l];
        CHECK(s->ctx[l], ptxkit_memory_alloc(s->ctx[l], n[l] * 4 + 4, &in[l]));
        CHECK(s->ctx[l], ptxkit_memory_alloc(s->ctx[l], n[l] * 4 + 4, &out[l]));
        CHECK(s->ctx[l], ptxkit_memory_alloc(s->ctx[l], 8, &red[l]));
    }
    /* one uncaptured call loads the kernels and gives the streams scratch */
    CHECK(s->ctx[0], ptxkit_comm_scan(s->comm, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in, n, NULL,
                                      s->stream));
    CHECK(s->ctx[0], ptxkit_comm_reduce(s->comm, PTXKIT_REDUCE_MAX, PTXKIT_INT32, red, in, n, NULL, s->stream));
    if (!sync_all(s)) goto done;
    for (int l = 0; l < s->local; l++) {
        CUresult r = ON(s->ctx[l], drv.begin((CUstream)ptxkit_stream_handle_get(s->stream[l]), CU_STREAM_CAPTURE_MODE_GLOBAL));
        if (r != CUDA_SUCCESS) {
            say("%s: note: cuStreamBeginCapture refused (CUresult %d): capture not checked", s->label, (int)r);
            ok = true;
            goto done;
        }
    }
    ptxkit_status st1 = ptxkit_comm_scan(s->comm, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in, n,
                                         NULL, s->stream);
    ptxkit_status st2 = st1 == PTXKIT_SUCCESS
                            ? ptxkit_comm_reduce(s->comm, PTXKIT_REDUCE_MAX, PTXKIT_INT32, red, in, n, NULL, s->stream)
                            : st1;
    char why[512];
    snprintf(why, sizeof why, "%s", ptxkit_last_error());
    bool captured = st1 == PTXKIT_SUCCESS && st2 == PTXKIT_SUCCESS;
    CUgraph graph[MAX_RANKS] = {0};
    for (int l = 0; l < s->local; l++) {
        CUresult r = ON(s->ctx[l], drv.end((CUstream)ptxkit_stream_handle_get(s->stream[l]), &graph[l]));
        if (r != CUDA_SUCCESS && captured) {
            snprintf(why, sizeof why, "cuStreamEndCapture on rank %d: CUresult %d", l, (int)r);
            captured = false;
        }
    }
    for (int l = 0; l < s->local && captured; l++) {
        CUresult r = ON(s->ctx[l], drv.instantiate(&exec[l], graph[l], 0));
        if (r != CUDA_SUCCESS) snprintf(why, sizeof why, "cuGraphInstantiate on rank %d: CUresult %d", l, (int)r), captured = false;
    }
    for (int l = 0; l < s->local; l++)
        if (graph[l]) ON(s->ctx[l], drv.destroy(graph[l]));
    if (!captured) {
        say("%s: note: capture of the sharded calls refused: %s (capture not checked)", s->label, why);
        ok = true;
        goto done;
    }
    for (int round = 0; round < 2; round++) {
        uint64_t st = seed * 31u + (uint64_t)round;
        for (size_t i = 0; i < total; i++) host[i] = (int32_t)(rng(&st) % 2001) - 1000;
        int32_t want_max = INT32_MIN;
        for (size_t i = 0; i < total; i++) want_max = host[i] > want_max ? host[i] : want_max;
        for (int l = 0; l < s->local; l++) {
            if (n[l]) CHECK(s->ctx[l], ptxkit_memory_write(s->ctx[l], in[l], host + offsets[l], n[l] * 4));
            CHECK(s->ctx[l], ptxkit_memory_set8_async(s->ctx[l], out[l], 0xAB, n[l] * 4 + 4, s->stream[l]));
            CHECK(s->ctx[l], ptxkit_stream_synchronize(s->ctx[l], s->stream[l]));
        }
        for (int l = 0; l < s->local; l++) {
            CUresult r = ON(s->ctx[l], drv.launch(exec[l], (CUstream)ptxkit_stream_handle_get(s->stream[l])));
            if (r != CUDA_SUCCESS) {
                fail("%s: cuGraphLaunch on rank %d: CUresult %d", s->label, l, (int)r);
                goto done;
            }
        }
        if (!sync_all(s)) goto done;
        int64_t prefix = 0;
        for (int l = 0; l < s->local; l++) {
            int32_t m = 0;
            CHECK(s->ctx[l], ptxkit_memory_read(s->ctx[l], &m, red[l], 4));
            if (m != want_max) fail("%s: captured reduce (max) on rank %d: got %d, want %d", s->label, l, m, want_max);
            if (n[l]) CHECK(s->ctx[l], ptxkit_memory_read(s->ctx[l], got, out[l], n[l] * 4));
            for (size_t k = 0; k < n[l]; k++) {
                prefix += host[offsets[l] + k];
                if (got[k] != (int32_t)prefix) {
                    fail("%s: captured scan, replay %d, rank %d at %zu: got %d, want %d", s->label, round, l, k, got[k],
                         (int32_t)prefix);
                    break;
                }
            }
        }
    }
    say("%s: capture: one graph per GPU, replayed twice", s->label);
    ok = true;
done:
    for (int l = 0; l < s->local; l++) {
        if (exec[l]) ON(s->ctx[l], drv.exec_destroy(exec[l]));
        ptxkit_memory_free(s->ctx[l], in[l]), ptxkit_memory_free(s->ctx[l], out[l]), ptxkit_memory_free(s->ctx[l], red[l]);
    }
    free(host), free(got);
    return ok;
}

/* ---- the three phases ---- */

static bool single_process(int ranks, uint64_t seed) {
    setup s;
    memset(&s, 0, sizeof s);
    char label[64];
    snprintf(label, sizeof label, "%d GPU%s, one process", ranks, ranks == 1 ? "" : "s");
    s.label = label, s.ranks = ranks, s.local = ranks;
    say("%s: opening", label);
    bool ok = false;
    for (int l = 0; l < ranks; l++) {
        CHECK(NULL, ptxkit_context_create(l, &s.ctx[l]));
        CHECK(s.ctx[l], ptxkit_stream_create(s.ctx[l], PTXKIT_STREAM_NON_BLOCKING, 0, &s.stream[l]));
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ptxkit_status st = ptxkit_comm_create_all(s.ctx, ranks, &s.comm);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st != PTXKIT_SUCCESS) {
        fail("%s: ptxkit_comm_create_all -> %s: %s", label, ptxkit_status_string(st), ptxkit_last_error());
    } else {
        ptxkit_comm_info info;
        ptxkit_comm_info_get(s.comm, &info);
        say("%s: communicator of %d ranks in %.2f s (NCCL %d)", label, info.ranks,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), info.nccl_version);
        if (info.ranks != ranks || info.local_ranks != ranks || info.first_rank != 0)
            fail("%s: ptxkit_comm_info_get says %d/%d/%d", label, info.ranks, info.local_ranks, info.first_rank);
        ok = run_checks(&s, seed);
        if (ok) ok = capture_check(&s, seed);
    }
    ptxkit_comm_destroy(s.comm);
    for (int l = 0; l < ranks; l++) {
        ptxkit_stream_destroy(s.stream[l]);
        ptxkit_context_destroy(s.ctx[l]);
    }
    return ok;
}

/* A child: rank `rank` of `ranks` on GPU `rank`; rank 0 writes the id. */
static int child(const char *dir, int ranks, int rank, uint64_t seed) {
    snprintf(who, sizeof who, "gpu_multi rank %d/%d pid %d", rank, ranks, (int)getpid());
    setup s;
    memset(&s, 0, sizeof s);
    char label[64], id_path[4096], tmp_path[4200];
    snprintf(label, sizeof label, "%d processes", ranks);
    s.label = label, s.ranks = ranks, s.local = 1, s.first = rank;
    snprintf(id_path, sizeof id_path, "%s/id", dir);
    ptxkit_status st = ptxkit_context_create(rank, &s.ctx[0]);
    if (st != PTXKIT_SUCCESS) {
        fail("ptxkit_context_create(%d): %s", rank, ptxkit_last_error());
        return 1;
    }
    if (ptxkit_stream_create(s.ctx[0], PTXKIT_STREAM_NON_BLOCKING, 0, &s.stream[0]) != PTXKIT_SUCCESS) return fail("stream"), 1;
    unsigned char id[PTXKIT_COMM_ID_BYTES];
    if (rank == 0) {
        if ((st = ptxkit_comm_unique_id_get(id)) != PTXKIT_SUCCESS) {
            fail("ptxkit_comm_unique_id_get: %s", ptxkit_last_error());
            return 1;
        }
        /* written whole, then renamed: a reader never sees half an id */
        snprintf(tmp_path, sizeof tmp_path, "%s.tmp", id_path);
        FILE *f = fopen(tmp_path, "wb");
        if (!f || fwrite(id, 1, sizeof id, f) != sizeof id || fclose(f) != 0 || rename(tmp_path, id_path) != 0) {
            fail("writing %s: %s", id_path, strerror(errno));
            return 1;
        }
    } else {
        bool got = false;
        for (int i = 0; i < 1200 && !got; i++) { /* two minutes */
            FILE *f = fopen(id_path, "rb");
            if (f) {
                got = fread(id, 1, sizeof id, f) == sizeof id;
                fclose(f);
            }
            if (!got) usleep(100000);
        }
        if (!got) {
            fail("no unique id in %s after 120 s (did rank 0 start?)", id_path);
            return 1;
        }
    }
    say("joining");
    if ((st = ptxkit_comm_create_rank(s.ctx[0], id, ranks, rank, &s.comm)) != PTXKIT_SUCCESS) {
        fail("ptxkit_comm_create_rank -> %s: %s", ptxkit_status_string(st), ptxkit_last_error());
        return 1;
    }
    ptxkit_comm_info info;
    ptxkit_comm_info_get(s.comm, &info);
    if (info.ranks != ranks || info.local_ranks != 1 || info.first_rank != rank)
        fail("ptxkit_comm_info_get says %d/%d/%d", info.ranks, info.local_ranks, info.first_rank);
    bool ok = run_checks(&s, seed);
    ptxkit_comm_destroy(s.comm);
    ptxkit_stream_destroy(s.stream[0]);
    ptxkit_context_destroy(s.ctx[0]);
    say("%s", ok && !failures ? "passed" : "FAILED");
    return ok && !failures ? 0 : 1;
}

static bool process_per_gpu(const char *self, int ranks, uint64_t seed) {
    char dir[] = "/tmp/ptxkit-gpu-multi-XXXXXX";
    if (!mkdtemp(dir)) return fail("mkdtemp: %s", strerror(errno)), false;
    say("%d processes: id file in %s", ranks, dir);
    pid_t pids[MAX_RANKS];
    for (int r = 0; r < ranks; r++) {
        char ranks_s[16], rank_s[16], seed_s[32];
        snprintf(ranks_s, sizeof ranks_s, "%d", ranks);
        snprintf(rank_s, sizeof rank_s, "%d", r);
        snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)seed);
        fflush(stdout);
        pids[r] = fork();
        if (pids[r] == 0) {
            execl("/proc/self/exe", self, "--child", dir, ranks_s, rank_s, seed_s, (char *)NULL);
            fprintf(stderr, "exec %s: %s\n", self, strerror(errno));
            _exit(127);
        }
        if (pids[r] < 0) return fail("fork: %s", strerror(errno)), false;
    }
    /* every child within ten minutes, or all are killed */
    bool ok = true;
    int left = ranks;
    for (int tick = 0; left && tick < 6000; tick++) {
        for (int r = 0; r < ranks; r++) {
            int status;
            if (pids[r] <= 0 || waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
            bool passed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (!passed) {
                fail("%d processes: rank %d %s %d", ranks, r, WIFEXITED(status) ? "exited with" : "killed by signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                ok = false;
            }
            pids[r] = 0, left--;
        }
        if (left) usleep(100000);
    }
    for (int r = 0; r < ranks; r++)
        if (pids[r] > 0) {
            fail("%d processes: rank %d still running after 600 s: killed", ranks, r);
            kill(pids[r], SIGKILL);
            waitpid(pids[r], NULL, 0);
            ok = false;
        }
    char path[4200];
    snprintf(path, sizeof path, "%s/id", dir);
    unlink(path);
    rmdir(dir);
    return ok;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* NVLink SHARP needs multicast objects, which the test machines keep off */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    setenv("NCCL_DEBUG", "WARN", 0); /* NCCL says why when it fails */
    if (argc == 6 && strcmp(argv[1], "--child") == 0)
        return child(argv[2], atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10));
    int count = 0;
    if (ptxkit_device_count_get(&count) != PTXKIT_SUCCESS || count < 1) {
        say("skipped: no GPU (%s)", ptxkit_last_error());
        return 77;
    }
    char path[4096], version[32];
    if (ptxkit_comm_library_get(path, sizeof path, version, sizeof version) != PTXKIT_SUCCESS) {
        say("skipped: %s", ptxkit_last_error());
        return 77;
    }
    uint64_t seed = 1;
    const char *env = getenv("PTXKIT_TEST_SEED");
    seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    say("PTXKIT_TEST_SEED=%llu; %d GPU%s; NCCL %s from %s; NCCL_NVLS_ENABLE=%s", (unsigned long long)seed, count,
        count == 1 ? "" : "s", version, path, getenv("NCCL_NVLS_ENABLE"));
    if (count > MAX_RANKS) count = MAX_RANKS;
    const int sizes[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        if (sizes[i] > count) {
            say("%d GPUs, one process: skipped (%d GPU%s here)", sizes[i], count, count == 1 ? "" : "s");
            continue;
        }
        if (!single_process(sizes[i], seed)) fail("%d GPUs, one process: stopped early", sizes[i]);
    }
    for (int i = 1; i < 3; i++) {
        if (sizes[i] > count) {
            say("%d processes: skipped (%d GPU%s here)", sizes[i], count, count == 1 ? "" : "s");
            continue;
        }
        if (!process_per_gpu(argv[0], sizes[i], seed)) fail("%d processes: failed", sizes[i]);
    }
    say("%s (%d failure%s)", failures ? "FAILED" : "passed", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
