// A kernel that should profit from asynchronous copies (`ptxkit bench
// stencil`): the 5-point Jacobi step out = C0 * x + C1 * (n + s + e + w)
// on a W x H float grid (zero outside), by tiles of TR x TX points whose
// (TR + 2) x (TX + 2) neighbourhood is staged in shared memory. Each block
// walks tiles (grid-stride), so the copy of one tile can overlap the
// arithmetic of another. Variants, injected as PIPE:
//   0  synchronous: loads into registers, stores to shared, __syncthreads
//      before and after the arithmetic (the "sandwich")
//   1  cp.async (4 bytes, zero fill outside the grid) in a ring of STAGES
//      buffers: STAGES - 1 tiles in flight while one is computed
//   2  warp-specialized: PRODUCER_WARPS producer warps (threads BLOCK_SIZE
//      on) copy tiles with cp.async into STAGES buffers and their copies
//      arrive on full[s] (cp.async.mbarrier.arrive.noinc); the BLOCK_SIZE
//      consumers wait on full[s], compute, and release the buffer on empty[s]
// Injected: BLOCK_SIZE (consumer threads), PIPE, STAGES, PRODUCER_WARPS,
// TX, TR. W must be
// a multiple of TX and H of TR (the command sizes the grid so). Dynamic
// shared memory: STAGES x (TR + 2) x (TX + 2) x 4 bytes.
#include <ptxkit/async.cuh>

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef PIPE
#define PIPE 0
#endif
#ifndef STAGES
#define STAGES 1
#endif
#ifndef PRODUCER_WARPS
#define PRODUCER_WARPS 1
#endif
#define PRODUCERS (PRODUCER_WARPS * 32)
#ifndef TX
#define TX 128
#endif
#ifndef TR
#define TR 8
#endif
#define HX (TX + 2)
#define HR (TR + 2)
#define HALO_WORDS (HX * HR)
#define LOADS ((HALO_WORDS + BLOCK_SIZE - 1) / BLOCK_SIZE)
#define C0 0.5f
#define C1 0.125f
#if PIPE == 0 && STAGES != 1
#error "the synchronous variant has one buffer"
#endif

typedef unsigned long long u64;

// Where neighbourhood word i of tile (ty, tx) comes from; false outside.
__device__ __forceinline__ bool source(unsigned i, unsigned ty, unsigned tx, unsigned w, unsigned h, u64 *at) {
    const int r = (int)(i / HX), c = (int)(i % HX);
    const int gy = (int)(ty * TR) + r - 1, gx = (int)(tx * TX) + c - 1;
    *at = (u64)gy * w + (u64)gx;
    return gy >= 0 && gy < (int)h && gx >= 0 && gx < (int)w;
}

__device__ __forceinline__ void compute(const float *b, float *out, unsigned ty, unsigned tx, unsigned w, unsigned tid) {
    for (unsigned p = tid; p < TR * TX; p += BLOCK_SIZE) {
        const unsigned r = p / TX + 1, c = p % TX + 1;
        const float *m = b + r * HX + c;
        out[(u64)(ty * TR + r - 1) * w + tx * TX + c - 1] = C0 * m[0] + C1 * (m[-HX] + m[HX] + m[-1] + m[1]);
    }
}

#if PIPE >= 1
// The copies of one tile's neighbourhood by `lanes` threads (index `me`).
__device__ __forceinline__ void issue(float *buf, const float *in, unsigned t, unsigned tiles_x, unsigned w, unsigned h,
                                      unsigned me, unsigned lanes) {
    const unsigned ty = t / tiles_x, tx = t % tiles_x;
    for (unsigned i = me; i < HALO_WORDS; i += lanes) {
        u64 at;
        bool inside = source(i, ty, tx, w, h, &at);
        ptxkit::cp_async_ca_zfill<4>(buf + i, inside ? in + at : in, inside ? 4u : 0u);
    }
}
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE + (PIPE == 2 ? PRODUCERS : 0))
stencil(const float *in, float *out, unsigned w, unsigned h) {
    extern __shared__ __align__(16) float smem[];
    const unsigned tiles_x = w / TX, tiles = tiles_x * (h / TR);
#if PIPE == 0
    for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
        const unsigned ty = t / tiles_x, tx = t % tiles_x;
        float v[LOADS];
#pragma unroll
        for (int k = 0; k < LOADS; k++) {
            unsigned i = threadIdx.x + k * BLOCK_SIZE;
            u64 at;
            v[k] = i < HALO_WORDS && source(i, ty, tx, w, h, &at) ? in[at] : 0.0f;
        }
#pragma unroll
        for (int k = 0; k < LOADS; k++)
            if (threadIdx.x + k * BLOCK_SIZE < HALO_WORDS) smem[threadIdx.x + k * BLOCK_SIZE] = v[k];
        __syncthreads();
        compute(smem, out, ty, tx, w, threadIdx.x);
        __syncthreads();
    }
#elif PIPE == 1
    unsigned t = blockIdx.x;
    for (int s = 0; s < STAGES - 1; s++) {
        if (t + s * gridDim.x < tiles) issue(smem + s * HALO_WORDS, in, t + s * gridDim.x, tiles_x, w, h, threadIdx.x, BLOCK_SIZE);
        ptxkit::cp_async_commit();
    }
    for (int it = 0; t < tiles; it++, t += gridDim.x) {
        const unsigned ahead = t + (STAGES - 1) * gridDim.x;
        if (ahead < tiles) issue(smem + ((it + STAGES - 1) % STAGES) * HALO_WORDS, in, ahead, tiles_x, w, h, threadIdx.x, BLOCK_SIZE);
        ptxkit::cp_async_commit();
        ptxkit::cp_async_wait<STAGES - 1>();
        __syncthreads();
        compute(smem + (it % STAGES) * HALO_WORDS, out, t / tiles_x, t % tiles_x, w, threadIdx.x);
        __syncthreads();
    }
#elif PIPE == 2
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    if (threadIdx.x == 0)
        for (int s = 0; s < STAGES; s++) {
            ptxkit::mbarrier_init(&full[s], PRODUCERS);
            ptxkit::mbarrier_init(&empty[s], BLOCK_SIZE);
        }
    __syncthreads();
    if (threadIdx.x >= BLOCK_SIZE) {  // the producer warps
        const unsigned me = threadIdx.x - BLOCK_SIZE;
        int it = 0;
        for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x, it++) {
            const int s = it % STAGES, use = it / STAGES;
            if (use > 0) ptxkit::mbarrier_wait_parity(&empty[s], (use - 1) & 1);
            issue(smem + s * HALO_WORDS, in, t, tiles_x, w, h, me, PRODUCERS);
            ptxkit::cp_async_mbarrier_arrive_noinc(&full[s]);
        }
        ptxkit::cp_async_wait_all();
    } else {
        int it = 0;
        for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x, it++) {
            const int s = it % STAGES;
            ptxkit::mbarrier_wait_parity(&full[s], (it / STAGES) & 1);
            compute(smem + s * HALO_WORDS, out, t / tiles_x, t % tiles_x, w, threadIdx.x);
            ptxkit::mbarrier_arrive(&empty[s]);
        }
    }
#else
#error "PIPE is 0, 1 or 2"
#endif
}
