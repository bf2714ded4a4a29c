// The constant-memory experiment: one small table of coefficients read from
// __constant__, from global memory (ld.global), through the read-only path
// (ld.global.nc) or from shared memory, by every thread for every element
// of a streamed array; every lane of a warp reading one address (uniform)
// or each lane its own (divergent).
//
// Each thread walks float4 vectors v of x in a grid-stride loop (ITEMS
// vectors loaded before any is used, so that loads stay in flight) and
// evaluates, on each of the four elements, a polynomial of TAPS coefficients
// by Horner's rule starting at table offset b:
//     y = c[b]; y = fma(y, x, c[b + 1]); ...; y = fma(y, x, c[b + TAPS - 1])
// with
//     uniform   (DIVERGENT 0): b = (v / 32) % TAPS           one address per warp
//     divergent (DIVERGENT 1): b = (v / 32 + v % 32) % TAPS  min(32, TAPS) addresses
// The lanes of a warp hold 32 consecutive vectors (blocks and the grid
// stride are whole warps), so v / 32 is the warp's and v % 32 the lane's.
// The table holds 2 * TAPS words (word m is coefficient m % TAPS), so
// b + j never wraps. b moves with v so that no compiler can keep the table
// in registers: every coefficient is read from its store once per vector
// and feeds four fused multiply-adds. Elements past the last whole vector
// (n % 4 of them) take the offset of vector n / 4.
//
// STORE: 0 __constant__ (values from CONST_COEFS), 1 global memory through
// ld.global, 2 global memory through ld.global.nc, 3 shared memory (each
// block copies the global table in first), 4 none: out = x, the same loop
// as a copy, the ceiling the others are read against.
// The CPU reference is lab/constlab.c (constlab_reference); __fmaf_rn
// here and fmaf there round alike, so results compare exactly.
// Injected: BLOCK_SIZE, TAPS, STORE, DIVERGENT, ITEMS, CONST_COEFS (STORE 0).
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef TAPS
#define TAPS 32
#endif
#ifndef STORE
#define STORE 0
#endif
#ifndef DIVERGENT
#define DIVERGENT 0
#endif
#ifndef ITEMS
#define ITEMS 2
#endif
#define TABLE (2 * TAPS)

#if STORE == 0
// The module variable's values come in as source text (CONST_COEFS, the
// 2 * TAPS numbers of the table) because the public API cannot write a
// module variable yet; once ptxkit_module_variable_write exists, the
// launcher writes the table there and this initializer goes.
#ifndef CONST_COEFS
#error "STORE 0 needs CONST_COEFS, the table's 2 * TAPS values"
#endif
__constant__ float const_coef[TABLE] = {CONST_COEFS};
#elif STORE == 3
__shared__ float shared_coef[TABLE];
#endif

__device__ __forceinline__ float coef(const float *table, unsigned i) {
#if STORE == 0
    (void)table;
    return const_coef[i];
#elif STORE == 1
    float c;
    asm("ld.global.f32 %0, [%1];" : "=f"(c) : "l"(table + i));
    return c;
#elif STORE == 2
    float c;
    asm("ld.global.nc.f32 %0, [%1];" : "=f"(c) : "l"(table + i));
    return c;
#elif STORE == 3
    (void)table;
    return shared_coef[i];
#else
    (void)table;
    (void)i;
    return 0.0f;
#endif
}

// The table offset of vector v (see the top of the file).
__device__ __forceinline__ unsigned offset_of(unsigned long long v) {
    unsigned b = (unsigned)(v >> 5);
#if DIVERGENT
    b += (unsigned)v & 31u;
#endif
    return b % TAPS;
}

__device__ __forceinline__ float4 poly4(float4 x, const float *table, unsigned long long v) {
#if STORE == 4
    (void)table;
    (void)v;
    return x;
#else
    const unsigned b = offset_of(v);
    float c = coef(table, b);
    float4 y = make_float4(c, c, c, c);
#pragma unroll
    for (int j = 1; j < TAPS; j++) {
        c = coef(table, b + j);
        y.x = __fmaf_rn(y.x, x.x, c);
        y.y = __fmaf_rn(y.y, x.y, c);
        y.z = __fmaf_rn(y.z, x.z, c);
        y.w = __fmaf_rn(y.w, x.w, c);
    }
    return y;
#endif
}

__device__ __forceinline__ float poly1(float x, const float *table, unsigned long long v) {
#if STORE == 4
    (void)table;
    (void)v;
    return x;
#else
    const unsigned b = offset_of(v);
    float y = coef(table, b);
#pragma unroll
    for (int j = 1; j < TAPS; j++) y = __fmaf_rn(y, x, coef(table, b + j));
    return y;
#endif
}

// out[i] = polynomial(in[i]) for i < n; in and out 16-byte aligned; table:
// the 2 * TAPS coefficients in global memory (read by STORE 1, 2 and 3).
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
const_poly(float *out, const float *in, unsigned long long n, const float *table) {
#if STORE == 3
    for (int i = threadIdx.x; i < TABLE; i += BLOCK_SIZE) shared_coef[i] = table[i];
    __syncthreads();
#endif
    const unsigned long long vectors = n / 4, stride = (unsigned long long)gridDim.x * BLOCK_SIZE;
    const float4 *in4 = (const float4 *)in;
    float4 *out4 = (float4 *)out;
    unsigned long long v = (unsigned long long)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    for (; v + (ITEMS - 1) * stride < vectors; v += ITEMS * stride) {
        float4 x[ITEMS];
#pragma unroll
        for (int u = 0; u < ITEMS; u++) x[u] = in4[v + u * stride];
#pragma unroll
        for (int u = 0; u < ITEMS; u++) out4[v + u * stride] = poly4(x[u], table, v + u * stride);
    }
    for (; v < vectors; v += stride) out4[v] = poly4(in4[v], table, v);
    if (blockIdx.x == 0 && threadIdx.x < (unsigned)(n % 4)) {
        unsigned long long i = vectors * 4 + threadIdx.x;
        out[i] = poly1(in[i], table, vectors);
    }
}

// Fills x with floats in [-1, 1) from a hash of the index and a seed: the
// benchmark's input, made on the GPU (the tests upload their own).
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
const_fill(float *x, unsigned long long n, unsigned seed) {
    unsigned long long stride = (unsigned long long)gridDim.x * BLOCK_SIZE;
    for (unsigned long long i = (unsigned long long)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < n; i += stride) {
        unsigned long long z = i * 0x9E3779B97F4A7C15ull + seed;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        x[i] = (float)(int)((unsigned)(z >> 40) - (1u << 23)) * (1.0f / 8388608.0f);
    }
}
