/* ptxkit_ops.h: ptxkit's kernel families as operations on device arrays
 * (copy, reduction, scan, transpose, GEMM) and across several GPUs.
 *
 * Part of ptxkit's public interface with ptxkit.h (core: errors, contexts,
 * memory, streams, programs, kernels, launch), which it includes, and
 * ptxkit_tune.h (the tuner). The grammar, the error and thread rules and the
 * experimental tier are ptxkit.h's. */
#ifndef PTXKIT_OPS_H
#define PTXKIT_OPS_H

#include "ptxkit.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ---- copy -------------------------------------------------------------- */

/* Every op has companions of one shape, named after it:
 *  - <op>_supported(ctx, selectors...): SUCCESS where the op provides the
 *    selectors (operator, type, kind, transposes) on ctx's GPU, else
 *    UNSUPPORTED with the reason in ptxkit_last_error(); INVALID_ARGUMENT
 *    for a value out of its enum's range. ctx NULL asks about any GPU.
 *    Which selectors an op provides does not depend on the GPU today (the
 *    kernels differ between GPUs, never the answer), so a context and NULL
 *    answer alike; the context is in the shape for the day one does. Plain
 *    CPU code: no driver call, no GPU needed; any thread.
 *  - <op>_config_get: the configuration the op would run for a problem,
 *    resolved (tuned or default), without compiling or launching.
 *  - <op>_prepare, for the ops that own per-stream scratch (reduce, scan)
 *    or compile per configuration (gemm): compiles and loads what the call
 *    would launch, and for the stream-owning ones takes the stream's
 *    scratch, so that the next call on that stream compiles, loads and
 *    allocates nothing (ahead of a timed loop or a capture).
 * Copy and transpose own no scratch and have no _prepare: their kernels
 * load at their first call. */

/* Whether ptxkit_copy runs on ctx's GPU (NULL: any GPU): SUCCESS, as it has
 * no selectors and every GPU ptxkit runs on has its kernels. There so that
 * code asking each op before calling it needs no exception for copy. */
ptxkit_status ptxkit_copy_supported(ptxkit_context *ctx);

/* Copies `bytes` bytes between any two device addresses (no overlap), with
 * 4-, 8- or 16-byte vector accesses where the addresses allow and a
 * funnel-shift path where they are not mutually aligned. config (NULL:
 * tuned or default): the common parameters, "unroll" (vectors in flight per
 * thread, 1 to 64) and "blocks_per_sm" (a persistent grid of that many
 * blocks per SM, 1 to 64; 0: one block per tile). */
ptxkit_status ptxkit_copy(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                          const ptxkit_config *config, ptxkit_stream *stream);
/* The configuration ptxkit_copy runs for these arguments (config as the
 * call takes it: NULL for the tuned entry or the defaults), into *out,
 * resolved: "path" (JIT or PTX, as AUTO resolves where NVRTC is present),
 * "load_op", "block_size", "vector_bytes" (the access width dst - src
 * allows within the one asked for: 16, 8 or 4; 4 also where they are not
 * 4-byte apart, the funnel-shift kernel's aligned words), "unroll" and
 * "blocks_per_sm" (0: one block per tile). Only dst - src matters of the
 * pointers, and with bytes 0 they are not checked (the question for no
 * particular copy). Nothing is compiled, launched or tuned
 * (PTXKIT_TUNE=auto does not tune a missing bucket for it). Errors: the
 * call's argument and configuration errors; UNSUPPORTED for a
 * configuration the precompiled PTX lacks on the PTX path (the call's);
 * INVALID_ARGUMENT for a NULL context or out. Any thread; no stream. */
ptxkit_status ptxkit_copy_config_get(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                                     const ptxkit_config *config, ptxkit_config *out);

/* ---- reduction --------------------------------------------------------- */

typedef enum ptxkit_reduce_op {
    PTXKIT_REDUCE_SUM = 0,  /* integers wrap modulo 2^w */
    PTXKIT_REDUCE_MIN,
    PTXKIT_REDUCE_MAX,
    PTXKIT_REDUCE_AND,      /* unsigned types only */
    PTXKIT_REDUCE_OR,
    PTXKIT_REDUCE_XOR,
    PTXKIT_REDUCE_OP_COUNT
} ptxkit_reduce_op;

/* Whether ptxkit_reduce provides (op, type) on ctx's GPU (NULL: any GPU),
 * as every <op>_supported (see copy): SUCCESS, UNSUPPORTED with the reason
 * (the combinations are listed below), INVALID_ARGUMENT out of range. */
ptxkit_status ptxkit_reduce_supported(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type);

/* Reduces n elements at `in` (any element-aligned address) into one element
 * written at `out` on `stream`. n == 0 writes the operator's identity.
 * Provided: sum, min, max of int32, uint32, float32, float64; sum of int64
 * and uint64; and, or, xor of the integer types (else UNSUPPORTED). Integer
 * sums wrap modulo 2^w. Float sums add in a tree order: within 1e-5
 * (float32) / 1e-13 (float64) of sum |x_i| from the exact sum. Float min/max
 * ignore NaNs as fminf/fmaxf do. One launch; any number of streams may
 * reduce at the same time. config (NULL: tuned or default): the common
 * parameters, "loads_in_flight" (vector loads of vector_bytes, 16 by
 * default, in flight per thread, 1 to 16) and "blocks_per_sm" (grid blocks
 * per SM, 1 to 64; 0: from occupancy). On the JIT path, an input one
 * block covers gets the narrowest block that covers it where block_size is
 * not named, and, up to a quarter block's loads in flight, loads one
 * element wide where vector_bytes is not named (ptxkit_reduce_config_get
 * tells which). During capture (see the stream functions): UNSUPPORTED
 * where the stream holds no scratch yet. */
