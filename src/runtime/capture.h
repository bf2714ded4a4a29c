/* Which calls may run while a stream is captured into a graph (capture.c).
 *
 * ptxkit_graph_capture_begin captures in CUDA's thread-local mode: on the
 * capturing thread, the driver refuses calls it cannot record (allocations,
 * frees, synchronous copies, synchronizations) and may invalidate the
 * capture doing so. ptxkit refuses them first, with PTXKIT_ERROR_CAPTURE
 * and nothing done, so that the capture the application is building stays
 * whole. The thread's list holds the streams whose capture ptxkit began on
 * it and that the driver still reports captured (one ended with a raw
 * cuStreamEndCapture drops out at the next check); captures begun with raw
 * driver calls are the application's to manage (the stream-level checks
 * below still see them). */
#ifndef PTXKIT_RUNTIME_CAPTURE_H
#define PTXKIT_RUNTIME_CAPTURE_H

#include <stdbool.h>

#include "driver/driver.h"
#include "ptxkit.h"

/* The one question every capture rule asks: the driver's cuStreamIsCapturing,
 * where a driver without it (no graphs) captures nothing (NONE, success). */
CUresult capture_stream_query(const cuda_driver *cu, CUstream stream, CUstreamCaptureStatus *status);

void capture_thread_begun(CUstream stream);
void capture_thread_ended(CUstream stream);
/* Whether this thread began capturing `stream` through ptxkit and has not
 * ended it. Its own list only, no driver call: a capture ended with a raw
 * cuStreamEndCapture stays listed until the next refusal check prunes it. */
bool capture_thread_has(CUstream stream);

/* PTXKIT_ERROR_CAPTURE (recorded, naming `what`) when the calling thread
 * has a capture begun by ptxkit under way; else PTXKIT_SUCCESS. */
ptxkit_status capture_thread_refuse(ptxkit_context *ctx, const char *what);

/* PTXKIT_ERROR_CAPTURE (recorded) when `stream` is being captured by anyone,
 * or the thread has a ptxkit capture under way; context current. A driver
 * without cuStreamIsCapturing captures nothing. */
ptxkit_status capture_stream_refuse(ptxkit_context *ctx, CUstream stream, const char *what);

#endif
