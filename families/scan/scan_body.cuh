// Body of scan.cu for the current combination (see reduce_combo.cuh).
//
// Layout of a tile: data warp w owns 32 x VEC_UNROLL consecutive vectors; its
// k-th load instruction reads vectors k*32 .. k*32+31 of that run (one
// contiguous 512-byte row for 16-byte vectors), so every load and store is
// a whole coalesced row and no shared-memory transpose is needed. The scan
// of a warp's run then goes row by row: each lane folds its vector, a
// shuffle scan across the 32 lanes gives each vector's offset in its row,
// and the row totals carry from row to row.
//
// Order of a float sum (for the error bound in ptxkit.h): element i of tile
// t is (((P + W) + (C + L)) + x_0) + ... + x_i, where P is the tile's
// exclusive prefix, W the warp's offset (a shuffle scan over the warps'
// totals), C the rows before the vector's row, L the lanes before it in
// its row (a shuffle scan over vector sums), and x_0 .. x_i the vector's
// elements up to i. P is the inclusive prefix of an earlier tile plus a
// tree sum of up to 32 tile aggregates per look-back window, so an element
// passes through at most one addition per tile between it and the output,
// plus about 5 (warps) + 5 (lanes) + VEC_UNROLL (rows) + 4 (vector) + 10
// (look-back trees) inside tiles.
#if VEC_BYTES < R_ELEM_BYTES
#error "VEC_BYTES is smaller than the element"
#endif

#define S_VW (VEC_BYTES / R_ELEM_BYTES) /* elements per vector */
#define S_ITEMS (VEC_UNROLL * S_VW)     /* elements per thread */
#define S_TILE (SCAN_DATA_WARPS * 32 * S_ITEMS) /* elements per tile */

// One vector's elements from raw little-endian words.
static __device__ __forceinline__ void R_FN(scan_words_to_vector)(const unsigned *w, rT *x) {
#if R_ELEM_BYTES == 4
#pragma unroll
    for (int j = 0; j < S_VW; j++) rfrom(w[j], &x[j]);
#else
#pragma unroll
    for (int j = 0; j < S_VW; j++) rfrom((unsigned long long)w[2 * j] | (unsigned long long)w[2 * j + 1] << 32, &x[j]);
#endif
}

static __device__ __forceinline__ void R_FN(scan_load_vector)(const rT *p, rT *x) {
    unsigned w[SCAN_VEC_WORDS];
    sload_words(p, w);
    R_FN(scan_words_to_vector)(w, x);
}

static __device__ __forceinline__ void R_FN(scan_store_vector)(rT *p, const rT *y) {
    unsigned w[SCAN_VEC_WORDS];
#pragma unroll
    for (int j = 0; j < S_VW; j++) {
        unsigned long long b = rbits64(y[j]);
#if R_ELEM_BYTES == 4
        w[j] = (unsigned)b;
#else
        w[2 * j] = (unsigned)b;
        w[2 * j + 1] = (unsigned)(b >> 32);
#endif
    }
    sstore_words(p, w);
}

// A tile's status word: published by one lane, read by the warps of later
// tiles.
static __device__ __forceinline__ void R_FN(scan_publish)(void *status, unsigned long long tile, unsigned tag, rT value) {
#if R_ELEM_BYTES == 4
    scan_status_store((unsigned long long *)status + tile, (unsigned long long)tag << 32 | (unsigned)rbits64(value));
#else
    scan_status_store2((ulonglong2 *)status + tile, rbits64(value), tag);
#endif
}

static __device__ __forceinline__ unsigned R_FN(scan_peek)(const void *status, unsigned long long tile, rT *value) {
#if R_ELEM_BYTES == 4
    unsigned long long w = scan_status_load((const unsigned long long *)status + tile);
    rfrom(w & 0xffffffffull, value);
    return (unsigned)(w >> 32);
#else
    ulonglong2 w = scan_status_load2((const ulonglong2 *)status + tile);
    rfrom(w.x, value);
    return (unsigned)w.y;
#endif
}

