/* The calling thread's captures, and the refusal of calls that cannot be
 * captured (capture.h). */
#include "runtime/capture.h"

#include "runtime/objects.h"
#include "runtime/status.h"

static _Thread_local int thread_captures;

void capture_thread_begun(void) { thread_captures++; }

void capture_thread_ended(void) {
    if (thread_captures > 0) thread_captures--;
}

ptxkit_status capture_thread_refuse(ptxkit_context *ctx, const char *what) {
    if (thread_captures == 0) return PTXKIT_SUCCESS;
    return record_error(ctx, PTXKIT_ERROR_CAPTURE,
                        "%s: not allowed while this thread captures a stream into a graph (it would allocate, free "
                        "or wait): call it before ptxkit_graph_capture_begin or after ptxkit_graph_capture_end; "
                        "nothing was done and the capture is intact",
                        what);
}

ptxkit_status capture_stream_refuse(ptxkit_context *ctx, CUstream stream, const char *what) {
    ptxkit_status st = capture_thread_refuse(ctx, what);
    if (st != PTXKIT_SUCCESS || !ctx->cu->cuStreamIsCapturing) return st;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = ctx->cu->cuStreamIsCapturing(stream, &status);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "cuStreamIsCapturing");
    if (status == CU_STREAM_CAPTURE_STATUS_NONE) return PTXKIT_SUCCESS;
    return record_error(ctx, PTXKIT_ERROR_CAPTURE,
                        "%s: the stream is being captured into a graph%s: waiting for it or asking about it would "
                        "invalidate the capture; nothing was done",
                        what, status == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? " (a capture already invalidated)" : "");
}
