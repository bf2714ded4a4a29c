// Test kernels of <ptxkit/async.cuh>, compiled as an application's program
// (ptxkit_program_create_from_file) by tests/test_gpu_async.c. Every kernel
// routes data from the thread that copied it to a different thread, so a
// missing wait or barrier shows as a wrong answer (and to racecheck).
// Injected: BLOCK_SIZE and each kernel's own constants, named at it.
#include <ptxkit/async.cuh>

typedef unsigned long long u64;

// ---- cp.async of every width ---------------------------------------------
// WIDTH (4, 8, 16), CG (1: .cg, WIDTH 16 only), CHUNKS per thread per tile.
// Copies n bytes of src to dst through shared memory, WIDTH bytes per
// cp.async; the chunk holding the end of the data reads only its src_bytes
// and the one after it reads none, both zero-filling the rest. dst gets
// every byte of those chunks: the data, then zeros up to the end of the
// chunk after the last, so the test sees the zero fill (dst is poisoned
// beyond). src and dst are aligned to WIDTH (views at any such offset).
#ifndef WIDTH
#define WIDTH 16
#endif
#ifndef CG
#define CG 0
#endif
#ifndef CHUNKS
#define CHUNKS 2
#endif
#define TILE_CHUNKS (BLOCK_SIZE * CHUNKS)

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
copy_width(const unsigned char *src, unsigned char *dst, u64 n) {
    __shared__ __align__(16) unsigned char tile[TILE_CHUNKS * WIDTH];
    const u64 data_chunks = (n + WIDTH - 1) / WIDTH, chunks = data_chunks + 1;
    for (u64 first = (u64)blockIdx.x * TILE_CHUNKS; first < chunks; first += (u64)gridDim.x * TILE_CHUNKS) {
        for (int k = 0; k < CHUNKS; k++) {
            unsigned c = threadIdx.x + k * BLOCK_SIZE;
            u64 chunk = first + c;
            if (chunk >= chunks) break;
            u64 at = chunk * WIDTH;
            unsigned src_bytes = at >= n ? 0u : n - at >= WIDTH ? (unsigned)WIDTH : (unsigned)(n - at);
            // a zero-byte read reads nothing: point it at src, never past the end
            const unsigned char *from = src_bytes ? src + at : src;
#if CG
            if (src_bytes == WIDTH) ptxkit::cp_async_cg16(tile + c * WIDTH, from);
            else ptxkit::cp_async_cg16_zfill(tile + c * WIDTH, from, src_bytes);
#else
            if (src_bytes == WIDTH) ptxkit::cp_async_ca<WIDTH>(tile + c * WIDTH, from);
            else ptxkit::cp_async_ca_zfill<WIDTH>(tile + c * WIDTH, from, src_bytes);
#endif
        }
        ptxkit::cp_async_commit();
        ptxkit::cp_async_wait_all();
        __syncthreads();
        // written out by another thread than the one that copied each chunk
        for (int k = 0; k < CHUNKS; k++) {
            unsigned c = TILE_CHUNKS - 1 - (threadIdx.x + k * BLOCK_SIZE);
            u64 chunk = first + c;
            if (chunk >= chunks) continue;
            for (int b = 0; b < WIDTH; b++) dst[chunk * WIDTH + b] = tile[c * WIDTH + b];
        }
        __syncthreads();
    }
}

// ---- a multi-stage pipeline ----------------------------------------------
// STAGES (1..4) buffers of one tile each, VEC (1 or 4) words per cp.async
// (4: cp.async.cg of 16 bytes, 1: cp.async.ca of 4). Each word is combined
// with the next word of its tile, which another thread copied:
// out[i] = 3 * in[i] + in[i + 1], the second term 0 at the end of a tile or
// of the data (the zero fill). Each block walks many tiles, so the ring of
// buffers turns over many times.
#ifndef STAGES
#define STAGES 3
#endif
#ifndef VEC
#define VEC 4
#endif
#define TILE_WORDS (BLOCK_SIZE * VEC)