// Inclusive scan across the warp (Kogge-Stone over shuffles).
static __device__ __forceinline__ rT R_FN(scan_warp_inclusive)(rT v, unsigned lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        rT t = __shfl_up_sync(SCAN_FULL_MASK, v, d);
        if (lane >= (unsigned)d) v = r_combine(t, v);
    }
    return v;
}

// Every lane gets the warp's total (butterfly: a + b == b + a in IEEE, so
// every lane computes the same bits).
static __device__ __forceinline__ rT R_FN(scan_warp_total)(rT v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = r_combine(v, __shfl_xor_sync(SCAN_FULL_MASK, v, d));
    return v;
}

// Decoupled look-back, by one whole warp: the total of tiles 0 .. tile-1.
// Each step reads a window of 32 x SCAN_LOOKBACK status words, nearest
// first: load m of lane i is tile (top - 32 m - i), so each load instruction
// of the warp reads 32 consecutive words. The warp waits until every tile
// from top back to the nearest one with an inclusive prefix has at least its
// aggregate, adds those up, and stops at the prefix; without one in the
// window it moves a whole window back.
static __device__ __forceinline__ rT R_FN(scan_look_back)(const void *status, unsigned long long tile, unsigned epoch,
                                                          unsigned lane) {
    rT exclusive = R_IDENTITY;
    long long top = (long long)tile - 1;
    for (;;) {
        rT value[SCAN_LOOKBACK];
        int first;      /* the first load slot holding a prefix; SCAN_LOOKBACK: none */
        unsigned stop;  /* in that slot, the lane of the nearest prefix */
        for (;;) {
            unsigned tag[SCAN_LOOKBACK];
#pragma unroll
            for (int m = 0; m < SCAN_LOOKBACK; m++) {
                const long long mine = top - (long long)(m * 32 + (int)lane);
                if (mine >= 0) {
                    tag[m] = R_FN(scan_peek)(status, (unsigned long long)mine, &value[m]);
                } else { // before tile 0: nothing, already summed
                    tag[m] = epoch << 2 | SCAN_STATUS_PREFIX;
                    value[m] = R_IDENTITY;
                }
            }
            bool ready = true;
            first = SCAN_LOOKBACK;
            stop = 31;
#pragma unroll
            for (int m = 0; m < SCAN_LOOKBACK; m++) {
                const bool valid = (tag[m] >> 2) == epoch && (tag[m] & 3u) != 0;
                const unsigned prefixes = __ballot_sync(SCAN_FULL_MASK, valid && (tag[m] & 3u) == SCAN_STATUS_PREFIX);
                const unsigned missing = __ballot_sync(SCAN_FULL_MASK, !valid);
                // lanes up to and including the nearest prefix must be valid
                const unsigned needed = prefixes ? ((prefixes & (0u - prefixes)) << 1) - 1u : SCAN_FULL_MASK;
                if (missing & needed) {
                    ready = false;
                    break;
                }
                if (prefixes) {
                    first = m;
                    stop = (unsigned)__ffs((int)prefixes) - 1;
                    break;
                }
            }
            if (ready) break;
            scan_backoff();
        }
        rT sum = R_IDENTITY;
#pragma unroll
        for (int m = 0; m < SCAN_LOOKBACK; m++)
            if (m < first || (m == first && lane <= stop)) sum = r_combine(sum, value[m]);
        exclusive = r_combine(R_FN(scan_warp_total)(sum), exclusive); /* the window is older than what was summed so far */
        if (first < SCAN_LOOKBACK) return exclusive;
        top -= 32 * SCAN_LOOKBACK;
    }
}

// This warp's share of the tile: VEC_UNROLL vectors per lane, rows of 32
// consecutive vectors; elements outside [head, end) read as the identity.
static __device__ __forceinline__ void R_FN(scan_load_run)(const rT *vin, u64 run, u64 head, u64 end, bool full,
                                                          unsigned lane, rT (*x)[S_VW]) {
    if (full) {
#pragma unroll
        for (int k = 0; k < VEC_UNROLL; k++) R_FN(scan_load_vector)(vin + run + (u64)(k * 32 + lane) * S_VW, x[k]);
        return;
    }
#pragma unroll
    for (int k = 0; k < VEC_UNROLL; k++) {
        const u64 v = run + (u64)(k * 32 + lane) * S_VW;
        if (v >= head && v + S_VW <= end) {
            R_FN(scan_load_vector)(vin + v, x[k]);
        } else {
#pragma unroll
            for (int j = 0; j < S_VW; j++) x[k][j] = v + j >= head && v + j < end ? rload1(vin + v + j) : R_IDENTITY;
        }
    }
}

