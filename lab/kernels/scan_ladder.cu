// The scan ladder of the 2007 seeds (Harris, Sengupta & Owens, "Parallel
// Prefix Sum (Scan) with CUDA", GPU Gems 3 ch. 39) plus the warp-shuffle
// step that came after them, for teaching and benchmarks (the lab's
// `ptxkit ladder scan`); ptxkit_scan is the production path. Each step
// scans its block's share of in[0, n) in shared memory (or registers) and
// writes it to out; with `sums` it also writes the block's total to
// sums[blockIdx.x], and the host (lab/ladders.c) scans those and adds them
// back (scan_ladder_add) to scan arrays of any length:
//   scan_ladder<k>(const T *in, u64 n, T *out, T *sums, unsigned exclusive)
//   scan_ladder_add(T *out, u64 n, const T *sums, u64 per_block)
// Steps: 1 Hillis-Steele (double-buffered, BLOCK_SIZE elements per block,
// log n steps of n additions: O(n log n) work); 2 Blelloch up-sweep and
// down-sweep (2 x BLOCK_SIZE elements, O(n) work), with the seed's
// interleaved loads and its bank conflicts; 3 the same with
// CONFLICT_FREE_OFFSET padding and loads half a block apart; 4 warp
// shuffles: two elements per thread, __shfl_up_sync within each warp, then
// one warp scans the warps' totals. Every step works in place (in == out),
// for any n, and for any power-of-two block size from 32 to 1024
// (blockDim.x must equal BLOCK_SIZE). Steps 1-3 keep the seeds' loops over
// blockDim.x and their shared-memory trees; exclusive and inclusive results
// come from the same tree (the up-sweep and down-sweep give the exclusive
// scan; inclusive adds each element back, which the thread kept in a
// register).
// Injected: BLOCK_SIZE, STEP (0: every step), and LADDER_OP, LADDER_TYPE,
// LOAD_OP (ladder_ops.cuh).
#include "ladder_ops.cuh"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef STEP
#define STEP 0
#endif
#define SCAN_LADDER_WANT(step) (STEP == 0 || STEP == (step))
#define LOG_NUM_BANKS 5

// Blelloch's padding: one element of padding every 32 banks' worth of
// elements (16 for 8-byte elements, which cover two 4-byte banks each).
#if R_ELEM_BYTES == 8
#define SL_CONFLICT_FREE_OFFSET(i) ((i) >> (LOG_NUM_BANKS - 1))
#else
#define SL_CONFLICT_FREE_OFFSET(i) ((i) >> LOG_NUM_BANKS)
#endif

#if SCAN_LADDER_WANT(1)
// 1: Hillis & Steele (1986) in the seeds' form: log2(n) steps, each adding
// the element `offset` to the left, ping-ponging between two buffers so no
// step reads what it writes. n log n additions where a sequential scan
// needs n.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
scan_ladder1(const rT *in, u64 n, rT *out, rT *sums, unsigned exclusive) {
    __shared__ rT buffer[2 * BLOCK_SIZE];
    const unsigned tid = threadIdx.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + tid;
    unsigned pout = 0, pin = 1;
    buffer[tid] = i < n ? rload1(in + i) : R_IDENTITY;
    __syncthreads();
    for (unsigned offset = 1; offset < blockDim.x; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset)
            buffer[pout * BLOCK_SIZE + tid] = r_combine(buffer[pin * BLOCK_SIZE + tid - offset], buffer[pin * BLOCK_SIZE + tid]);
        else
            buffer[pout * BLOCK_SIZE + tid] = buffer[pin * BLOCK_SIZE + tid];
        __syncthreads();
    }
    const rT *result = buffer + pout * BLOCK_SIZE;
    if (i < n) out[i] = exclusive ? (tid ? result[tid - 1] : R_IDENTITY) : result[tid];
    if (sums && tid == blockDim.x - 1) sums[blockIdx.x] = result[tid];
}
#endif

#if SCAN_LADDER_WANT(2)
// 2: Blelloch (1990), work-efficient: an up-sweep builds partial sums in a
// balanced tree in place, the root is cleared, and a down-sweep pushes the
// prefixes back down: 2(n-1) additions and n-1 swaps for 2 x BLOCK_SIZE
// elements. Each thread loads elements 2t and 2t+1 as the seed does; the
// tree's strided indices make 2-, 4-, ... 32-way bank conflicts.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
scan_ladder2(const rT *in, u64 n, rT *out, rT *sums, unsigned exclusive) {
    __shared__ rT temp[2 * BLOCK_SIZE];
    __shared__ rT total;
    const unsigned tid = threadIdx.x, m = 2 * blockDim.x;
    const u64 a = (u64)blockIdx.x * m + 2 * tid, b = a + 1;
    const rT xa = a < n ? rload1(in + a) : R_IDENTITY, xb = b < n ? rload1(in + b) : R_IDENTITY;
    temp[2 * tid] = xa;
    temp[2 * tid + 1] = xb;
    unsigned offset = 1;
    for (unsigned d = m >> 1; d > 0; d >>= 1) { // up-sweep
        __syncthreads();
        if (tid < d) {
            const unsigned ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            temp[bi] = r_combine(temp[ai], temp[bi]);
        }
        offset *= 2;
    }
    if (tid == 0) {
        total = temp[m - 1];
        temp[m - 1] = R_IDENTITY;
    }
    for (unsigned d = 1; d < m; d *= 2) { // down-sweep
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            const unsigned ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            const rT t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] = r_combine(temp[bi], t);
        }
    }
    __syncthreads();
    if (a < n) out[a] = exclusive ? temp[2 * tid] : r_combine(temp[2 * tid], xa);
    if (b < n) out[b] = exclusive ? temp[2 * tid + 1] : r_combine(temp[2 * tid + 1], xb);
    if (sums && tid == 0) sums[blockIdx.x] = total;
}
#endif

