/* Device and pinned host memory, copies and memsets. */
#include <stdio.h>

#include "runtime/args.h"
#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/objects.h"
#include "runtime/status.h"

/* Runs one driver call with ctx current; the call's CUresult becomes a status. */
#define WITH_CONTEXT(ctx, what, call)                                    \
    do {                                                                 \
        ptxkit_status with_st_ = context_enter(ctx);                     \
        if (with_st_ != PTXKIT_SUCCESS) return with_st_;                 \
        CUresult with_r_ = (call);                                       \
        context_leave(ctx);                                              \
        return with_r_ == CUDA_SUCCESS ? PTXKIT_SUCCESS                  \
                                       : record_cuda_error(ctx, with_r_, what); \
    } while (0)

/* Synchronous calls the capturing thread may not make (capture.h). */
#define CAPTURE_REFUSE(ctx, what)                                        \
    do {                                                                 \
        ptxkit_status refuse_st_ = capture_thread_refuse((ctx), (what)); \
        if (refuse_st_ != PTXKIT_SUCCESS) return refuse_st_;             \
    } while (0)

#define REQUIRE(ctx, cond, ...) \
    do { if (!(cond)) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, __VA_ARGS__); } while (0)

ptxkit_status ptxkit_memory_alloc(ptxkit_context *ctx, size_t bytes, ptxkit_dptr *out) {
    REQUIRE(ctx, ctx && out, "ptxkit_memory_alloc: NULL argument");
    *out = 0;
    REQUIRE(ctx, bytes > 0, "ptxkit_memory_alloc: zero bytes requested");
    CUdeviceptr p = 0;
    CAPTURE_REFUSE(ctx, "ptxkit_memory_alloc");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuMemAlloc(&p, bytes);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "ptxkit_memory_alloc(%zu bytes)", bytes);
        return record_cuda_error(ctx, r, what);
    }
    *out = p;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_memory_free(ptxkit_context *ctx, ptxkit_dptr ptr) {
    REQUIRE(ctx, ctx, "ptxkit_memory_free: context is NULL");
    if (!ptr) return PTXKIT_SUCCESS;
    CAPTURE_REFUSE(ctx, "ptxkit_memory_free");
    WITH_CONTEXT(ctx, "ptxkit_memory_free", ctx->cu->cuMemFree(ptr));
}

ptxkit_status ptxkit_host_free(ptxkit_context *ctx, void *ptr) {
    REQUIRE(ctx, ctx, "ptxkit_host_free: context is NULL");
    if (!ptr) return PTXKIT_SUCCESS;
    CAPTURE_REFUSE(ctx, "ptxkit_host_free");
    WITH_CONTEXT(ctx, "ptxkit_host_free", ctx->cu->cuMemFreeHost(ptr));
}

ptxkit_status ptxkit_memory_info_get(ptxkit_context *ctx, size_t *free_bytes, size_t *total_bytes) {
    REQUIRE(ctx, ctx && free_bytes && total_bytes, "ptxkit_memory_info_get: NULL argument");
    WITH_CONTEXT(ctx, "cuMemGetInfo", ctx->cu->cuMemGetInfo(free_bytes, total_bytes));
}

/* Copies of zero bytes are no-ops that accept NULL pointers. */
#define COPY_ARGS(name, dst, src, bytes)                                              \
    REQUIRE(ctx, ctx, name ": context is NULL");                                      \
    if ((bytes) == 0) return PTXKIT_SUCCESS;                                          \
    REQUIRE(ctx, (dst) && (src), name ": NULL %s", (dst) ? "source" : "destination")

/* A synchronous copy that the driver may return from with its bytes still
 * in flight on the legacy stream (from pageable host memory once they are
 * staged; device to device at once), waited for there: the call keeps
 * ptxkit.h's word (the twin without _async waits), and work queued on a
 * non-blocking stream afterwards reads the copied bytes. */