// One row of a warp's run (a value per lane, row k): its lanes' exclusive
// offsets after the rows before it, whose total `carry` accumulates.
static __device__ __forceinline__ rT R_FN(scan_row_step)(rT value, int k, unsigned lane, rT *carry) {
    const rT inclusive = R_FN(scan_warp_inclusive)(value, lane);
    const rT row_total = __shfl_sync(SCAN_FULL_MASK, inclusive, 31);
    rT before = __shfl_up_sync(SCAN_FULL_MASK, inclusive, 1);
    if (lane == 0) before = R_IDENTITY;
    const rT offset = k == 0 ? before : r_combine(*carry, before);
    *carry = k == 0 ? row_total : r_combine(*carry, row_total);
    return offset;
}

// Each vector's offset within the warp's run; returns the run's total.
static __device__ __forceinline__ rT R_FN(scan_run_offsets)(rT (*x)[S_VW], rT *offset, unsigned lane) {
    rT carry = R_IDENTITY;
#pragma unroll
    for (int k = 0; k < VEC_UNROLL; k++) {
        rT sum = x[k][0];
#pragma unroll
        for (int j = 1; j < S_VW; j++) sum = r_combine(sum, x[k][j]);
        offset[k] = R_FN(scan_row_step)(sum, k, lane, &carry);
    }
    return carry;
}

// Scans the run in registers from its offset `base` and writes it out.
static __device__ __forceinline__ void R_FN(scan_finish_run)(rT *vout, u64 run, u64 head, u64 end, bool full,
                                                            unsigned lane, rT (*x)[S_VW], const rT *offset, rT base,
                                                            unsigned flags) {
    const bool exclusive = flags & SCAN_FLAG_EXCLUSIVE;
#pragma unroll
    for (int k = 0; k < VEC_UNROLL; k++) {
        rT running = r_combine(base, offset[k]);
#pragma unroll
        for (int j = 0; j < S_VW; j++) {
            const rT next = r_combine(running, x[k][j]);
            x[k][j] = exclusive ? running : next;
            running = next;
        }
    }
    if (full && (flags & SCAN_FLAG_VECTOR_STORES)) {
#pragma unroll
        for (int k = 0; k < VEC_UNROLL; k++) R_FN(scan_store_vector)(vout + run + (u64)(k * 32 + lane) * S_VW, x[k]);
    } else {
#pragma unroll
        for (int k = 0; k < VEC_UNROLL; k++) {
            const u64 v = run + (u64)(k * 32 + lane) * S_VW;
#pragma unroll
            for (int j = 0; j < S_VW; j++)
                if (v + j >= head && v + j < end) vout[v + j] = x[k][j];
        }
    }
}

// By one warp, after the data warps' totals are in warp_offsets: replaces
// them with each warp's offset in the tile, publishes the tile, looks back,
// and returns the tile's exclusive prefix (valid in every lane).
static __device__ __forceinline__ rT R_FN(scan_tile_prefix)(rT *warp_offsets, void *status, unsigned long long tile,
                                                           bool single_tile, unsigned epoch, unsigned lane) {
    const rT total = lane < SCAN_DATA_WARPS ? warp_offsets[lane] : R_IDENTITY;
    const rT inclusive = R_FN(scan_warp_inclusive)(total, lane);
    const rT aggregate = __shfl_sync(SCAN_FULL_MASK, inclusive, SCAN_DATA_WARPS - 1);
    rT before = __shfl_up_sync(SCAN_FULL_MASK, inclusive, 1);
    if (lane == 0) before = R_IDENTITY;
    // With one data warp the compiler reads warp_offsets[0] in every lane
    // (the only index the read can have): the warp's reads come before
    // lane 0 overwrites it.
    __syncwarp();
    if (lane < SCAN_DATA_WARPS) warp_offsets[lane] = before;
    if (single_tile) return R_IDENTITY;
    if (tile == 0) {
        if (lane == 0) R_FN(scan_publish)(status, 0, epoch << 2 | SCAN_STATUS_PREFIX, aggregate);
        return R_IDENTITY;
    }
    if (lane == 0) R_FN(scan_publish)(status, tile, epoch << 2 | SCAN_STATUS_AGGREGATE, aggregate);
    const rT prefix = R_FN(scan_look_back)(status, tile, epoch, lane);
    if (lane == 0) R_FN(scan_publish)(status, tile, epoch << 2 | SCAN_STATUS_PREFIX, r_combine(prefix, aggregate));
    return prefix;
}

