/* Streams and events. */
#include <stdbool.h>
#include <stdlib.h>

#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/objects.h"
#include "runtime/status.h"

ptxkit_status ptxkit_stream_wrap(ptxkit_context *ctx, void *cu_stream, ptxkit_stream **out) {
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_stream_wrap: NULL argument");
    *out = NULL;
    if (!cu_stream)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_stream_wrap: the CUstream is NULL (a NULL ptxkit_stream is the default stream)");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    /* a stream of another context would fail at its first launch, far from here */
    CUcontext owner = NULL;
    CUresult r = ctx->cu->cuStreamGetCtx((CUstream)cu_stream, &owner);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "ptxkit_stream_wrap: cuStreamGetCtx");
    if (owner != ctx->cu_context)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_stream_wrap: the CUstream belongs to another CUDA context than this one's");
    ptxkit_stream *s = calloc(1, sizeof *s);
    if (!s) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_stream_wrap: out of host memory");
    s->ctx = ctx;
    s->handle = (CUstream)cu_stream;
    s->wrapped = true;
    *out = s;
    return PTXKIT_SUCCESS;
}

void ptxkit_stream_destroy(ptxkit_stream *stream) {
    if (!stream) return;
    ptxkit_context *ctx = stream->ctx;
    /* e.g. scratch handed over by event; for a wrapped stream too, since the
     * application may destroy its CUstream once the wrapper is gone. Without
     * the context current (a lost context) the driver call fails harmlessly
     * and the wrapper is freed all the same: a destroy cannot be retried. */
    bool entered = context_enter(ctx) == PTXKIT_SUCCESS;
    context_stream_closing(ctx, stream->handle);
    capture_thread_ended(stream->handle); /* a capture ptxkit began on it is over */
    if (entered) {
        if (!stream->wrapped) ctx->cu->cuStreamDestroy(stream->handle);
        context_leave(ctx);
    }
    free(stream);
}

ptxkit_status ptxkit_stream_synchronize(ptxkit_context *ctx, ptxkit_stream *stream) {
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_stream_synchronize");
    /* on a captured stream the driver refuses and invalidates the capture */
    if ((st = capture_stream_refuse(ctx, stream_handle(stream), "ptxkit_stream_synchronize")) != PTXKIT_SUCCESS) {
        context_leave(ctx);
        return st;
    }
    CUresult r = ctx->cu->cuStreamSynchronize(stream_handle(stream));
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS
                             : record_cuda_error(ctx, r, "ptxkit_stream_synchronize: cuStreamSynchronize");
}

void *ptxkit_stream_handle_get(ptxkit_stream *stream) { return stream_handle(stream); }

void ptxkit_event_destroy(ptxkit_event *event) {
    if (!event) return;
    ptxkit_context *ctx = event->ctx;
    if (context_enter(ctx) == PTXKIT_SUCCESS) {
        ctx->cu->cuEventDestroy(event->handle);
        context_leave(ctx);
    }
    free(event);
}

ptxkit_status ptxkit_event_record(ptxkit_context *ctx, ptxkit_event *event, ptxkit_stream *stream) {
    if (!event) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_event_record: event is NULL");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuEventRecord(event->handle, stream_handle(stream));
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_event_record: cuEventRecord");
}

ptxkit_status ptxkit_event_synchronize(ptxkit_context *ctx, ptxkit_event *event) {
    if (!event) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_event_synchronize: event is NULL");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuEventSynchronize(event->handle);
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS
                             : record_cuda_error(ctx, r, "ptxkit_event_synchronize: cuEventSynchronize");
}

ptxkit_status ptxkit_event_elapsed_ms_get(ptxkit_context *ctx, ptxkit_event *start, ptxkit_event *end, float *ms) {
    if (!start || !end || !ms)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_event_elapsed_ms_get: NULL argument");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuEventElapsedTime(ms, start->handle, end->handle);
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_event_elapsed_ms_get: cuEventElapsedTime");
}
