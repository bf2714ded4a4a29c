/* Errors (status.c): the status of every call and the message recorded
 * for the context, or for the calling thread where there is none. */
#ifndef PTXKIT_RUNTIME_STATUS_H
#define PTXKIT_RUNTIME_STATUS_H

#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"

/* Records a message for ctx (NULL: the thread's own) and returns status. */
ptxkit_status record_error(ptxkit_context *ctx, ptxkit_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps a CUresult to a status and records "what: CUDA_ERROR_X: text". */
ptxkit_status record_cuda_error(ptxkit_context *ctx, CUresult r, const char *what);
/* Clears the context's (or thread's) last error. */
void clear_error(ptxkit_context *ctx);
/* Copies text (ctx->error or ctx->jit_log) into buf under ctx->error_lock,
 * truncated to size; returns its full length. */
size_t context_text_copy(const ptxkit_context *ctx, const char *text, char *buf, size_t size);

#define CU_CHECK(ctx, call, what)                                   \
    do {                                                            \
        CUresult cu_check_r_ = (call);                              \
        if (cu_check_r_ != CUDA_SUCCESS)                            \
            return record_cuda_error((ctx), cu_check_r_, (what));   \
    } while (0)

/* Returns UNSUPPORTED from the calling function, naming the call (`what`),
 * where the driver lacks an optional entry point (driver.h: ctx->cu->name is
 * NULL), or where the context never reached the driver. */
#define NEED_DRIVER_ENTRY(ctx, name, what)                                                                 \
    do {                                                                                                   \
        if (!(ctx)->cu || !(ctx)->cu->name)                                                                \
            return record_error((ctx), PTXKIT_ERROR_UNSUPPORTED, "%s: the driver has no " #name, (what)); \
    } while (0)

#endif