ptxkit_status ptxkit_reduce(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr out,
                            ptxkit_dptr in, size_t n, const ptxkit_config *config, ptxkit_stream *stream);
/* Same, and waits for the result: `result` points to one element of `type`.
 * Runs on the default stream and allocates a small result buffer per call. */
ptxkit_status ptxkit_reduce_to_host(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, void *result,
                                    ptxkit_dptr in, size_t n, const ptxkit_config *config);
/* The configuration ptxkit_reduce runs for (op, type) at n elements with
 * config (NULL: the defaults or the tuned entry), into *out, resolved:
 * "path" (JIT or PTX, as AUTO resolves where NVRTC is present),
 * "load_op", "block_size", "vector_bytes", "loads_in_flight" and
 * "blocks_per_sm" (0: from occupancy). Nothing is compiled, launched or
 * tuned (PTXKIT_TUNE=auto does not tune a missing bucket for it). Errors:
 * the call's configuration and operator errors; INVALID_ARGUMENT for a
 * NULL context or out. Any thread. */
ptxkit_status ptxkit_reduce_config_get(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                       const ptxkit_config *config, ptxkit_config *out);
/* Everything ptxkit_reduce(ctx, op, type, out, in, n, config, stream)
 * does but the launch: the same checks (on any aligned out and in), the
 * kernel compiled or loaded and its resolution remembered, and, where the
 * call would use scratch (more than one block of work), `stream`'s scratch
 * slot taken (runtime rule: a stream keeps it while among the 16 most
 * recently used streams of the op). So the next ptxkit_reduce of (op,
 * type) on `stream` with n elements and the same config compiles, loads
 * and allocates nothing, and may be captured (see "CUDA graph capture" in ptxkit.h:
 * prepare before beginning the capture). Nothing is written to device
 * memory; the slot's hand-over from another stream is queued on `stream`
 * as the call would queue it. Errors: the call's; on a stream being
 * captured it answers as the call would (PTXKIT_ERROR_CAPTURE where the
 * stream holds no scratch), recording nothing. Any thread. */
ptxkit_status ptxkit_reduce_prepare(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                    const ptxkit_config *config, ptxkit_stream *stream);

/* ---- scan (prefix sum) ------------------------------------------------- */

typedef enum ptxkit_scan_kind {
    PTXKIT_SCAN_INCLUSIVE = 0,  /* out[i] = in[0] op in[1] op ... op in[i] */
    PTXKIT_SCAN_EXCLUSIVE,      /* out[0] = identity, out[i] = in[0] op ... op in[i-1] */
    PTXKIT_SCAN_KIND_COUNT
} ptxkit_scan_kind;

/* Whether ptxkit_scan provides (kind, op, type) on ctx's GPU (NULL: any
 * GPU): both kinds of the combinations ptxkit_reduce provides; the answers
 * as ptxkit_reduce_supported's. */
ptxkit_status ptxkit_scan_supported(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                                    ptxkit_dtype type);

/* Scans n elements at `in` into n elements at `out` on `stream`; the result
 * stays on the device. Operators and types as ptxkit_reduce: sum, min, max
 * of int32, uint32, float32, float64; sum of int64 and uint64; and, or, xor
 * of the integer types (else UNSUPPORTED). The exclusive identity is 0 for
 * sum, or and xor, all ones for and, the type's largest value (+inf) for
 * min and its smallest (-inf) for max. Integer sums wrap modulo 2^w; float
 * min/max ignore NaNs as fminf/fmaxf do.
 *
 * in and out may be any element-aligned addresses (the fastest case: the
 * same offset from a 16-byte boundary); in == out scans in place; any other
 * overlap is INVALID_ARGUMENT. n == 0 does nothing. One launch, one pass
 * over the data (n read, n written): single-pass scan with decoupled
 * look-back (Merrill & Garland 2016), with per-context scratch, so any
 * number of streams may scan at the same time.
 *
 * Float sums: the array is cut into tiles of T elements. On sm_90 and later
 * (JIT path, tiles staged in shared memory) T = block size x
 * vectors_per_thread x elements per 16-byte vector: with the defaults 256 x 16
 * below 64 MB of data and 1024 x 7 from 64 MB, 16384 or 28672 for float32
 * and 8192 or 14336 for float64. Elsewhere T = (block size - 32, the
 * look-back warp) x vectors_per_thread x elements per vector: 11520 for
 * float32 and 5760 for float64 with the defaults there, 512 threads and 6
 * vectors. Within a tile the sum is a tree of depth under 48; across
 * tiles it is sequential: a tile's prefix is an earlier tile's prefix plus
 * a tree sum of the tiles between. So out[i] differs from the exact prefix
 * sum by at most (ceil((i + 1) / T) + 48) * u *
 * sum_{j <= i} |in[j]|, with u = 2^-24 (float32) or 2^-53 (float64): the
 * bound of a sequential sum over tiles (typical errors are far smaller, and
 * grow like the square root of the tile count). Which earlier prefix a tile
 * builds on depends on timing, so float sums may differ in their last bits
 * from run to run; integer results never do. During capture (see the stream
 * functions): UNSUPPORTED where the stream holds no scratch, or too little
 * for n; a captured scan clears its tile status words in the graph.
 * config (NULL: tuned or default): the common parameters and
 * "vectors_per_thread" (vectors of vector_bytes per thread in a tile, 1 to
 * 16); one block per tile, so no blocks_per_sm. */
ptxkit_status ptxkit_scan(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                          ptxkit_dptr out, ptxkit_dptr in, size_t n, const ptxkit_config *config,
                          ptxkit_stream *stream);
