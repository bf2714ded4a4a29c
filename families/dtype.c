/* Element types shared by the kernel families. */
#include "ptxkit.h"

static const struct {
    const char *name;
    size_t size;
} dtypes[PTXKIT_DTYPE_COUNT] = {
    [PTXKIT_INT32] = {"int32", 4},     [PTXKIT_UINT32] = {"uint32", 4},   [PTXKIT_INT64] = {"int64", 8},
    [PTXKIT_UINT64] = {"uint64", 8},   [PTXKIT_FLOAT32] = {"float32", 4}, [PTXKIT_FLOAT64] = {"float64", 8},
};

const char *ptxkit_dtype_name(ptxkit_dtype type) { return (unsigned)type < PTXKIT_DTYPE_COUNT ? dtypes[type].name : NULL; }

size_t ptxkit_dtype_size(ptxkit_dtype type) { return (unsigned)type < PTXKIT_DTYPE_COUNT ? dtypes[type].size : 0; }
