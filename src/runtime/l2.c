/* L2 residency: the persisting set-aside, access policy windows on streams
 * (and their checks, shared with ptxkit_kernel_launch_ex), and the reset. */
#include <stdint.h>

#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/l2.h"
#include "runtime/objects.h"
#include "runtime/status.h"

static CUaccessProperty to_cu(ptxkit_access_property p) {
    return p == PTXKIT_ACCESS_STREAMING    ? CU_ACCESS_PROPERTY_STREAMING
           : p == PTXKIT_ACCESS_PERSISTING ? CU_ACCESS_PROPERTY_PERSISTING
                                           : CU_ACCESS_PROPERTY_NORMAL;
}

static ptxkit_access_property from_cu(CUaccessProperty p) {
    return p == CU_ACCESS_PROPERTY_STREAMING    ? PTXKIT_ACCESS_STREAMING
           : p == CU_ACCESS_PROPERTY_PERSISTING ? PTXKIT_ACCESS_PERSISTING
                                                : PTXKIT_ACCESS_NORMAL;
}

ptxkit_status access_window_check(ptxkit_context *ctx, const ptxkit_access_window *w) {
    if (!RESERVED_ZERO(w)) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "access window: reserved fields are set");
    if ((unsigned)w->hit_property > PTXKIT_ACCESS_PERSISTING || (unsigned)w->miss_property > PTXKIT_ACCESS_PERSISTING)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "access window: unknown access property");
    if (!(w->hit_ratio >= 0.0f && w->hit_ratio <= 1.0f))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "access window: hit ratio %g is not in [0, 1]",
                            (double)w->hit_ratio);
    if (w->miss_property == PTXKIT_ACCESS_PERSISTING)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "access window: misses cannot persist");
    int max_window = ctx->info.access_window_max_bytes;
    if (max_window <= 0)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "access window: this GPU (sm_%d) has no L2 access policy windows (sm_80 or newer)", ctx->arch);
    if (!w->base || !w->bytes || w->bytes > (size_t)max_window)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "access window: %zu bytes at 0x%llx (1 to %d bytes, not NULL)",
                            w->bytes, (unsigned long long)w->base, max_window);
    return PTXKIT_SUCCESS;
}

void access_window_to_cu(const ptxkit_access_window *w, CUaccessPolicyWindow *out) {
    out->base_ptr = (void *)(uintptr_t)w->base;
    out->num_bytes = w->bytes;
    out->hitRatio = w->hit_ratio;
    out->hitProp = to_cu(w->hit_property);
    out->missProp = to_cu(w->miss_property);
}

/* The driver's refusals that mean "not in this setting" rather than a bad
 * value: MIG instances and MPS clients may not change L2 persistence. */
static ptxkit_status l2_refused(ptxkit_context *ctx, CUresult r, const char *what) {
    if (r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_UNSUPPORTED_LIMIT || r == CUDA_ERROR_NOT_PERMITTED) {
        char text[160];
        driver_error_text(ctx->cu, r, text, sizeof text);
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "%s: the driver refuses L2 persistence here (%s): a MIG instance cannot use it, and an MPS "
                            "client cannot change it (the server sets it from "
                            "CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_LIMIT)",
                            what, text);
    }
    return record_cuda_error(ctx, r, what);
}

static ptxkit_status need_set_aside(ptxkit_context *ctx, const char *what) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: context is NULL", what);
    if (ctx->info.persisting_l2_max_bytes <= 0)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "%s: this GPU (sm_%d) has no persisting L2 set-aside (sm_80 or newer)", what, ctx->arch);
    return PTXKIT_SUCCESS;
}

static ptxkit_status read_limit(ptxkit_context *ctx, size_t *bytes, const char *what) {
    if (!ctx->cu->cuCtxGetLimit)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: the driver has no cuCtxGetLimit", what);
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuCtxGetLimit(bytes, CU_LIMIT_PERSISTING_L2_CACHE_SIZE);
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : l2_refused(ctx, r, what);
}

