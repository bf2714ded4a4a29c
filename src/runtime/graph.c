/* Graphs captured from a stream (ptxkit.h, "graphs"): begin and end a
 * capture in thread-local mode, instantiate once, patch the executable
 * graph in place on later captures (cuGraphExecUpdate), re-instantiating
 * only when the topology changed. */
#include <stdbool.h>
#include <stdlib.h>

#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/objects.h"
#include "runtime/status.h"

struct ptxkit_graph {
    ptxkit_context *ctx; /* ptxkit_graph_destroy needs no other */
    CUgraph graph;     /* the capture the executable graph now runs: for the node count */
    CUgraphExec exec;
};

/* Every graph entry point, or UNSUPPORTED naming the first missing one. */
static ptxkit_status need_graphs(ptxkit_context *ctx, const char *what) {
    const cuda_driver *cu = ctx->cu;
    const char *missing = !cu                                  ? "a driver"
                          : !cu->cuStreamBeginCapture          ? "cuStreamBeginCapture"
                          : !cu->cuStreamEndCapture            ? "cuStreamEndCapture"
                          : !cu->cuStreamIsCapturing           ? "cuStreamIsCapturing"
                          : !cu->cuGraphInstantiateWithFlags   ? "cuGraphInstantiateWithFlags"
                          : !cu->cuGraphLaunch                 ? "cuGraphLaunch"
                          : !cu->cuGraphExecUpdate             ? "cuGraphExecUpdate"
                          : !cu->cuGraphExecDestroy            ? "cuGraphExecDestroy"
                          : !cu->cuGraphDestroy                ? "cuGraphDestroy"
                          : !cu->cuGraphGetNodes               ? "cuGraphGetNodes"
                                                               : NULL;
    if (!missing) return PTXKIT_SUCCESS;
    return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: the driver has no %s (CUDA graphs)", what, missing);
}

/* Instantiates with the calling thread's capture mode relaxed meanwhile:
 * instantiation may allocate, which the driver refuses on a thread that has
 * another capture under way in thread-local or global mode (two captures
 * on one thread, ended one at a time), as capture_guard_enter relaxes it
 * for a module load. Context current. */
static CUresult instantiate(const cuda_driver *cu, CUgraphExec *exec, CUgraph graph) {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    bool exchanged = cu->cuThreadExchangeStreamCaptureMode && cu->cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
    CUresult r = cu->cuGraphInstantiateWithFlags(exec, graph, 0);
    if (exchanged) cu->cuThreadExchangeStreamCaptureMode(&mode);
    return r;
}

ptxkit_status ptxkit_graph_capture_begin(ptxkit_context *ctx, ptxkit_stream *stream) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_graph_capture_begin: context is NULL");
    if (!stream)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_graph_capture_begin: the legacy default stream (NULL) cannot be captured: "
                            "capture a stream from ptxkit_stream_create");
    ptxkit_status st = need_graphs(ctx, "ptxkit_graph_capture_begin");
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUstreamCaptureStatus status;
    CUresult r = capture_stream_query(ctx->cu, stream->handle, &status);
    if (r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE) {
        context_leave(ctx);
        return record_error(ctx, PTXKIT_ERROR_CAPTURE, "ptxkit_graph_capture_begin: the stream is already being captured");
    }
    if (r == CUDA_SUCCESS) r = ctx->cu->cuStreamBeginCapture(stream->handle, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "ptxkit_graph_capture_begin: cuStreamBeginCapture");
    capture_thread_begun(stream->handle);
    return PTXKIT_SUCCESS;
}

/* Ends the capture of `stream` into *graph (context current). The capture
 * is over whatever happens, so the thread's count drops once the driver
 * says the stream is no longer captured. */