static CUresult copy_landed(ptxkit_context *ctx, CUresult r) {
    return r == CUDA_SUCCESS ? ctx->cu->cuStreamSynchronize(CU_STREAM_LEGACY) : r;
}

ptxkit_status ptxkit_memory_write(ptxkit_context *ctx, ptxkit_dptr dst, const void *src, size_t bytes) {
    COPY_ARGS("ptxkit_memory_write", dst, src, bytes);
    CAPTURE_REFUSE(ctx, "ptxkit_memory_write");
    WITH_CONTEXT(ctx, "cuMemcpyHtoD", copy_landed(ctx, ctx->cu->cuMemcpyHtoD(dst, src, bytes)));
}

ptxkit_status ptxkit_memory_read(ptxkit_context *ctx, void *dst, ptxkit_dptr src, size_t bytes) {
    COPY_ARGS("ptxkit_memory_read", dst, src, bytes);
    CAPTURE_REFUSE(ctx, "ptxkit_memory_read");
    WITH_CONTEXT(ctx, "cuMemcpyDtoH", ctx->cu->cuMemcpyDtoH(dst, src, bytes));
}

ptxkit_status ptxkit_memory_copy(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes) {
    COPY_ARGS("ptxkit_memory_copy", dst, src, bytes);
    CAPTURE_REFUSE(ctx, "ptxkit_memory_copy");
    WITH_CONTEXT(ctx, "cuMemcpyDtoD", copy_landed(ctx, ctx->cu->cuMemcpyDtoD(dst, src, bytes)));
}

ptxkit_status ptxkit_memory_write_async(ptxkit_context *ctx, ptxkit_dptr dst, const void *src, size_t bytes,
                                       ptxkit_stream *stream) {
    COPY_ARGS("ptxkit_memory_write_async", dst, src, bytes);
    WITH_CONTEXT(ctx, "cuMemcpyHtoDAsync", ctx->cu->cuMemcpyHtoDAsync(dst, src, bytes, stream_handle(stream)));
}

ptxkit_status ptxkit_memory_read_async(ptxkit_context *ctx, void *dst, ptxkit_dptr src, size_t bytes,
                                       ptxkit_stream *stream) {
    COPY_ARGS("ptxkit_memory_read_async", dst, src, bytes);
    WITH_CONTEXT(ctx, "cuMemcpyDtoHAsync", ctx->cu->cuMemcpyDtoHAsync(dst, src, bytes, stream_handle(stream)));
}

ptxkit_status ptxkit_memory_copy_async(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                                       ptxkit_stream *stream) {
    COPY_ARGS("ptxkit_memory_copy_async", dst, src, bytes);
    WITH_CONTEXT(ctx, "cuMemcpyDtoDAsync", ctx->cu->cuMemcpyDtoDAsync(dst, src, bytes, stream_handle(stream)));
}

ptxkit_status ptxkit_memory_set8_async(ptxkit_context *ctx, ptxkit_dptr dst, uint8_t value, size_t count, ptxkit_stream *stream) {
    REQUIRE(ctx, ctx, "ptxkit_memory_set8_async: context is NULL");
    if (count == 0) return PTXKIT_SUCCESS;
    REQUIRE(ctx, dst, "ptxkit_memory_set8_async: NULL destination");
    WITH_CONTEXT(ctx, "cuMemsetD8Async", ctx->cu->cuMemsetD8Async(dst, value, count, stream_handle(stream)));
}

ptxkit_status ptxkit_memory_set32_async(ptxkit_context *ctx, ptxkit_dptr dst, uint32_t value, size_t count,
                              ptxkit_stream *stream) {
    REQUIRE(ctx, ctx, "ptxkit_memory_set32_async: context is NULL");
    if (count == 0) return PTXKIT_SUCCESS;
    REQUIRE(ctx, dst, "ptxkit_memory_set32_async: NULL destination");
    size_t bytes;
    if (!mul_size(count, 4, &bytes)) return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "ptxkit_memory_set32_async: %zu words overflow", count);
    if (dst & 3) return record_error(ctx, PTXKIT_ERROR_MISALIGNED, "ptxkit_memory_set32_async: destination 0x%llx is not 4-byte aligned",
                                     (unsigned long long)dst);
    WITH_CONTEXT(ctx, "cuMemsetD32Async", ctx->cu->cuMemsetD32Async(dst, value, count, stream_handle(stream)));
}