/* The configuration ptxkit_scan runs for (op, type) at n elements, as
 * ptxkit_reduce_config_get: "path", "load_op", "block_size",
 * "vector_bytes" and "vectors_per_thread". */
ptxkit_status ptxkit_scan_config_get(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                     const ptxkit_config *config, ptxkit_config *out);
/* Everything ptxkit_scan(ctx, kind, op, type, out, in, n, config, stream)
 * does but the launch, as ptxkit_reduce_prepare: the kernel compiled or
 * loaded and its resolution remembered, and, where the call would run
 * more than one tile, `stream`'s scratch slot taken and grown for n
 * elements at any alignment of `in` (a new scratch buffer is cleared on
 * `stream`). The next ptxkit_scan of (op, type), either kind, on `stream`
 * with n elements and the same config compiles, loads and allocates
 * nothing, and may be captured. n == 0 prepares nothing (the
 * call launches nothing). Errors: the call's; on a stream being captured
 * it answers as the call would (PTXKIT_ERROR_CAPTURE or UNSUPPORTED where
 * the stream's scratch is missing or too small), recording nothing. Any
 * thread. */
ptxkit_status ptxkit_scan_prepare(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                                  size_t n, const ptxkit_config *config, ptxkit_stream *stream);

/* ---- host arrays ---------------------------------------------------------
 *
 * Reduce, scan and transform of arrays that sit in host memory, at the
 * speed of the bus: the array is cut into chunks that flow through a
 * pipeline over several streams (H2D copy -> kernel -> D2H copy, ordered
 * by events), so the copies of one chunk overlap the kernels of others.
 * Partial results are combined on the device (reduce: one partial per
 * chunk, reduced on the GPU, one small read-back; scan: the carry is
 * chained on the device from chunk to chunk), so nothing but the data and
 * one result crosses the bus. Named ptxkit_host_<verb> as the other calls
 * on host memory (ptxkit_host_alloc, ptxkit_host_register): the object is
 * the host array.
 *
 * Where the data come from (ptxkit_host_options.path; the same for out):
 *  - pinned memory (ptxkit_host_alloc*, or a range ptxkit_host_register
 *    page-locked): the copy engines read and write the caller's buffer
 *    directly (detected per call with cuPointerGetAttributes);
 *  - pageable memory: either staged, host threads copying each chunk into
 *    a ring of pinned buffers while the previous chunk is on the bus, or
 *    registered (cuMemHostRegister) for the call and unregistered at its
 *    end; AUTO picks by size (below one chunk a single copy by the calling
 *    thread is cheapest; above, staging with several threads costs less
 *    than pinning every page and unpinning it again unless too few copy
 *    threads are available, and then registration is used);
 *  - mapped (PTXKIT_HOST_PATH_MAPPED): no copies; the kernels read and
 *    write host memory through its device address (zero-copy), for
 *    comparison. Arrays must be element-aligned (MISALIGNED otherwise).
 *    Pageable arrays are registered mapped for the call (INVALID_ARGUMENT
 *    where the driver refuses, e.g. a page of them already registered:
 *    in and out sharing a page, or a range the application registered);
 *    pinned ones must be mapped (PTXKIT_HOST_MAPPED, or any pinned memory
 *    on a system with unified addressing).
 * A pageable array the driver refuses to register (REGISTERED, or AUTO
 * choosing it) is staged instead.
 * Other paths accept host pointers at any byte address.
 *
 * The pinned staging ring, its device buffers and its streams belong to the
 * context: allocated at the first call that needs them (grown when a call
 * asks for larger chunks or more streams), freed when the context closes.
 * Calls on one context take the ring in turn (one runs at a time; others
 * wait); calls on different contexts run in parallel. The calls are
 * synchronous: they return when the result is in host memory, and they run
 * on the ring's own non-blocking streams, so they do not wait for work the
 * caller queued on other streams: synchronize those first when the input
 * is written by the GPU. Not capturable: PTXKIT_ERROR_CAPTURE on a thread
 * that is capturing a stream (nothing is done).
 *
 * Errors: INVALID_ARGUMENT for NULL pointers (with n > 0), an enum out of
 * range, options out of range, out overlapping in (scan, transform), or a
 * device address given as a host pointer; OVERFLOW when n elements do not
 * fit in size_t bytes or in the address space; UNSUPPORTED for an (op,
 * type) the device op lacks. The input is never written. On any error
 * every copy has finished before the call returns (nothing touches the
 * caller's memory afterwards); a reduce writes *result only on success,
 * while scan and transform write `out` chunk by chunk, so after an error
 * its contents are undefined (the status is always an error then). */

/* Chunk size and stream count of the pipeline when the options leave them
 * 0: chunks large enough that a copy runs at the bus's full rate and small
 * enough that the pipeline fills and drains quickly. The streams are the
 * kernels' (chunk i's on stream i mod k, each with its buffers: k chunks
 * in flight); every upload runs on one more stream and every download on
 * another, in chunk order, so each direction of the bus stays busy with
 * one copy at a time. */
#define PTXKIT_HOST_CHUNK_BYTES ((size_t)16 << 20)
#define PTXKIT_HOST_STREAMS 4
/* A reduce whose input is not staged (pinned or registered) keeps two
 * chunks in flight: its kernels are short, and with more streams its
 * uploads ran measurably slower on an H200. */
#define PTXKIT_HOST_REDUCE_STREAMS 2
#define PTXKIT_HOST_MAX_STREAMS 8
/* The most host threads copying pageable data (0 in the options: up to
 * this many, never more than the processors online). */