static ptxkit_status end_capture(ptxkit_context *ctx, ptxkit_stream *stream, CUgraph *graph, const char *what) {
    *graph = NULL;
    if (!stream)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: the stream is NULL (the legacy stream is never captured)",
                            what);
    CUstreamCaptureStatus status;
    CUresult r = capture_stream_query(ctx->cu, stream->handle, &status);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "cuStreamIsCapturing");
    if (status == CU_STREAM_CAPTURE_STATUS_NONE)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%s: the stream is not being captured (no ptxkit_graph_capture_begin on it)", what);
    r = ctx->cu->cuStreamEndCapture(stream->handle, graph);
    CUstreamCaptureStatus after;
    if (capture_stream_query(ctx->cu, stream->handle, &after) == CUDA_SUCCESS && after == CU_STREAM_CAPTURE_STATUS_NONE)
        capture_thread_ended(stream->handle);
    if (r != CUDA_SUCCESS) {
        if (*graph) ctx->cu->cuGraphDestroy(*graph);
        *graph = NULL;
        if (r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
            return record_error(ctx, PTXKIT_ERROR_CAPTURE,
                                "%s: the capture was invalidated (a call on the stream, or one the capture mode "
                                "forbids, was refused by the driver): no graph; the stream is usable again",
                                what);
        return record_cuda_error(ctx, r, "cuStreamEndCapture");
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_graph_capture_end(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_graph **out) {
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_graph_capture_end: NULL argument");
    *out = NULL;
    ptxkit_status st = need_graphs(ctx, "ptxkit_graph_capture_end");
    if (st != PTXKIT_SUCCESS) return st;
    ptxkit_graph *g = calloc(1, sizeof *g);
    if (!g) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_graph_capture_end: out of host memory");
    g->ctx = ctx;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) {
        free(g);
        return st;
    }
    st = end_capture(ctx, stream, &g->graph, "ptxkit_graph_capture_end");
    if (st == PTXKIT_SUCCESS) {
        CUresult r = instantiate(ctx->cu, &g->exec, g->graph);
        if (r != CUDA_SUCCESS) {
            ctx->cu->cuGraphDestroy(g->graph);
            st = record_cuda_error(ctx, r, "ptxkit_graph_capture_end: cuGraphInstantiateWithFlags");
        }
    }
    context_leave(ctx);
    if (st != PTXKIT_SUCCESS) {
        free(g);
        return st;
    }
    *out = g;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_graph_update(ptxkit_context *ctx, ptxkit_graph *graph, ptxkit_stream *stream,
                                  ptxkit_graph_update_kind *how) {
    if (!ctx || !graph) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_graph_update: NULL argument");
    ptxkit_status st = need_graphs(ctx, "ptxkit_graph_update");
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUgraph fresh = NULL;
    st = end_capture(ctx, stream, &fresh, "ptxkit_graph_update");
    if (st != PTXKIT_SUCCESS) {
        context_leave(ctx);
        return st;
    }
    const cuda_driver *cu = ctx->cu;
    CUgraphExecUpdateResultInfo info = {0};
    CUresult r = cu->cuGraphExecUpdate(graph->exec, fresh, &info);
    ptxkit_graph_update_kind kind = PTXKIT_GRAPH_UPDATED_IN_PLACE;
    const char *failed = "ptxkit_graph_update: cuGraphExecUpdate";
    if (r == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
        failed = "ptxkit_graph_update: cuGraphInstantiateWithFlags";
        /* another topology (or a change the driver cannot patch): a new
         * executable graph; the old one stays until the new one exists */
        CUgraphExec exec = NULL;
        r = instantiate(cu, &exec, fresh);
        if (r == CUDA_SUCCESS) {
            cu->cuGraphExecDestroy(graph->exec);
            graph->exec = exec;
            kind = PTXKIT_GRAPH_REINSTANTIATED;
        }
    }
    if (r != CUDA_SUCCESS) {
        cu->cuGraphDestroy(fresh);
        context_leave(ctx);
        return record_cuda_error(ctx, r, failed);
    }
    cu->cuGraphDestroy(graph->graph);
    graph->graph = fresh;
    context_leave(ctx);
    if (how) *how = kind;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_graph_launch(ptxkit_context *ctx, ptxkit_graph *graph, ptxkit_stream *stream) {
    if (!ctx || !graph) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_graph_launch: NULL argument");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuGraphLaunch(graph->exec, stream_handle(stream));
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_graph_launch: cuGraphLaunch");
}

ptxkit_status ptxkit_graph_node_count_get(ptxkit_context *ctx, ptxkit_graph *graph, size_t *count) {
    if (!ctx || !graph || !count)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_graph_node_count_get: NULL argument");
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    size_t n = 0;
    CUresult r = ctx->cu->cuGraphGetNodes(graph->graph, NULL, &n);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "ptxkit_graph_node_count_get: cuGraphGetNodes");
    *count = n;
    return PTXKIT_SUCCESS;
}

void ptxkit_graph_destroy(ptxkit_graph *graph) {
    if (!graph) return;
    ptxkit_context *ctx = graph->ctx;
    if (ctx->cu && context_enter(ctx) == PTXKIT_SUCCESS) {
        if (graph->exec) ctx->cu->cuGraphExecDestroy(graph->exec);
        if (graph->graph) ctx->cu->cuGraphDestroy(graph->graph);
        context_leave(ctx);
    }
    free(graph);
}
