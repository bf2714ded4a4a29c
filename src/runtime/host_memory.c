/* Pinned host memory with flags, registration of existing host memory, and
 * the device address of mapped memory (ptxkit.h, "pinned, registered and
 * mapped host memory"). ptxkit_host_alloc and _free stay in memory.c. */
#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/objects.h"
#include "runtime/status.h"

#define NEED_ENTRY(ctx, name, what)                                                                            \
    do {                                                                                                       \
        if (!(ctx)->cu || !(ctx)->cu->name)                                                                    \
            return record_error((ctx), PTXKIT_ERROR_UNSUPPORTED, "%s: the driver has no " #name, (what));     \
    } while (0)

ptxkit_status ptxkit_host_alloc_ex(ptxkit_context *ctx, size_t bytes, unsigned flags, void **out) {
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_alloc_ex: NULL argument");
    *out = NULL;
    if (bytes == 0) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_alloc_ex: zero bytes requested");
    const unsigned known = PTXKIT_HOST_PORTABLE | PTXKIT_HOST_MAPPED | PTXKIT_HOST_WRITE_COMBINED;
    if (flags & ~known)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_host_alloc_ex: flags 0x%x are unknown or not for allocations (READ_ONLY is for "
                            "ptxkit_host_register)",
                            flags & ~known);
    NEED_ENTRY(ctx, cuMemHostAlloc, "ptxkit_host_alloc_ex");
    ptxkit_status st = capture_thread_refuse(ctx, "ptxkit_host_alloc_ex");
    if (st != PTXKIT_SUCCESS) return st;
    unsigned cu_flags = (flags & PTXKIT_HOST_PORTABLE ? CU_MEMHOSTALLOC_PORTABLE : 0) |
                        (flags & PTXKIT_HOST_MAPPED ? CU_MEMHOSTALLOC_DEVICEMAP : 0) |
                        (flags & PTXKIT_HOST_WRITE_COMBINED ? CU_MEMHOSTALLOC_WRITECOMBINED : 0);
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    void *p = NULL;
    CUresult r = ctx->cu->cuMemHostAlloc(&p, bytes, cu_flags);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "ptxkit_host_alloc_ex: cuMemHostAlloc");
    *out = p;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_host_register(ptxkit_context *ctx, void *ptr, size_t bytes, unsigned flags) {
    if (!ctx || !ptr) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_register: NULL argument");
    if (bytes == 0) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_register: zero bytes");
    const unsigned known = PTXKIT_HOST_PORTABLE | PTXKIT_HOST_MAPPED | PTXKIT_HOST_READ_ONLY;
    if (flags & ~known)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_host_register: flags 0x%x are unknown or not for registration (WRITE_COMBINED "
                            "is for ptxkit_host_alloc_ex)",
                            flags & ~known);
    NEED_ENTRY(ctx, cuMemHostRegister, "ptxkit_host_register");
    ptxkit_status st = capture_thread_refuse(ctx, "ptxkit_host_register");
    if (st != PTXKIT_SUCCESS) return st;
    unsigned cu_flags = (flags & PTXKIT_HOST_PORTABLE ? CU_MEMHOSTREGISTER_PORTABLE : 0) |
                        (flags & PTXKIT_HOST_MAPPED ? CU_MEMHOSTREGISTER_DEVICEMAP : 0) |
                        (flags & PTXKIT_HOST_READ_ONLY ? CU_MEMHOSTREGISTER_READ_ONLY : 0);
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuMemHostRegister(ptr, bytes, cu_flags);
    context_leave(ctx);
    if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_host_register: [%p, +%zu) overlaps a range already registered", ptr, bytes);
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "ptxkit_host_register: flags 0x%x are not supported on this system (READ_ONLY needs "
                            "CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED)",
                            flags);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_host_register: cuMemHostRegister");
}

ptxkit_status ptxkit_host_unregister(ptxkit_context *ctx, void *ptr) {
    if (!ctx || !ptr) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_unregister: NULL argument");
    NEED_ENTRY(ctx, cuMemHostUnregister, "ptxkit_host_unregister");
    ptxkit_status st = capture_thread_refuse(ctx, "ptxkit_host_unregister");
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuMemHostUnregister(ptr);
    context_leave(ctx);
    if (r == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_host_unregister: %p is not the start of a registered range", ptr);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_host_unregister: cuMemHostUnregister");
}

ptxkit_status ptxkit_host_device_pointer_get(ptxkit_context *ctx, void *host, ptxkit_dptr *out) {
    if (!ctx || !host || !out)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_device_pointer_get: NULL argument");
    *out = 0;
    NEED_ENTRY(ctx, cuMemHostGetDevicePointer, "ptxkit_host_device_pointer_get");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUdeviceptr d = 0;
    CUresult r = ctx->cu->cuMemHostGetDevicePointer(&d, host, 0);
    context_leave(ctx);
    if (r == CUDA_ERROR_INVALID_VALUE)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_host_device_pointer_get: %p is not in pinned host memory mapped for the device "
                            "(PTXKIT_HOST_MAPPED)",
                            host);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "ptxkit_host_device_pointer_get: cuMemHostGetDevicePointer");
    *out = d;
    return PTXKIT_SUCCESS;
}