#define PTXKIT_HOST_MAX_THREADS 16

typedef enum ptxkit_host_path {
    PTXKIT_HOST_PATH_AUTO = 0,   /* pinned: directly; pageable: staged or registered, by size */
    PTXKIT_HOST_PATH_STAGED,     /* pageable data go through the pinned ring (pinned: directly) */
    PTXKIT_HOST_PATH_REGISTERED, /* pageable data are registered for the call (pinned: directly) */
    PTXKIT_HOST_PATH_MAPPED,     /* zero-copy: kernels read and write host memory over the bus */
    PTXKIT_HOST_PATH_COUNT
} ptxkit_host_path;


/* Options of the host-array calls; zero-initialize (or pass NULL) for the
 * defaults. */
typedef struct ptxkit_host_options {
    ptxkit_host_path path;
    size_t chunk_bytes;  /* 0: PTXKIT_HOST_CHUNK_BYTES; else 64 KiB to 1 GiB */
    int streams;         /* kernel streams (chunks in flight): 0: PTXKIT_HOST_STREAMS (a reduce of
                          * data not staged: PTXKIT_HOST_REDUCE_STREAMS); else 1..PTXKIT_HOST_MAX_STREAMS */
    int threads;         /* host threads staging pageable data, the caller's included: 0 default,
                          * else 1..PTXKIT_HOST_MAX_THREADS */
    int reserved[4];     /* zero: later 0.x releases give these meaning, 0 keeping today's */
} ptxkit_host_options;

/* Reduces n elements of `type` at host address `in` into *result (one
 * element of `type`, host memory). Operators and types as ptxkit_reduce;
 * n == 0 writes the operator's identity. Float sums: each chunk is reduced
 * by ptxkit_reduce and the chunks' partials by another, so the bound is
 * ptxkit_reduce's: within 1e-5 (float32) / 1e-13 (float64) of sum |x_i|
 * from the exact sum. */
ptxkit_status ptxkit_host_reduce(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, void *result,
                                 const void *in, size_t n, const ptxkit_host_options *options);
/* Scans n elements at host address `in` into n elements at host address
 * `out` (no overlap, not even in place: INVALID_ARGUMENT). Kinds,
 * operators, types and identities as ptxkit_scan; n == 0 does nothing.
 * Each chunk is scanned by ptxkit_scan and the running total of the chunks
 * before it is added on the device, so a float sum's out[i] is within
 * ptxkit_scan's bound plus ceil((i + 1) / C) * u * sum_{j <= i} |in[j]|, C
 * the elements per chunk: the chunks are one more level of sequential
 * tiles. */
ptxkit_status ptxkit_host_scan(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                               void *out, const void *in, size_t n, const ptxkit_host_options *options);
/* Host -> device -> host: each chunk of n elements of `type` at `in` is
 * copied to the device, `kernel` (an application kernel of this context)
 * runs on it, and its output is copied back to the same place of `out`
 * (no overlap with in: INVALID_ARGUMENT). The kernel's signature is
 * (T *out, const T *in, unsigned long long n), T the element type; it
 * writes out[i] for every i < n from in (any function of in), covering
 * [0, n) with a grid-stride loop: it is launched with 256-thread blocks
 * and at most 32 blocks per SM, no dynamic shared memory, on the chunk (n
 * is the chunk's count; out and in are 256-byte aligned device addresses,
 * or, mapped, the host arrays' device addresses). kernel NULL copies in to
 * out through the device (a round trip, no kernel). n == 0 does nothing. */
struct ptxkit_kernel; /* ptxkit_kernel, declared with the programs below */
ptxkit_status ptxkit_host_transform(ptxkit_context *ctx, struct ptxkit_kernel *kernel, ptxkit_dtype type, void *out,
                                    const void *in, size_t n, const ptxkit_host_options *options);

/* ---- transpose --------------------------------------------------------- */

typedef enum ptxkit_transpose_kind {
    PTXKIT_TRANSPOSE_PADDED = 0,  /* shared tile padded against bank conflicts */
    PTXKIT_TRANSPOSE_NAIVE,       /* coalesced reads, strided writes */
    PTXKIT_TRANSPOSE_TILED        /* shared tile, unpadded */
} ptxkit_transpose_kind;

/* Whether ptxkit_transpose provides (kind, type) on ctx's GPU (NULL: any
 * GPU), as every <op>_supported (see copy): every kind of float32 and
 * float64; UNSUPPORTED for the other types, INVALID_ARGUMENT out of range. */
ptxkit_status ptxkit_transpose_supported(ptxkit_context *ctx, ptxkit_transpose_kind kind, ptxkit_dtype type);

/* dst (cols x rows) = transpose of src (rows x cols), both row-major and
 * dense; float32 or float64. config (NULL: tuned or default): the common
 * parameters and "tile", the side of the square tile a block moves (16, 32,
 * 64 or 128); block_size threads move it (tile <= block_size <= tile^2, at
 * most 64 elements each; without block_size the default narrowed to fit);
 * vector_bytes is the access width where whole tiles allow it. Where
 * tile, block_size and vector_bytes are all absent, the padded kind takes the tuned configuration
 * (`ptxkit tune transpose`) of its type and shape class (sides of whole
 * 16-byte vectors or not) for the power of two nearest rows x cols, else the
 * built-in defaults. */
ptxkit_status ptxkit_transpose(ptxkit_context *ctx, ptxkit_transpose_kind kind, ptxkit_dtype type, ptxkit_dptr dst,
                               ptxkit_dptr src, size_t rows, size_t cols, const ptxkit_config *config,
                               ptxkit_stream *stream);