ptxkit_status ptxkit_l2_persisting_get(ptxkit_context *ctx, size_t *bytes, size_t *max_bytes) {
    ptxkit_status st = need_set_aside(ctx, "ptxkit_l2_persisting_get");
    if (st != PTXKIT_SUCCESS) return st;
    if (max_bytes) *max_bytes = (size_t)ctx->info.persisting_l2_max_bytes;
    return bytes ? read_limit(ctx, bytes, "ptxkit_l2_persisting_get") : PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_l2_persisting_set(ptxkit_context *ctx, size_t bytes, size_t *applied) {
    ptxkit_status st = need_set_aside(ctx, "ptxkit_l2_persisting_set");
    if (st != PTXKIT_SUCCESS) return st;
    size_t max = (size_t)ctx->info.persisting_l2_max_bytes;
    if (bytes == PTXKIT_L2_PERSISTING_MAX) bytes = max;
    if (bytes > max)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_l2_persisting_set: %zu bytes is more than this GPU's maximum set-aside of %zu bytes "
                            "(PTXKIT_L2_PERSISTING_MAX asks for the maximum)",
                            bytes, max);
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, bytes);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) return l2_refused(ctx, r, "ptxkit_l2_persisting_set: cuCtxSetLimit");
    return applied ? read_limit(ctx, applied, "ptxkit_l2_persisting_set: cuCtxGetLimit") : PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_l2_persisting_reset(ptxkit_context *ctx) {
    ptxkit_status st = need_set_aside(ctx, "ptxkit_l2_persisting_reset");
    if (st != PTXKIT_SUCCESS) return st;
    if (!ctx->cu->cuCtxResetPersistingL2Cache)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_l2_persisting_reset: the driver has no cuCtxResetPersistingL2Cache");
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuCtxResetPersistingL2Cache();
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : l2_refused(ctx, r, "ptxkit_l2_persisting_reset: cuCtxResetPersistingL2Cache");
}

static ptxkit_status check_stream(ptxkit_context *ctx, ptxkit_stream *stream, const char *what) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: context is NULL", what);
    if (!stream)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%s: the default stream takes no attributes: use a created or wrapped stream, or the launch's "
                            "access window (ptxkit_kernel_launch_ex)",
                            what);
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_stream_access_window_set(ptxkit_context *ctx, ptxkit_stream *stream, const ptxkit_access_window *w) {
    static const char what[] = "ptxkit_stream_access_window_set";
    ptxkit_status st = check_stream(ctx, stream, what);
    if (st != PTXKIT_SUCCESS) return st;
    CUstreamAttrValue value = {0};
    if (w) {
        if ((st = access_window_check(ctx, w)) != PTXKIT_SUCCESS) return st;
        access_window_to_cu(w, &value.accessPolicyWindow);
    } /* else num_bytes 0: no window */
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuStreamSetAttribute(stream->handle, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &value);
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : l2_refused(ctx, r, "ptxkit_stream_access_window_set: cuStreamSetAttribute");
}

ptxkit_status ptxkit_stream_access_window_get(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_access_window *out) {
    static const char what[] = "ptxkit_stream_access_window_get";
    ptxkit_status st = check_stream(ctx, stream, what);
    if (st != PTXKIT_SUCCESS) return st;
    if (!out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: out is NULL", what);
    if (!ctx->cu->cuStreamGetAttribute)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: the driver has no cuStreamGetAttribute", what);
    CUstreamAttrValue value = {0};
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuStreamGetAttribute(stream->handle, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &value);
    context_leave(ctx);
    if (r != CUDA_SUCCESS) return l2_refused(ctx, r, "ptxkit_stream_access_window_get: cuStreamGetAttribute");
    const CUaccessPolicyWindow *w = &value.accessPolicyWindow;
    *out = (ptxkit_access_window){
        .base = (ptxkit_dptr)(uintptr_t)w->base_ptr,
        .bytes = w->num_bytes,
        .hit_ratio = w->hitRatio,
        .hit_property = from_cu(w->hitProp),
        .miss_property = from_cu(w->missProp),
    };
    return PTXKIT_SUCCESS;
}
