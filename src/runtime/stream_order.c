/* Streams with flags and priorities, queries that do not wait, waits on
 * events, host functions, events with flags (ptxkit.h, "Which stream a
 * call uses"). Optional driver entries: a driver without one answers
 * UNSUPPORTED. */
#include <stdlib.h>

#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/objects.h"
#include "runtime/status.h"

static ptxkit_status priority_range(ptxkit_context *ctx, int *least, int *greatest, const char *what) {
    NEED_DRIVER_ENTRY(ctx, cuCtxGetStreamPriorityRange, what);
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuCtxGetStreamPriorityRange(least, greatest);
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "cuCtxGetStreamPriorityRange");
}

ptxkit_status ptxkit_stream_priority_range_get(ptxkit_context *ctx, int *least, int *greatest) {
    if (!ctx || (!least && !greatest))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_stream_priority_range_get: NULL argument");
    int lo = 0, hi = 0;
    ptxkit_status st = priority_range(ctx, &lo, &hi, "ptxkit_stream_priority_range_get");
    if (st != PTXKIT_SUCCESS) return st;
    if (least) *least = lo;
    if (greatest) *greatest = hi;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_stream_create(ptxkit_context *ctx, unsigned flags, int priority, ptxkit_stream **out) {
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_stream_create: NULL argument");
    *out = NULL;
    if (flags & ~PTXKIT_STREAM_BLOCKING)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_stream_create: unknown flags 0x%x",
                            flags & ~PTXKIT_STREAM_BLOCKING);
    ptxkit_status st;
    if (priority != 0) { /* 0, the default, is in every device's range: no query */
        NEED_DRIVER_ENTRY(ctx, cuStreamCreateWithPriority, "ptxkit_stream_create");
        int least = 0, greatest = 0;
        st = priority_range(ctx, &least, &greatest, "ptxkit_stream_create");
        if (st != PTXKIT_SUCCESS) return st;
        /* the driver clamps an out-of-range priority silently: say so instead */
        if (priority > least || priority < greatest)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_stream_create: priority %d is outside this device's range %d (least urgent) "
                                "to %d (most urgent)",
                                priority, least, greatest);
    }
    ptxkit_stream *s = calloc(1, sizeof *s);
    if (!s) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_stream_create: out of host memory");
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) {
        free(s);
        return st;
    }
    unsigned cu_flags = flags & PTXKIT_STREAM_BLOCKING ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING;
    CUresult r = priority != 0 ? ctx->cu->cuStreamCreateWithPriority(&s->handle, cu_flags, priority)
                               : ctx->cu->cuStreamCreate(&s->handle, cu_flags);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) {
        free(s);
        return record_cuda_error(ctx, r, priority != 0 ? "ptxkit_stream_create: cuStreamCreateWithPriority" : "ptxkit_stream_create: cuStreamCreate");
    }
    s->ctx = ctx;
    *out = s;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_stream_priority_get(ptxkit_context *ctx, ptxkit_stream *stream, int *priority) {
    if (!ctx || !priority)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_stream_priority_get: NULL argument");
    NEED_DRIVER_ENTRY(ctx, cuStreamGetPriority, "ptxkit_stream_priority_get");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuStreamGetPriority(stream_handle(stream), priority);
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS
                             : record_cuda_error(ctx, r, "ptxkit_stream_priority_get: cuStreamGetPriority");
}

ptxkit_status ptxkit_stream_query(ptxkit_context *ctx, ptxkit_stream *stream) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_stream_query: context is NULL");
    NEED_DRIVER_ENTRY(ctx, cuStreamQuery, "ptxkit_stream_query");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUstream h = stream_handle(stream);
    st = capture_stream_refuse(ctx, h, "ptxkit_stream_query");
    CUresult r = st == PTXKIT_SUCCESS ? ctx->cu->cuStreamQuery(h) : CUDA_SUCCESS;
    context_leave(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    if (r == CUDA_ERROR_NOT_READY) return PTXKIT_NOT_READY;
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_stream_query: cuStreamQuery");
}

ptxkit_status ptxkit_stream_wait_event(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_event *event) {
    if (!ctx || !event)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_stream_wait_event: NULL argument");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuStreamWaitEvent(stream_handle(stream), event->handle, 0);
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_stream_wait_event: cuStreamWaitEvent");
}

ptxkit_status ptxkit_host_func_launch(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_host_func fn, void *user) {
    if (!ctx || !fn) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_func_launch: NULL argument");
    NEED_DRIVER_ENTRY(ctx, cuLaunchHostFunc, "ptxkit_host_func_launch");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuLaunchHostFunc(stream_handle(stream), (CUhostFn)fn, user);
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_host_func_launch: cuLaunchHostFunc");
}

ptxkit_status ptxkit_event_create(ptxkit_context *ctx, unsigned flags, ptxkit_event **out) {
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_event_create: NULL argument");
    *out = NULL;
    const unsigned known = PTXKIT_EVENT_DISABLE_TIMING | PTXKIT_EVENT_BLOCKING_SYNC;
    if (flags & ~known)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_event_create: unknown flags 0x%x",
                            flags & ~known);
    unsigned cu_flags = (flags & PTXKIT_EVENT_DISABLE_TIMING ? CU_EVENT_DISABLE_TIMING : 0) |
                        (flags & PTXKIT_EVENT_BLOCKING_SYNC ? CU_EVENT_BLOCKING_SYNC : 0);
    ptxkit_event *e = calloc(1, sizeof *e);
    if (!e) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_event_create: out of host memory");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) {
        free(e);
        return st;
    }
    CUresult r = ctx->cu->cuEventCreate(&e->handle, cu_flags);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) {
        free(e);
        return record_cuda_error(ctx, r, "ptxkit_event_create_ex: cuEventCreate");
    }
    e->ctx = ctx;
    *out = e;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_event_query(ptxkit_context *ctx, ptxkit_event *event) {
    if (!ctx || !event) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_event_query: NULL argument");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuEventQuery(event->handle);
    context_leave(ctx);
    if (r == CUDA_ERROR_NOT_READY) return PTXKIT_NOT_READY;
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_event_query: cuEventQuery");
}