/* The configuration ptxkit_transpose runs for these arguments (config as
 * the call takes it: NULL for the defaults or the tuned entry), into *out:
 * "tile", "block_size" and "vector_bytes", resolved. Nothing is compiled or
 * launched; the errors are the call's argument errors, and INVALID_ARGUMENT
 * for a NULL out. */
ptxkit_status ptxkit_transpose_config_get(ptxkit_context *ctx, ptxkit_transpose_kind kind, ptxkit_dtype type,
                                          size_t rows, size_t cols, const ptxkit_config *config, ptxkit_config *out);

/* ---- matrix multiply (GEMM) --------------------------------------------- */

/* op(X): the matrix as stored, or its transpose. */
typedef enum ptxkit_gemm_op {
    PTXKIT_GEMM_N = 0,  /* op(X) = X */
    PTXKIT_GEMM_T,      /* op(X) = X^T */
    PTXKIT_GEMM_OP_COUNT
} ptxkit_gemm_op;


/* The GEMM kernels' configuration, the parameters ptxkit_gemm reads from
 * a ptxkit_config (families/gemm/gemm.cu, and gemm_dmma.cu for float64
 * from sm_80 on): a block of (bm / tm) x (bn / tn) threads computes a
 * "bm" x "bn" tile of C, k in steps of "bk" through a ring of "stages"
 * shared-memory buffers fed by cp.async; each thread holds "tm" x "tn"
 * elements of C in registers; the block's warps are "warps_m" along M.
 * "split_k" cuts K into that many slices (at most 64), computed by
 * separate blocks and summed by a second kernel (absent or 0: chosen by
 * shape, 1: none). On the FP64 tensor cores a warp's tile is (8 tm) x
 * (4 tn), mma tiles of 16 x 8, so warps_m = bm / (8 tm); tm even, tn a
 * multiple of 4, tm x tn <= 64. No other names. */

/* C = alpha * op(A) * op(B) + beta * C on `stream`, float32 or float64
 * (else UNSUPPORTED), all matrices row-major: op(A) is m x k, op(B) k x n,
 * C m x n. A is stored m x k (op_a N, lda >= k) or k x m (op_a T, lda >=
 * m); B k x n (op_b N, ldb >= n) or n x k (op_b T, ldb >= k); ldc >= n;
 * every leading dimension at least 1. Pointers are element-aligned (the
 * fastest case: 16-byte aligned with leading dimensions of whole 16-byte
 * vectors). Any m, n, k up to 2^31 - 1; m or n == 0 does nothing; k == 0
 * or alpha == 0 reads neither A nor B (C = beta * C). beta == 0 never reads
 * C, so C may hold NaNs. C must not overlap A or B (INVALID_ARGUMENT).
 *
 * float32 on sm_90 (H100, H200): the FP64 tensor cores, as float64 below:
 * each product of two floats is exact in double, the sums are double's,
 * alpha and beta are applied in double, and C is rounded to float once,
 * so |C - exact| <= u * |exact| + (k + 2) * 2^-53 * (|alpha| * sum_k
 * |a_ik b_kj| + |beta c_ij|) with u = 2^-24: at least as close as any
 * float32 FMA chain, and no TF32 (ptxkit_gemm_f32_tensor_cores_set turns
 * it off). float32 on other GPUs (and float64 before sm_80): FMA on the
 * CUDA cores, no tensor cores, so results compare with cuBLAS in its
 * pedantic FP32 mode; each element of C is one sequential chain of fused
 * multiply-adds over k (in k order, or in k parts added in order where
 * stream-K shares a tile). float64 from sm_80 on: the FP64 tensor cores
 * (mma.sync f64, round to nearest, which cublasDgemm uses even in pedantic
 * mode), summing over k in a fixed order that is not k order. With
 * split-K the slices' sums are added in slice order. So on the CUDA
 * cores and for float64, |C - exact| <= (k + 2) * u * (|alpha| * sum_k
 * |a_ik b_kj| + |beta c_ij|) with u = 2^-24 (float32) or 2^-53 (float64).
 * Results do not change from run to run.
 *
 * config: NULL or without bm .. stages for the tuned configuration
 * (`ptxkit tune gemm`) of the call's type and shape class (small m, small
 * n, small k or none, a side being small below 256) at the size bucket
 * floor(log2(m n k)), else the built-in one; else a whole configuration
 * (bm .. stages all set; split_k optional), INVALID_ARGUMENT when the
 * kernel cannot run it or for a name above not listed (float32 on sm_90:
 * the tensor-core kernel's configurations, bk 32; one that only the
 * CUDA-core kernel takes runs on the CUDA cores). JIT only:
 * NO_NVRTC where NVRTC is missing and the kernel is not in the disk cache.
 * Split-K uses per-stream scratch: calls on different streams stay
 * correct, ordered through it. During capture (see the stream functions):
 * UNSUPPORTED where split-K needs more scratch than the stream holds. */
ptxkit_status ptxkit_gemm(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b, size_t m,
                          size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b, size_t ldb,
                          double beta, ptxkit_dptr c, size_t ldc, const ptxkit_config *config,
                          ptxkit_stream *stream);

/* Whether ptxkit_gemm provides (type, op_a, op_b) on ctx's GPU (NULL: any
 * GPU), as every <op>_supported (see copy): float32 and float64 with either
 * transpose of each operand (the float64 kernel differs with and without
 * FP64 tensor cores, the answer does not); UNSUPPORTED for the other
 * types, INVALID_ARGUMENT out of range. Not asked: whether NVRTC is
 * present (gemm is JIT only; ptxkit_jit_available, or ptxkit_gemm_prepare,
 * which compiles). */