#if SCAN_STAGED
// Vector k of this lane in a warp's run of the staged tile (shared memory,
// vectors aligned): the same rows of 32 consecutive vectors as
// scan_load_run.
static __device__ __forceinline__ void R_FN(scan_stage_vector)(const rT *run, int k, unsigned lane, rT *x) {
    const rT *p = run + (k * 32 + lane) * S_VW;
    unsigned w[SCAN_VEC_WORDS];
#if VEC_BYTES == 16
    const uint4 v = *(const uint4 *)p;
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#elif VEC_BYTES == 8
    const uint2 v = *(const uint2 *)p;
    w[0] = v.x, w[1] = v.y;
#else
    w[0] = *(const unsigned *)p;
#endif
    R_FN(scan_words_to_vector)(w, x);
}

// scan_run_offsets from the staged run, keeping one sum per vector rather
// than its elements (the same additions in the same order).
static __device__ __forceinline__ rT R_FN(scan_stage_offsets)(const rT *run, rT *offset, unsigned lane) {
#pragma unroll
    for (int k = 0; k < VEC_UNROLL; k++) {
        rT x[S_VW];
        R_FN(scan_stage_vector)(run, k, lane, x);
        rT sum = x[0];
#pragma unroll
        for (int j = 1; j < S_VW; j++) sum = r_combine(sum, x[j]);
        offset[k] = sum;
    }
    rT carry = R_IDENTITY;
#pragma unroll
    for (int k = 0; k < VEC_UNROLL; k++) {
        offset[k] = R_FN(scan_row_step)(offset[k], k, lane, &carry);
    }
    return carry;
}

// scan_finish_run from the staged run, a vector at a time.
static __device__ __forceinline__ void R_FN(scan_stage_finish)(const rT *run, rT *vout, u64 start, u64 head, u64 end,
                                                              bool full, unsigned lane, const rT *offset, rT base,
                                                              unsigned flags) {
    const bool exclusive = flags & SCAN_FLAG_EXCLUSIVE;
    const bool vector_stores = full && (flags & SCAN_FLAG_VECTOR_STORES);
#pragma unroll
    for (int k = 0; k < VEC_UNROLL; k++) {
        rT x[S_VW];
        R_FN(scan_stage_vector)(run, k, lane, x);
        rT running = r_combine(base, offset[k]);
#pragma unroll
        for (int j = 0; j < S_VW; j++) {
            const rT next = r_combine(running, x[j]);
            x[j] = exclusive ? running : next;
            running = next;
        }
        const u64 v = start + (u64)(k * 32 + lane) * S_VW;
        if (vector_stores) {
            R_FN(scan_store_vector)(vout + v, x);
        } else {
#pragma unroll
            for (int j = 0; j < S_VW; j++)
                if (v + j >= head && v + j < end) vout[v + j] = x[j];
        }
    }
}

// Thread 0 of a staged block: starts the bulk copy of a whole tile into the
// stage, in SCAN_CHUNKS parts, part c onto stage_full[c].
static __device__ __forceinline__ void R_FN(scan_stage_copy)(rT *stage, const rT *src, unsigned long long *stage_full) {
#pragma unroll
    for (int c = 0; c < SCAN_CHUNKS; c++) ptxkit::mbarrier_init(&stage_full[c], 1);
    ptxkit::fence_mbarrier_init();
#pragma unroll
    for (int c = 0; c < SCAN_CHUNKS; c++) {
        ptxkit::mbarrier_arrive_expect_tx(&stage_full[c], SCAN_CHUNK_BYTES);
        ptxkit::bulk_copy_g2s((unsigned char *)stage + c * SCAN_CHUNK_BYTES,
                              (const unsigned char *)src + c * SCAN_CHUNK_BYTES, SCAN_CHUNK_BYTES, &stage_full[c]);
    }
}