/* Pinned host memory with flags, registration of existing host memory, and
 * the device address of mapped memory (ptxkit.h, "pinned, registered and
 * mapped host memory"). */
ptxkit_status ptxkit_host_alloc(ptxkit_context *ctx, size_t bytes, unsigned flags, void **out) {
    REQUIRE(ctx, ctx && out, "ptxkit_host_alloc: NULL argument");
    *out = NULL;
    if (bytes == 0) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_alloc: zero bytes requested");
    const unsigned known = PTXKIT_HOST_PORTABLE | PTXKIT_HOST_MAPPED | PTXKIT_HOST_WRITE_COMBINED;
    if (flags & ~known)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_host_alloc: flags 0x%x are unknown or not for allocations (READ_ONLY is for "
                            "ptxkit_host_register)",
                            flags & ~known);
    CAPTURE_REFUSE(ctx, "ptxkit_host_alloc");
    /* flags 0 is cuMemAllocHost, which every driver has */
    if (flags == 0) WITH_CONTEXT(ctx, "ptxkit_host_alloc", ctx->cu->cuMemAllocHost(out, bytes));
    NEED_DRIVER_ENTRY(ctx, cuMemHostAlloc, "ptxkit_host_alloc");
    unsigned cu_flags = (flags & PTXKIT_HOST_PORTABLE ? CU_MEMHOSTALLOC_PORTABLE : 0) |
                        (flags & PTXKIT_HOST_MAPPED ? CU_MEMHOSTALLOC_DEVICEMAP : 0) |
                        (flags & PTXKIT_HOST_WRITE_COMBINED ? CU_MEMHOSTALLOC_WRITECOMBINED : 0);
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    void *p = NULL;
    CUresult r = ctx->cu->cuMemHostAlloc(&p, bytes, cu_flags);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "ptxkit_host_alloc: cuMemHostAlloc");
    *out = p;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_host_register(ptxkit_context *ctx, void *ptr, size_t bytes, unsigned flags) {
    REQUIRE(ctx, ctx && ptr, "ptxkit_host_register: NULL argument");
    if (bytes == 0) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_register: zero bytes");
    const unsigned known = PTXKIT_HOST_PORTABLE | PTXKIT_HOST_MAPPED | PTXKIT_HOST_READ_ONLY;
    if (flags & ~known)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_host_register: flags 0x%x are unknown or not for registration (WRITE_COMBINED "
                            "is for ptxkit_host_alloc)",
                            flags & ~known);
    NEED_DRIVER_ENTRY(ctx, cuMemHostRegister, "ptxkit_host_register");
    CAPTURE_REFUSE(ctx, "ptxkit_host_register");
    unsigned cu_flags = (flags & PTXKIT_HOST_PORTABLE ? CU_MEMHOSTREGISTER_PORTABLE : 0) |
                        (flags & PTXKIT_HOST_MAPPED ? CU_MEMHOSTREGISTER_DEVICEMAP : 0) |
                        (flags & PTXKIT_HOST_READ_ONLY ? CU_MEMHOSTREGISTER_READ_ONLY : 0);
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
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
    REQUIRE(ctx, ctx && ptr, "ptxkit_host_unregister: NULL argument");
    NEED_DRIVER_ENTRY(ctx, cuMemHostUnregister, "ptxkit_host_unregister");
    CAPTURE_REFUSE(ctx, "ptxkit_host_unregister");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
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
    NEED_DRIVER_ENTRY(ctx, cuMemHostGetDevicePointer, "ptxkit_host_device_pointer_get");
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