ptxkit_status ptxkit_gemm_supported(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a,
                                    ptxkit_gemm_op op_b);

/* The configuration ptxkit_gemm runs for (type, m, n, k) with config NULL,
 * into *out: all eight names (split_k as the call would choose it); *tuned
 * (may be NULL) receives whether it came from the tuning database. */
ptxkit_status ptxkit_gemm_config_get(ptxkit_context *ctx, ptxkit_dtype type, size_t m, size_t n, size_t k,
                                     ptxkit_config *out, int *tuned);
/* Everything ptxkit_gemm(ctx, type, op_a, op_b, m, n, k, alpha, A, lda, B,
 * ldb, beta, C, ldc, config, stream) does but the launches, as
 * ptxkit_reduce_prepare, for 16-byte aligned operands with packed leading
 * dimensions (lda = k for op_a N, m for T; ldb = n for N, k for T; ldc =
 * n): the configuration resolved for the shape (config NULL: tuned or
 * built-in), its kernels compiled or loaded, and, where the shape splits
 * K, `stream`'s split-K scratch taken and grown. The next ptxkit_gemm of
 * that shape on `stream` with the same config and operands of that kind
 * (other leading dimensions may need another kernel) compiles, loads and
 * allocates nothing, and may be captured. m or n 0 prepares nothing.
 * Errors: the call's (INVALID_ARGUMENT for a config that is not a
 * configuration, UNSUPPORTED for a type other than float32/float64); on a
 * stream being captured it answers as the call would. Any thread. */
ptxkit_status ptxkit_gemm_prepare(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                  size_t m, size_t n, size_t k, const ptxkit_config *config, ptxkit_stream *stream);

/* ==== experimental tier ==================================================
 *
 * Compiled only where PTXKIT_EXPERIMENTAL is defined before this header is
 * included. NOT STABLE: these declarations may change or go away in any
 * release, patch releases included, and are not covered by the soname's
 * promise (README, "Versions and ABI"). They are the ptxkit command's
 * benchmark switches and measuring hooks, and interfaces whose shape is
 * still moving; an application that uses them pins the exact library
 * version, as zstd's ZSTD_STATIC_LINKING_ONLY asks. */
#ifdef PTXKIT_EXPERIMENTAL

/* ---- experimental: reduction -------------------------------------------- */

const char *ptxkit_reduce_op_name(ptxkit_reduce_op op);

/* ---- experimental: scan (prefix sum) ------------------------------------ */

/* "inclusive", "exclusive"; NULL for a value out of range. */
const char *ptxkit_scan_kind_name(ptxkit_scan_kind kind);

/* ---- experimental: matrix multiply (GEMM) ------------------------------- */

/* "n", "t"; NULL for a value out of range. */
const char *ptxkit_gemm_op_name(ptxkit_gemm_op op);

/* The candidate configurations `ptxkit bench gemm --tiles sweep` and the
 * tests time for a type on this context's GPU (float64 differs between GPUs
 * with and without FP64 tensor cores), split_k 0 (by shape). Copies up to
 * capacity of them to out (may be NULL with capacity 0); *count receives
 * how many there are. */
ptxkit_status ptxkit_gemm_sweep_tiles(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_config *out, int capacity,
                                      int *count);

/* The K slices ptxkit_gemm of `type` uses for this configuration at (m,
 * n, k) on this context's GPU: its split_k, or when that is absent or 0 the
 * one chosen by shape (1: no split), which depends on the type through the
 * blocks an SM holds. INVALID_ARGUMENT for NULL, or a config without
 * positive bm, bn and bk; UNSUPPORTED for a type other than float32 and
 * float64. */
ptxkit_status ptxkit_gemm_split_k_get(ptxkit_context *ctx, ptxkit_dtype type, const ptxkit_config *config, size_t m,
                                      size_t n, size_t k, int *split_k);

/* ---- experimental: several GPUs ----------------------------------------- */

/*
 * Arrays split across GPUs ("shards", one per rank, each on its rank's GPU)
 * and the collectives between them, through NCCL (libnccl.so.2, 2.12 or
 * newer), which ptxkit opens with dlopen as it opens the driver: where it
 * looks, in order: PTXKIT_NCCL_PATH alone when set; else the loader's search
 * path, $CUDA_HOME/lib64, the nvidia-nccl pip wheel under $VIRTUAL_ENV or
 * $CONDA_PREFIX, /usr/local/cuda/lib64. Without it every call below answers
 * UNSUPPORTED, the reason in ptxkit_last_error().
 *
 * A communicator holds the ranks this process drives: several (one per
 * context, ptxkit_comm_create_all) or one (ptxkit_comm_create_rank, one
 * process per GPU, on one host or many). The sharded calls take arrays
 * with one entry per local rank, in the order of the contexts given at
 * creation: out[i], in[i], n[i] and streams[i] belong to local rank i (a
 * NULL streams, or a NULL entry, is that context's default stream). With
 * one process per rank, every rank makes the same calls in the same order
 * (NCCL's rule). Reduce and scan move only one value per rank through NCCL:
 * each rank reduces or scans its shard with ptxkit_reduce / ptxkit_scan on
 * its GPU, the per-rank totals are all-gathered, and a scan adds the total
 * of the ranks before it to its shard. Everything is queued on the given
 * streams and returns before it has run; ptxkit_stream_synchronize each
 * stream to wait. The contexts must be ptxkit_context_create ones (primary
 * contexts, which NCCL uses) and outlive the communicator. Calls on one
 * communicator are not concurrent: they share its small per-rank buffer of
 * totals, so the next call's work must follow the previous call's on each
 * rank (the same stream, or ordered by events). Capture (cuStreamBeginCapture):
 * the calls record into the graph once their kernels for (op, type) are
 * loaded (one call outside capture), as NCCL allows for its collectives.
 * The few small kernels reduce and scan add (a shard's total, the totals'
 * combination, the offset added to a scanned shard) are a ptxkit program:
 * compiled by NVRTC on first use for each (operator, type), then taken from
 * the kernel caches; with no NVRTC and a cold cache those calls answer
 * NO_NVRTC. All-reduce, gather and scatter are NCCL's alone.
 * NCCL failures are DRIVER (INVALID_ARGUMENT for NCCL's invalid argument)
 * with NCCL's name and message, recorded on the failing rank's context.
 * NVLink SHARP (NVLS) needs multicast objects: set NCCL_NVLS_ENABLE=0 in
 * the environment before the first communicator where they must not be used.
 */