// The staged kernel (SCAN_STAGED, sm_90): thread 0 numbers the tile and
// starts its bulk copy into shared memory, in SCAN_CHUNKS parts so that the
// warps of the first parts sum their runs while the rest is in flight;
// every warp sums its run from there, warp 0 publishes and looks back, and
// every warp reads its run again to write the scan out from registers. The
// tile's registers are dead while the block waits on its predecessors.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, SCAN_MIN_BLOCKS)
R_ENTRY(ptxkit_scan)(const rT *in, u64 n, rT *out, void *status, unsigned long long *tickets,
                     unsigned long long ticket_base, unsigned epoch, unsigned flags) {
    ptxkit::grid_dependency_begin();
    extern __shared__ __align__(128) unsigned char scan_stage[]; /* SCAN_TILE_BYTES, dynamic */
    __shared__ rT warp_offsets[SCAN_DATA_WARPS];
    __shared__ rT tile_prefix;
#if SCAN_DYNAMIC_TILES
    __shared__ unsigned long long tile_index;
#endif
    __shared__ __align__(8) unsigned long long stage_full[SCAN_CHUNKS]; /* mbarriers: a part has landed */
    rT *const stage = (rT *)scan_stage;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 head = ((u64)in & (SCAN_ORIGIN_BYTES - 1)) / R_ELEM_BYTES;
    const rT *vin = in - head;
    rT *vout = out - head;
    const u64 end = n + head;

#if SCAN_DYNAMIC_TILES
    if (threadIdx.x == 0) {
        unsigned long long tile = blockIdx.x;
        if (gridDim.x > 1) tile = atomicAdd(tickets, 1ull) - ticket_base;
        tile_index = tile;
        const u64 start = tile * S_TILE;
        if (start >= head && start + S_TILE <= end) R_FN(scan_stage_copy)(stage, vin + start, stage_full);
    }
    __syncthreads();
    const unsigned long long tile = tile_index;
#else
    const unsigned long long tile = blockIdx.x;
    if (threadIdx.x == 0) {
        const u64 start = tile * S_TILE;
        if (start >= head && start + S_TILE <= end) R_FN(scan_stage_copy)(stage, vin + start, stage_full);
    }
    __syncthreads();
#endif
    const u64 tile_start = tile * S_TILE;
    const bool full = tile_start >= head && tile_start + S_TILE <= end;
    if (full) {
        ptxkit::mbarrier_wait_parity(&stage_full[SCAN_CHUNKS > 1 ? warp / (SCAN_DATA_WARPS / SCAN_CHUNKS) : 0], 0);
    } else { // the first or last tile: element by element, the identity outside the data
        for (unsigned i = threadIdx.x; i < S_TILE; i += BLOCK_SIZE) {
            const u64 v = tile_start + i;
            stage[i] = v >= head && v < end ? rload1(vin + v) : R_IDENTITY;
        }
        __syncthreads();
    }
    const unsigned run_offset = warp * (32 * S_ITEMS); /* the warp's run, in elements from the tile's start */
    rT offset[VEC_UNROLL];
    const rT run_total = R_FN(scan_stage_offsets)(stage + run_offset, offset, lane);
    if (lane == 0) warp_offsets[warp] = run_total;
    __syncthreads();
    if (warp == 0) {
        const rT prefix = R_FN(scan_tile_prefix)(warp_offsets, status, tile, gridDim.x == 1, epoch, lane);
        if (lane == 0) tile_prefix = prefix;
    }
    __syncthreads();
    const rT base = tile == 0 ? warp_offsets[warp] : r_combine(tile_prefix, warp_offsets[warp]);
    R_FN(scan_stage_finish)(stage + run_offset, vout, tile_start + run_offset, head, end, full, lane, offset, base,
                            flags);
}
#else
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, SCAN_MIN_BLOCKS)
R_ENTRY(ptxkit_scan)(const rT *in, u64 n, rT *out, void *status, unsigned long long *tickets,
                     unsigned long long ticket_base, unsigned epoch, unsigned flags) {
    ptxkit::grid_dependency_begin();
    __shared__ rT warp_offsets[SCAN_DATA_WARPS];
    __shared__ rT tile_prefix;
    __shared__ unsigned long long tile_index;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    // Virtual coordinates start at the VEC_BYTES boundary at or before `in`,
    // so whole vectors are aligned; the `head` elements before `in` and
    // everything past n are outside the data and never read or written.
    const u64 head = ((u64)in & (VEC_BYTES - 1)) / R_ELEM_BYTES;
    const rT *vin = in - head;
    rT *vout = out - head;
    const u64 end = n + head;

#if SCAN_LOOKBACK_WARP
    // Warp 0 numbers the tile and looks back; warps 1.. hold the data. The
    // two programs are separate branches, so the tile's registers and the
    // look-back's are never live together: the kernel needs the larger of
    // the two, not their sum. Their barriers are non-aligned (barrier.sync),
    // which may be reached from different places in the code.
    if (warp == 0) {
        unsigned long long tile = blockIdx.x;
#if SCAN_DYNAMIC_TILES
        if (gridDim.x > 1) {
            unsigned long long ticket = 0;
            if (lane == 0) ticket = atomicAdd(tickets, 1ull) - ticket_base;
            tile = __shfl_sync(SCAN_FULL_MASK, ticket, 0);
        }
#endif
        if (lane == 0) tile_index = tile;
        scan_barrier(); // 1: the tile is numbered
        scan_barrier(); // 2: the data warps' totals are in
        const rT prefix = R_FN(scan_tile_prefix)(warp_offsets, status, tile, gridDim.x == 1, epoch, lane);
        if (lane == 0) tile_prefix = prefix;
        scan_barrier(); // 3: offsets and prefix are out
    } else {
        scan_barrier(); // 1
        const unsigned long long tile = tile_index;
        const u64 tile_start = tile * S_TILE;
        const bool full = tile_start >= head && tile_start + S_TILE <= end;
        const u64 run = tile_start + (u64)(warp - 1) * (32 * S_ITEMS);
        rT x[VEC_UNROLL][S_VW], offset[VEC_UNROLL];
        R_FN(scan_load_run)(vin, run, head, end, full, lane, x);
        const rT run_total = R_FN(scan_run_offsets)(x, offset, lane);
        if (lane == 0) warp_offsets[warp - 1] = run_total;
        scan_barrier(); // 2
        scan_barrier(); // 3
        const rT base = tile == 0 ? warp_offsets[warp - 1] : r_combine(tile_prefix, warp_offsets[warp - 1]);
        R_FN(scan_finish_run)(vout, run, head, end, full, lane, x, offset, base, flags);
    }
#else
    // One warp: it holds the data and looks back itself.
    unsigned long long tile = blockIdx.x;
#if SCAN_DYNAMIC_TILES
    if (gridDim.x > 1) {
        unsigned long long ticket = 0;
        if (lane == 0) ticket = atomicAdd(tickets, 1ull) - ticket_base;
        tile = __shfl_sync(SCAN_FULL_MASK, ticket, 0);
    }
#endif
    const u64 tile_start = tile * S_TILE;
    const bool full = tile_start >= head && tile_start + S_TILE <= end;
    rT x[VEC_UNROLL][S_VW], offset[VEC_UNROLL];
    R_FN(scan_load_run)(vin, tile_start, head, end, full, lane, x);
    const rT run_total = R_FN(scan_run_offsets)(x, offset, lane);
    if (lane == 0) warp_offsets[0] = run_total;
    __syncwarp();
    const rT prefix = R_FN(scan_tile_prefix)(warp_offsets, status, tile, gridDim.x == 1, epoch, lane);
    __syncwarp();
    const rT base = tile == 0 ? warp_offsets[0] : r_combine(prefix, warp_offsets[0]);
    R_FN(scan_finish_run)(vout, tile_start, head, end, full, lane, x, offset, base, flags);
#endif
}
#endif /* SCAN_STAGED */

#undef S_VW
#undef S_ITEMS
#undef S_TILE