#if SCAN_LADDER_WANT(3)
// 3: step 2 with CONFLICT_FREE_OFFSET: index i lives at i + i/32 (i/16 for
// 8-byte elements), so the tree's power-of-two strides spread over the
// banks; threads load elements t and t + BLOCK_SIZE (coalesced).
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
scan_ladder3(const rT *in, u64 n, rT *out, rT *sums, unsigned exclusive) {
    __shared__ rT temp[2 * BLOCK_SIZE + SL_CONFLICT_FREE_OFFSET(2 * BLOCK_SIZE)];
    __shared__ rT total;
    const unsigned tid = threadIdx.x, m = 2 * blockDim.x;
    const unsigned ai0 = tid, bi0 = tid + blockDim.x;
    const u64 a = (u64)blockIdx.x * m + ai0, b = (u64)blockIdx.x * m + bi0;
    const rT xa = a < n ? rload1(in + a) : R_IDENTITY, xb = b < n ? rload1(in + b) : R_IDENTITY;
    temp[ai0 + SL_CONFLICT_FREE_OFFSET(ai0)] = xa;
    temp[bi0 + SL_CONFLICT_FREE_OFFSET(bi0)] = xb;
    unsigned offset = 1;
    for (unsigned d = m >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            unsigned ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            ai += SL_CONFLICT_FREE_OFFSET(ai);
            bi += SL_CONFLICT_FREE_OFFSET(bi);
            temp[bi] = r_combine(temp[ai], temp[bi]);
        }
        offset *= 2;
    }
    if (tid == 0) {
        const unsigned root = m - 1 + SL_CONFLICT_FREE_OFFSET(m - 1);
        total = temp[root];
        temp[root] = R_IDENTITY;
    }
    for (unsigned d = 1; d < m; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            unsigned ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            ai += SL_CONFLICT_FREE_OFFSET(ai);
            bi += SL_CONFLICT_FREE_OFFSET(bi);
            const rT t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] = r_combine(temp[bi], t);
        }
    }
    __syncthreads();
    const rT ea = temp[ai0 + SL_CONFLICT_FREE_OFFSET(ai0)], eb = temp[bi0 + SL_CONFLICT_FREE_OFFSET(bi0)];
    if (a < n) out[a] = exclusive ? ea : r_combine(ea, xa);
    if (b < n) out[b] = exclusive ? eb : r_combine(eb, xb);
    if (sums && tid == 0) sums[blockIdx.x] = total;
}
#endif

#if SCAN_LADDER_WANT(4)
// 4: warp shuffles: each thread adds its two elements, the lanes of a warp
// scan those sums through registers (__shfl_up_sync, log2(32) steps, no
// shared memory, no barriers), one warp scans the warps' totals, and each
// thread adds its warp's offset. Shared memory carries one value per warp.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
scan_ladder4(const rT *in, u64 n, rT *out, rT *sums, unsigned exclusive) {
    __shared__ rT warp_offsets[BLOCK_SIZE / 32];
    __shared__ rT total;
    const unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const u64 a = (u64)blockIdx.x * (2 * BLOCK_SIZE) + 2 * tid, b = a + 1;
    const rT xa = a < n ? rload1(in + a) : R_IDENTITY, xb = b < n ? rload1(in + b) : R_IDENTITY;
    rT inclusive = r_combine(xa, xb);
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const rT t = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= (unsigned)d) inclusive = r_combine(t, inclusive);
    }
    rT before = __shfl_up_sync(0xffffffffu, inclusive, 1);
    if (lane == 0) before = R_IDENTITY;
    if (lane == 31) warp_offsets[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        rT w = lane < BLOCK_SIZE / 32 ? warp_offsets[lane] : R_IDENTITY;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const rT t = __shfl_up_sync(0xffffffffu, w, d);
            if (lane >= (unsigned)d) w = r_combine(t, w);
        }
        rT w_before = __shfl_up_sync(0xffffffffu, w, 1);
        if (lane == 0) w_before = R_IDENTITY;
        __syncwarp(); /* with one warp every lane may read warp_offsets[0] above */
        if (lane < BLOCK_SIZE / 32) warp_offsets[lane] = w_before;
        if (lane == 31) total = w;
    }
    __syncthreads();
    const rT ea = r_combine(warp_offsets[warp], before), eb = r_combine(ea, xa);
    if (a < n) out[a] = exclusive ? ea : eb;
    if (b < n) out[b] = exclusive ? eb : r_combine(eb, xb);
    if (sums && tid == 0) sums[blockIdx.x] = total;
}
#endif

// The seeds' uniform add: block b of the scanned array gets the (exclusive)
// scanned block sum b. per_block elements per block of the scan.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
scan_ladder_add(rT *out, u64 n, const rT *sums, u64 per_block) {
    const rT s = sums[blockIdx.x];
    const u64 start = (u64)blockIdx.x * per_block;
    const u64 stop = start + per_block < n ? start + per_block : n;
    for (u64 i = start + threadIdx.x; i < stop; i += BLOCK_SIZE) out[i] = r_combine(s, out[i]);
}

