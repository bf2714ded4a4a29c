/* The calling thread's captures, and the refusal of calls that cannot be
 * captured (capture.h). */
#include "runtime/capture.h"

#include "runtime/objects.h"
#include "runtime/status.h"

/* The streams this thread began capturing through ptxkit. A capture ended
 * behind ptxkit's back (a raw cuStreamEndCapture, a destroyed stream) is
 * dropped at the next check, where the driver can say so. */
enum { THREAD_CAPTURES_MAX = 64 };
static _Thread_local CUstream thread_captures[THREAD_CAPTURES_MAX];
static _Thread_local int thread_capture_count;

void capture_thread_begun(CUstream stream) {
    if (thread_capture_count < THREAD_CAPTURES_MAX) thread_captures[thread_capture_count++] = stream;
}

void capture_thread_ended(CUstream stream) {
    for (int i = 0; i < thread_capture_count; i++)
        if (thread_captures[i] == stream) {
            thread_captures[i] = thread_captures[--thread_capture_count];
            return;
        }
}

bool capture_thread_has(CUstream stream) {
    for (int i = 0; i < thread_capture_count; i++)
        if (thread_captures[i] == stream) return true;
    return false;
}

CUresult capture_stream_query(const cuda_driver *cu, CUstream stream, CUstreamCaptureStatus *status) {
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return cu->cuStreamIsCapturing ? cu->cuStreamIsCapturing(stream, status) : CUDA_SUCCESS;
}

/* Drops the streams the driver says are no longer captured. */
static void prune(const cuda_driver *cu) {
    if (!cu || !cu->cuStreamIsCapturing) return;
    for (int i = 0; i < thread_capture_count;) {
        CUstreamCaptureStatus status;
        CUresult r = capture_stream_query(cu, thread_captures[i], &status);
        bool gone = r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_CONTEXT_IS_DESTROYED;
        if (gone || (r == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_NONE))
            thread_captures[i] = thread_captures[--thread_capture_count];
        else
            i++;
    }
}

ptxkit_status capture_thread_refuse(ptxkit_context *ctx, const char *what) {
    if (thread_capture_count == 0) return PTXKIT_SUCCESS;
    prune(ctx ? ctx->cu : NULL);
    if (thread_capture_count == 0) return PTXKIT_SUCCESS;
    return record_error(ctx, PTXKIT_ERROR_CAPTURE,
                        "%s: not allowed while this thread captures a stream into a graph (it would allocate, free "
                        "or wait): call it before ptxkit_graph_capture_begin or after ptxkit_graph_capture_end; "
                        "nothing was done and the capture is intact",
                        what);
}

ptxkit_status capture_stream_refuse(ptxkit_context *ctx, CUstream stream, const char *what) {
    ptxkit_status st = capture_thread_refuse(ctx, what);
    if (st != PTXKIT_SUCCESS) return st;
    CUstreamCaptureStatus status;
    CUresult r = capture_stream_query(ctx->cu, stream, &status);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "cuStreamIsCapturing");
    if (status == CU_STREAM_CAPTURE_STATUS_NONE) return PTXKIT_SUCCESS;
    return record_error(ctx, PTXKIT_ERROR_CAPTURE,
                        "%s: the stream is being captured into a graph%s: waiting for it or asking about it would "
                        "invalidate the capture; nothing was done",
                        what, status == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? " (a capture already invalidated)" : "");
}