typedef struct ptxkit_comm ptxkit_comm;

/* Bytes of the unique id of ptxkit_comm_unique_id_get (NCCL's ncclUniqueId). */
#define PTXKIT_COMM_ID_BYTES 128

typedef struct ptxkit_comm_info {
    int ranks;            /* ranks in the communicator, over all processes */
    int local_ranks;      /* ranks this process drives (the arrays' length) */
    int first_rank;       /* rank of local rank 0; local rank i is first_rank + i */
    int nccl_version;     /* ncclGetVersion's code, e.g. 22809 */
    int reserved[4];      /* zero today */
} ptxkit_comm_info;

/* The NCCL file the calls below use and how it was found, e.g.
 * "/usr/lib/x86_64-linux-gnu/libnccl.so.2 (found through the loader's search
 * path)", and its version as "2.28.9" (either buffer may be NULL; short
 * buffers truncate). UNSUPPORTED, with every place tried and why each failed
 * (missing, older than 2.12, not NCCL) in ptxkit_last_error(), when none
 * loads. Any thread. */
ptxkit_status ptxkit_comm_library_get(char *path, size_t path_size, char *version, size_t version_size);

/* A new unique id (ncclGetUniqueId) as PTXKIT_COMM_ID_BYTES bytes into id:
 * one process creates it and hands it to every rank's
 * ptxkit_comm_create_rank however it likes (a file, MPI_Bcast, a socket).
 * It names a rendezvous this process opens: create it once per communicator. */
ptxkit_status ptxkit_comm_unique_id_get(unsigned char id[PTXKIT_COMM_ID_BYTES]);

/* One communicator over count contexts of this process, rank i on
 * contexts[i] (ncclCommInitAll): count in [1, 1024], each context a
 * distinct GPU. Blocks until NCCL has set up every rank. */
ptxkit_status ptxkit_comm_create_all(ptxkit_context *const *contexts, int count, ptxkit_comm **out);

/* This process's rank `rank` of `ranks` (ncclCommInitRank) on ctx, with the
 * id one process made with ptxkit_comm_unique_id_get. Blocks until all
 * ranks have joined. */
ptxkit_status ptxkit_comm_create_rank(ptxkit_context *ctx, const unsigned char id[PTXKIT_COMM_ID_BYTES], int ranks,
                                      int rank, ptxkit_comm **out);

/* Waits for the communicator's work, then frees it (ncclCommDestroy) and
 * its buffers; the contexts stay open. NULL is a no-op. */
void ptxkit_comm_destroy(ptxkit_comm *comm);

ptxkit_status ptxkit_comm_info_get(const ptxkit_comm *comm, ptxkit_comm_info *out);

/* The context of local rank i (NULL out of range or for a NULL comm). */
ptxkit_context *ptxkit_comm_context_get(const ptxkit_comm *comm, int local_rank);

/* An error NCCL met while running queued work (ncclCommGetAsyncError), on
 * any local rank: SUCCESS, or DRIVER with NCCL's message on that rank's
 * context. */
ptxkit_status ptxkit_comm_check(ptxkit_comm *comm);

/* Reduces the sharded array (local rank i's shard: n[i] elements at in[i])
 * into one element written at out[i] on every local rank, as ptxkit_reduce
 * does on one GPU: the same operators and types, empty shards allowed (the
 * identity where every shard is empty). Integers: exact (sums wrap modulo
 * 2^w). Float sums: each shard within ptxkit_reduce's bound, the ranks'
 * totals then added in rank order: within (1e-5 + ranks * 2^-24) (float32)
 * or (1e-13 + ranks * 2^-53) (float64) of sum |x_i| from the exact sum; every
 * rank gets the same value. config goes to each rank's ptxkit_reduce. */
ptxkit_status ptxkit_comm_reduce(ptxkit_comm *comm, ptxkit_reduce_op op, ptxkit_dtype type, const ptxkit_dptr *out,
                                 const ptxkit_dptr *in, const size_t *n, const ptxkit_config *config,
                                 ptxkit_stream *const *streams);

/* Scans the sharded array as ptxkit_scan scans one (kinds, operators and
 * types as there; in[i] == out[i] scans in place; empty shards allowed):
 * out[i] gets the prefixes of the whole array at local rank i's positions.
 * Integers: exact. Float sums: ptxkit_scan's bound within each shard, plus
 * (ranks * 2^-24 or 2^-53) * sum |x_j| over the ranks before. Float min/max
 * ignore NaNs as fminf/fmaxf do. config goes to each rank's ptxkit_scan. */
ptxkit_status ptxkit_comm_scan(ptxkit_comm *comm, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                               const ptxkit_dptr *out, const ptxkit_dptr *in, const size_t *n,
                               const ptxkit_config *config, ptxkit_stream *const *streams);

