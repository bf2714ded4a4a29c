/* The few driver entry points the command calls itself, beside ptxkit: the
 * raw side of `ptxkit bench launch` (cuLaunchKernel on the CUfunction that
 * ptxkit_kernel_handle_get returns; with ptxkit_context_enter around it) and
 * the driver-API floor of `ptxkit bench startup --user`. Resolved from
 * libcuda.so.1 through cuGetProcAddress, as the library does. */
#ifndef PTXKIT_CLI_CUDA_DIRECT_H
#define PTXKIT_CLI_CUDA_DIRECT_H

#include <stddef.h>

#include <cuda.h>

typedef struct cuda_direct {
    CUresult (*launch_kernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared, CUstream stream, void **params, void **extra);
    CUresult (*stream_synchronize)(CUstream stream);
    CUresult (*error_name)(CUresult error, const char **name);
    /* What a hand-written driver-API program calls to run its first kernel
     * from a CUBIN file: the floor `ptxkit bench startup --user` compares
     * with, in a process where ptxkit never runs. */
    CUresult (*init)(unsigned flags);
    CUresult (*device_get)(CUdevice *device, int ordinal);
    CUresult (*primary_ctx_retain)(CUcontext *ctx, CUdevice device);
    CUresult (*ctx_set_current)(CUcontext ctx);
    CUresult (*mem_alloc)(CUdeviceptr *dptr, size_t bytes);
    CUresult (*module_load)(CUmodule *module, const char *path);
    CUresult (*module_get_function)(CUfunction *f, CUmodule module, const char *name);
    CUresult (*ctx_synchronize)(void);
    CUresult (*memcpy_dtoh)(void *dst, CUdeviceptr src, size_t bytes);
} cuda_direct;

/* The entry points, or NULL with *why saying what was missing. Opens
 * libcuda.so.1 itself, so it serves a process where ptxkit never ran. */
const cuda_direct *cuda_direct_get(char *why, size_t why_size);

#endif
