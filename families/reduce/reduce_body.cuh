// Body of reduce.cu for the current combination (see reduce_combo.cuh).
#if VEC_BYTES < R_ELEM_BYTES
#error "VEC_BYTES is smaller than the element"
#endif

// Folds one loaded vector (VEC_WORDS raw words, little-endian) into acc.
static __device__ __forceinline__ rT R_FN(fold_vector)(rT acc, const unsigned *w) {
#if R_ELEM_BYTES == 4
#pragma unroll
    for (int k = 0; k < VEC_WORDS; k++) {
        rT x;
        rfrom(w[k], &x);
        acc = r_combine(acc, x);
    }
#else
#pragma unroll
    for (int k = 0; k < VEC_WORDS; k += 2) {
        rT x;
        rfrom((unsigned long long)w[k] | (unsigned long long)w[k + 1] << 32, &x);
        acc = r_combine(acc, x);
    }
#endif
    return acc;
}

static __device__ __forceinline__ rT R_FN(warp_reduce)(rT v) {
#if R_HAS_REDUX && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return R_REDUX(0xffffffffu, v);
#else
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = r_combine(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
#endif
}

// The block's result, valid in thread 0. Every thread must call it.
static __device__ __forceinline__ rT R_FN(block_reduce)(rT v) {
    v = R_FN(warp_reduce)(v);
#if BLOCK_SIZE > 32
    __shared__ rT warp_results[BLOCK_SIZE / 32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    if (warp == 0) v = R_FN(warp_reduce)(lane < BLOCK_SIZE / 32 ? warp_results[lane] : R_IDENTITY);
#endif
    return v;
}

// This thread's share of in[0, n). The vector body starts at the first
// VEC_BYTES boundary; the few elements before it (a misaligned view) and
// after the last whole vector are loaded one by one by the first threads.
static __device__ __forceinline__ rT R_FN(reduce_input)(const rT *__restrict__ in, u64 n) {
    const u64 per_vector = VEC_BYTES / R_ELEM_BYTES;
    u64 head = ((VEC_BYTES - ((u64)in & (VEC_BYTES - 1))) & (VEC_BYTES - 1)) / R_ELEM_BYTES;
    if (head > n) head = n;
    const u64 vectors = (n - head) / per_vector;
    const u64 body_end = head + vectors * per_vector;
    const u64 gtid = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    const u64 stride = (u64)gridDim.x * BLOCK_SIZE;
    rT acc = R_IDENTITY;
    if (gtid < head) acc = r_combine(acc, rload1(in + gtid));
    if (gtid < n - body_end) acc = r_combine(acc, rload1(in + body_end + gtid));

    const rvec *v = (const rvec *)(in + head);
    u64 i = gtid;
    // VEC_UNROLL independent loads are issued before the first is used, so
    // each thread keeps that many 16-byte requests in flight.
    for (; i + (VEC_UNROLL - 1) * stride < vectors; i += VEC_UNROLL * stride) {
        unsigned w[VEC_UNROLL][VEC_WORDS];
#pragma unroll
        for (int k = 0; k < VEC_UNROLL; k++) rload_words(v + i + k * stride, w[k]);
#pragma unroll
        for (int k = 0; k < VEC_UNROLL; k++) acc = R_FN(fold_vector)(acc, w[k]);
    }
    // The thread's last trip holds fewer than VEC_UNROLL vectors: issued
    // together too, each predicated, so it waits one memory latency rather
    // than one per vector (a small or misaligned input is all last trip).
    if (i < vectors) {
        unsigned w[VEC_UNROLL][VEC_WORDS];
#pragma unroll
        for (int k = 0; k < VEC_UNROLL; k++)
            if (i + k * stride < vectors) rload_words(v + i + k * stride, w[k]);
#pragma unroll
        for (int k = 0; k < VEC_UNROLL; k++)
            if (i + k * stride < vectors) acc = R_FN(fold_vector)(acc, w[k]);
    }
    return acc;
}

// Reduces the slot's first `count` partials; result valid in thread 0.
static __device__ __forceinline__ rT R_FN(reduce_partials)(unsigned slot, u64 count) {
    rT acc = R_IDENTITY;
    for (u64 j = threadIdx.x; j < count; j += BLOCK_SIZE) {
        rT x;
        rfrom(rload_shared_word(&reduce_partials[slot][j]), &x);
        acc = r_combine(acc, x);
    }
    return R_FN(block_reduce)(acc);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, REDUCE_MIN_BLOCKS)
R_ENTRY(ptxkit_reduce)(const rT *__restrict__ in, u64 n, rT *__restrict__ out, unsigned slot, unsigned mode) {
    ptxkit::grid_dependency_begin();
    slot &= REDUCE_SLOTS - 1;
    if (mode == REDUCE_MODE_PARTIALS_IN) {
        rT r = R_FN(reduce_partials)(slot, n < REDUCE_MAX_GRID ? n : REDUCE_MAX_GRID);
        if (threadIdx.x == 0) *out = r;
        return;
    }
    rT r = R_FN(block_reduce)(R_FN(reduce_input)(in, n));
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *out = r;
        return;
    }
    __shared__ unsigned is_last;
    if (threadIdx.x == 0) {
        rstore_shared_word(&reduce_partials[slot][blockIdx.x], rbits64(r));
        is_last = 0;
        if (mode == REDUCE_MODE_SINGLE) {
            // Release: the partial is visible GPU-wide before the ticket.
            __threadfence();
            is_last = atomicAdd(&reduce_tickets[slot], 1u) == gridDim.x - 1;
            // Acquire: the partials loads below come after the last ticket.
            if (is_last) __threadfence();
        }
    }
    __syncthreads();
    if (!is_last) return;
    r = R_FN(reduce_partials)(slot, gridDim.x);
    if (threadIdx.x == 0) {
        *out = r;
        atomicExch(&reduce_tickets[slot], 0u);  // ready for the next launch on this slot
    }
}
