/* The three small kernels a sharded reduce or scan adds to the single-GPU
 * ops, compiled through the runtime's program API as any application's
 * kernel is (NVRTC once, then the kernel and disk caches). TYPE_ID and OP
 * are ptxkit_dtype and ptxkit_reduce_op values. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "multi/comm.h"

static const char shard_source[] =
    "#include \"reduce_typed.cuh\"\n"
    "/* A scanned shard's total into totals[rank]: its last prefix, and for an\n"
    " * exclusive scan the last input too (saved before an in-place scan). */\n"
    "extern \"C\" __global__ void shard_total(T *totals, int rank, const T *scanned, const T *last_in,\n"
    "                                        unsigned long long n, int exclusive, T identity) {\n"
    "    T t = identity;\n"
    "    if (n) {\n"
    "        t = scanned[n - 1];\n"
    "        if (exclusive) t = combine(t, *last_in);\n"
    "    }\n"
    "    totals[rank] = t;\n"
    "}\n"
    "/* Every rank's total in rank order: the same value on every rank. */\n"
    "extern \"C\" __global__ void shard_combine(T *out, const T *totals, int count) {\n"
    "    T t = totals[0];\n"
    "    for (int r = 1; r < count; r++) t = combine(t, totals[r]);\n"
    "    *out = t;\n"
    "}\n"
    "/* out[i] = (totals[0] op ... op totals[rank - 1]) op out[i]: one read and\n"
    " * one write of the shard, four independent loads in flight per thread. */\n"
    "extern \"C\" __global__ void __launch_bounds__(256) shard_offset(T *out, unsigned long long n,\n"
    "                                                                const T *totals, int rank) {\n"
    "    __shared__ T prefix_shared;\n"
    "    if (threadIdx.x == 0) {\n"
    "        T p = totals[0];\n"
    "        for (int r = 1; r < rank; r++) p = combine(p, totals[r]);\n"
    "        prefix_shared = p;\n"
    "    }\n"
    "    __syncthreads();\n"
    "    const T p = prefix_shared;\n"
    "    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    for (; i + 3 * stride < n; i += 4 * stride) {\n"
    "        T a = out[i], b = out[i + stride], c = out[i + 2 * stride], d = out[i + 3 * stride];\n"
    "        out[i] = combine(p, a);\n"
    "        out[i + stride] = combine(p, b);\n"
    "        out[i + 2 * stride] = combine(p, c);\n"
    "        out[i + 3 * stride] = combine(p, d);\n"
    "    }\n"
    "    for (; i < n; i += stride) out[i] = combine(p, out[i]);\n"
    "}\n";

ptxkit_status shard_program_create(ptxkit_program **out) {
    return ptxkit_program_create("ptxkit_shard.cu", shard_source, NULL, 0, out);
}

ptxkit_status shard_kernel_get(ptxkit_comm *comm, int l, shard_kernel which, ptxkit_reduce_op op, ptxkit_dtype type,
                               ptxkit_kernel **out) {
    static const char *const entries[SHARD_KERNEL_COUNT] = {"shard_total", "shard_combine", "shard_offset"};
    comm_rank *lr = &comm->local[l];
    ptxkit_kernel **slot = &lr->kernels[which][type][op];
    if (!*slot) {
        char type_define[16] = "TYPE_ID=", op_define[16] = "OP=";
        type_define[8] = (char)('0' + (int)type);
        op_define[3] = (char)('0' + (int)op);
        const char *defines[2] = {type_define, op_define};
        ptxkit_status st = ptxkit_program_kernel_get(lr->ctx, comm->program, entries[which], defines, 2, slot);
        if (st != PTXKIT_SUCCESS) return st;
    }
    *out = *slot;
    return PTXKIT_SUCCESS;
}

void shard_identity(ptxkit_reduce_op op, ptxkit_dtype type, unsigned char out[8]) {
    memset(out, 0, 8);
    size_t size = ptxkit_dtype_size(type);
    if (op == PTXKIT_REDUCE_AND) {
        memset(out, 0xff, size);
        return;
    }
    if (op != PTXKIT_REDUCE_MIN && op != PTXKIT_REDUCE_MAX) return; /* sum, or, xor: zero */
    bool min = op == PTXKIT_REDUCE_MIN;
    union {
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f32;
        double f64;
    } v;
    switch (type) {
    case PTXKIT_INT32: v.i32 = min ? INT32_MAX : INT32_MIN; break;
    case PTXKIT_UINT32: v.u32 = min ? UINT32_MAX : 0; break;
    case PTXKIT_INT64: v.i64 = min ? INT64_MAX : INT64_MIN; break;
    case PTXKIT_UINT64: v.u64 = min ? UINT64_MAX : 0; break;
    case PTXKIT_FLOAT32: v.f32 = min ? __builtin_inff() : -__builtin_inff(); break;
    default: v.f64 = min ? __builtin_inf() : -__builtin_inf(); break;
    }
    memcpy(out, &v, size);
}