/* Element-wise all-reduce of a vector of n elements held by every rank
 * (ncclAllReduce): out[i][k] = in[0][k] op in[1][k] op ... over all ranks.
 * SUM, MIN and MAX of every type (NCCL has no bitwise operators:
 * UNSUPPORTED); in[i] == out[i] works in place. Float sums in NCCL's order. */
ptxkit_status ptxkit_comm_allreduce(ptxkit_comm *comm, ptxkit_reduce_op op, ptxkit_dtype type, const ptxkit_dptr *out,
                                    const ptxkit_dptr *in, size_t n, ptxkit_stream *const *streams);

/* Gathers the shards into one array on rank `root`: counts[r] elements of
 * every rank r (all ranks' counts, the same on every rank; zeros allowed)
 * land at out + offset of r (ptxkit_shard_offsets_get) on root. in[i]: local
 * rank i's shard; out: root's array (read only where this process holds
 * root, may be 0 elsewhere). Through NCCL send/receive. */
ptxkit_status ptxkit_comm_gather(ptxkit_comm *comm, ptxkit_dtype type, int root, ptxkit_dptr out,
                                 const ptxkit_dptr *in, const size_t *counts, ptxkit_stream *const *streams);

/* The inverse: root's array `in` is cut into counts[r] elements per rank,
 * rank r's part written at out[local index of r]. */
ptxkit_status ptxkit_comm_scatter(ptxkit_comm *comm, ptxkit_dtype type, int root, const ptxkit_dptr *out,
                                  ptxkit_dptr in, const size_t *counts, ptxkit_stream *const *streams);

/* Shard bookkeeping (plain CPU code). ptxkit_shard_split: the even split of
 * total elements over ranks, rank's first element and count (the first
 * total % ranks ranks hold one more). ptxkit_shard_offsets_get: offsets[r] =
 * counts[0] + ... + counts[r - 1] for ranks counts, and their sum in *total
 * (may be NULL); OVERFLOW when it does not fit in size_t. */
ptxkit_status ptxkit_shard_split(size_t total, int ranks, int rank, size_t *offset, size_t *count);

ptxkit_status ptxkit_shard_offsets_get(const size_t *counts, int ranks, size_t *offsets, size_t *total);

/* ---- experimental: experiment switches of `ptxkit bench reduce|scan|gemm` --- */

/* ptxkit_reduce with the number of launches forced: 1 (the last block
 * reduces the partials; what ptxkit_reduce does), 2 (a second launch of one
 * block), 0 as ptxkit_reduce. */
ptxkit_status ptxkit_reduce_experiment(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                                           ptxkit_dptr out, ptxkit_dptr in, size_t n,
                                           const ptxkit_config *config, ptxkit_stream *stream, int passes);

/* Switches of ptxkit_scan's kernel, -1 each for the kernel's own default:
 * tiles numbered by a ticket (1) or blockIdx.x (0), the back-off in ns
 * between polls, the look-back window, the blocks per SM asked of
 * __launch_bounds__, the staged kernel (1) or the register kernel (0), and
 * the staged kernel's bulk copies per tile. */
typedef struct ptxkit_scan_switches {
    int dynamic_tiles, spin_ns, lookback, min_blocks, staged, chunks;
} ptxkit_scan_switches;

/* ptxkit_scan with those switches (NULL: none). */
ptxkit_status ptxkit_scan_experiment(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                                  ptxkit_dptr out, ptxkit_dptr in, size_t n, const ptxkit_config *config,
                                  ptxkit_stream *stream, const ptxkit_scan_switches *experiment);

/* GEMM main-loop switches of one context, for the GEMMs it runs after the
 * call (other contexts keep theirs): cross-tile fragment prefetch (0 off, 1
 * on, the default; -1 the default again), and the tensor-core kernel's mma
 * k depth (4, 8, 16; 0 its default). INVALID_ARGUMENT for other values or
 * a NULL context. */
ptxkit_status ptxkit_gemm_cross_prefetch_set(ptxkit_context *ctx, int on);

ptxkit_status ptxkit_gemm_mma_k_set(ptxkit_context *ctx, int k);

/* The float64 tensor-core kernel's operand copies by the tensor memory
 * accelerator (sm_90, A and B as stored and 16-byte aligned): 0 off (the
 * cp.async copies of sm_80), 1 on where able (the default; -1 the default
 * again). INVALID_ARGUMENT for other values or a NULL context. */
ptxkit_status ptxkit_gemm_tensor_maps_set(ptxkit_context *ctx, int on);

/* Stream-K on the CUDA-core kernel: the tiles past the grid's last whole
 * wave shared out as (tile, k-tile) steps among one wave of blocks, so the
 * last wave leaves no SM idle. 0 off, 1 at every shape with two k-tiles or
 * more (a test switch), -1 where the last wave would leave SMs idle (the
 * default). INVALID_ARGUMENT for other values or a NULL context. */
ptxkit_status ptxkit_gemm_stream_k_set(ptxkit_context *ctx, int on);

/* float32 GEMM on the FP64 tensor cores (sm_90; ptxkit_gemm): 0 off (the
 * CUDA-core kernel, as on other GPUs, whose configurations ptxkit_gemm's
 * config then names), 1 on where the GPU has them (the default; -1 the
 * default again). INVALID_ARGUMENT for other values or a NULL context. */
ptxkit_status ptxkit_gemm_f32_tensor_cores_set(ptxkit_context *ctx, int on);

/* ---- experimental: host arrays ------------------------------------------------- */

/* "auto", "staged", "registered", "mapped"; NULL for a value out of range. */
const char *ptxkit_host_path_name(ptxkit_host_path path);

#endif /* PTXKIT_EXPERIMENTAL */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