__device__ __forceinline__ void load_tile(unsigned *buf, const unsigned *in, u64 n, u64 tile) {
    u64 at = tile * TILE_WORDS + (u64)threadIdx.x * VEC;
    unsigned words = at >= n ? 0u : n - at >= VEC ? (unsigned)VEC : (unsigned)(n - at);
    const unsigned *from = words ? in + at : in;
#if VEC == 4
    ptxkit::cp_async_cg16_zfill(buf + threadIdx.x * VEC, from, words * 4u);
#else
    ptxkit::cp_async_ca_zfill<4>(buf + threadIdx.x * VEC, from, words * 4u);
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
pipeline(const unsigned *in, unsigned *out, u64 n) {
    __shared__ __align__(16) unsigned buf[STAGES][TILE_WORDS];
    const u64 tiles = (n + TILE_WORDS - 1) / TILE_WORDS, stride = gridDim.x;
    u64 tile = blockIdx.x;
    // prologue: the first STAGES - 1 tiles in flight, one group each
    for (int s = 0; s < STAGES - 1; s++) {
        u64 t = tile + s * stride;
        if (t < tiles) load_tile(buf[s], in, n, t);
        ptxkit::cp_async_commit();
    }
    for (int it = 0; tile < tiles; it++, tile += stride) {
        u64 ahead = tile + (u64)(STAGES - 1) * stride;
        if (ahead < tiles) load_tile(buf[(it + STAGES - 1) % STAGES], in, n, ahead);
        ptxkit::cp_async_commit();  // an empty group keeps the count right
        ptxkit::cp_async_wait<STAGES - 1>();
        __syncthreads();
        const unsigned *b = buf[it % STAGES];
        for (int v = 0; v < VEC; v++) {
            unsigned w = threadIdx.x * VEC + v;
            u64 i = tile * TILE_WORDS + w;
            unsigned next = w + 1 < TILE_WORDS ? b[w + 1] : 0u;
            if (i < n) out[i] = 3u * b[w] + next;
        }
        __syncthreads();  // the buffer is refilled STAGES - 1 iterations on
    }
    ptxkit::cp_async_wait_all();
}

// ---- arrive/wait barriers over many phases --------------------------------
// Warp-specialized producer/consumer through DEPTH shared slots: the first
// PRODUCERS threads fill a slot, the rest consume it. full[s] counts the
// producers' arrivals, empty[s] the consumers'. FILL: 0 ordinary stores
// and mbarrier_arrive; 1 cp.async with cp.async.mbarrier.arrive.noinc
// (the copy's completion is the arrival); 2..4 the patterns of the PTX
// form without .noinc, written with .noinc and the copies' arrivals
// counted in mbarrier_init: cp.async + noinc arrive-on, then: 2 an
// ordinary arrive too (full[s] counts 2 per producer); 3 an arrive and a
// wait on its token (the PTX ISA's example); 4 one more arrival per phase
// by one producer after a named barrier (full[s] counts PRODUCERS + 1). Round r fills slot
// r % DEPTH with in[r * PRODUCERS .. +PRODUCERS) (FILL 0: that value + r);
// consumer c adds slot word (c * 7) % PRODUCERS of every round, so phases
// that a wait let through too early (or too late: a hang) show. One block.
#ifndef PRODUCERS
#define PRODUCERS 64
#endif
#ifndef DEPTH
#define DEPTH 2
#endif
#ifndef FILL
#define FILL 1
#endif
#define CONSUMERS (BLOCK_SIZE - PRODUCERS)
// WAIT_TEST 1: every wait polls mbarrier.test_wait instead of the helper's
// (try_wait on sm_90), so both spellings are exercised
#ifndef WAIT_TEST
#define WAIT_TEST 0
#endif

__device__ __forceinline__ void wait_phase(unsigned long long *bar, unsigned parity) {
#if WAIT_TEST
    while (!ptxkit::mbarrier_test_wait_parity(bar, parity)) {
    }
#else
    ptxkit::mbarrier_wait_parity(bar, parity);
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
phases(const unsigned *in, u64 *sums, unsigned rounds) {
    __shared__ __align__(16) unsigned slot[DEPTH][PRODUCERS];
    __shared__ __align__(8) unsigned long long full[DEPTH], empty[DEPTH];
    if (threadIdx.x == 0)
        for (int s = 0; s < DEPTH; s++) {
            ptxkit::mbarrier_init(&full[s], FILL == 4 ? PRODUCERS + 1 : FILL >= 2 ? 2 * PRODUCERS : PRODUCERS);
            ptxkit::mbarrier_init(&empty[s], CONSUMERS);
        }
    __syncthreads();
    if (threadIdx.x < PRODUCERS) {
        const unsigned p = threadIdx.x;
        for (unsigned r = 0; r < rounds; r++) {
            const unsigned s = r % DEPTH, use = r / DEPTH;
            // slot s is free once the consumers released its previous use
            if (use > 0) wait_phase(&empty[s], (use - 1) & 1);
#if FILL == 0
            slot[s][p] = in[(u64)r * PRODUCERS + p] + r;
            ptxkit::mbarrier_arrive(&full[s]);
#elif FILL == 1
            ptxkit::cp_async_ca<4>(&slot[s][p], in + (u64)r * PRODUCERS + p);
            ptxkit::cp_async_mbarrier_arrive_noinc(&full[s]);
#else
            // the copy's completion is one counted arrival, the producer's
            // own arrive(s) below the others
            ptxkit::cp_async_ca<4>(&slot[s][p], in + (u64)r * PRODUCERS + p);
            ptxkit::cp_async_mbarrier_arrive_noinc(&full[s]);
#if FILL == 2
            ptxkit::mbarrier_arrive(&full[s]);
#elif FILL == 3
            // the PTX ISA's example: wait on this thread's own arrival token
            const unsigned long long token = ptxkit::mbarrier_arrive(&full[s]);
            while (!ptxkit::mbarrier_test_wait(&full[s], token)) {
            }
#else
            // one more arrival per phase, by one producer once all of them
            // have issued their copies' arrive-ons
            asm volatile("bar.sync 1, %0;" ::"n"(PRODUCERS) : "memory");
            if (p == 0) ptxkit::mbarrier_arrive(&full[s]);
#endif
#endif
        }
        ptxkit::cp_async_wait_all();
    } else {
        const unsigned c = threadIdx.x - PRODUCERS, word = (c * 7u) % PRODUCERS;
        u64 sum = 0;
        for (unsigned r = 0; r < rounds; r++) {
            const unsigned s = r % DEPTH, use = r / DEPTH;
            wait_phase(&full[s], use & 1);
            sum += slot[s][word];
            ptxkit::mbarrier_arrive(&empty[s]);
        }
        sums[c] = sum;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int s = 0; s < DEPTH; s++) {
            ptxkit::mbarrier_inval(&full[s]);
            ptxkit::mbarrier_inval(&empty[s]);
        }
}

// The split of arrive and wait on sm_80 too: test_wait polled by hand,
// the phase state of arrive unused. Every thread adds 1 to its own word,
// arrives, then waits and reads its neighbour's word: rounds phases of one
// barrier. out[t] = sum over rounds of the neighbour's word after round r.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
split_arrive(unsigned *out, unsigned rounds) {
    __shared__ unsigned word[2][BLOCK_SIZE];
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) ptxkit::mbarrier_init(&bar, BLOCK_SIZE);
    word[0][threadIdx.x] = threadIdx.x;
    __syncthreads();
    unsigned acc = 0;
    for (unsigned r = 0; r < rounds; r++) {
        // double buffer: round r writes word[(r + 1) & 1] from word[r & 1]
        const unsigned *cur = word[r & 1];
        word[(r + 1) & 1][threadIdx.x] = cur[threadIdx.x] + 1u;
        ptxkit::mbarrier_arrive(&bar);
        while (!ptxkit::mbarrier_test_wait_parity(&bar, r & 1)) {
        }
        acc += word[(r + 1) & 1][(threadIdx.x + 1) % BLOCK_SIZE];
        // nobody rewrites word[(r + 1) & 1] before all have read it: the
        // next round writes the other half, the one after waits a phase more
    }
    out[blockIdx.x * BLOCK_SIZE + threadIdx.x] = acc;
}

// ---- bulk copies (sm_90) ----------------------------------------------------
// Each block moves tiles of TILE_BYTES (a multiple of 16) global -> shared
// with cp.async.bulk in PIECES copies on one mbarrier transaction count,
// every thread adds 1 to each word of the tile (so the data crossed
// threads), and thread 0 writes the tile back with a bulk store. n (bytes)
// is a multiple of 16; the last tile is shorter. in and out 16-byte aligned.
#ifndef TILE_BYTES
#define TILE_BYTES 4096
#endif
#ifndef PIECES
#define PIECES 2
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
bulk_roundtrip(const unsigned char *in, unsigned char *out, u64 n) {
#if PTXKIT_HAS_BULK_COPY
    __shared__ __align__(128) unsigned tile[TILE_BYTES / 4];
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) {
        ptxkit::mbarrier_init(&bar, 1);
        ptxkit::fence_mbarrier_init();
    }
    __syncthreads();
    unsigned phase = 0;
    for (u64 at = (u64)blockIdx.x * TILE_BYTES; at < n; at += (u64)gridDim.x * TILE_BYTES, phase ^= 1) {
        const unsigned bytes = n - at < TILE_BYTES ? (unsigned)(n - at) : (unsigned)TILE_BYTES;
        if (threadIdx.x == 0) {
            ptxkit::mbarrier_arrive_expect_tx(&bar, bytes);
            // PIECES copies of 16-byte multiples, the last one the remainder
            unsigned piece = (bytes / PIECES) & ~15u, done = 0;
            for (int p = 0; p < PIECES; p++) {
                unsigned size = p == PIECES - 1 ? bytes - done : piece;
                if (size) ptxkit::bulk_copy_g2s((unsigned char *)tile + done, in + at + done, size, &bar);
                done += size;
            }
        }
        ptxkit::mbarrier_wait_parity(&bar, phase);
        for (unsigned w = threadIdx.x; w < bytes / 4; w += BLOCK_SIZE) tile[bytes / 4 - 1 - w] += 1u;
        ptxkit::fence_proxy_async_shared();
        __syncthreads();
        if (threadIdx.x == 0) {
            ptxkit::bulk_copy_s2g(out + at, tile, bytes);
            ptxkit::bulk_commit();
            ptxkit::bulk_wait<0>();
        }
        __syncthreads();  // the tile is refilled only after the store read it
    }
    if (threadIdx.x == 0) ptxkit::mbarrier_inval(&bar);
#endif
}
