/* Errors (status.c): the status of every call and the calling thread's
 * message of its last failure (ptxkit_last_error), the one error channel. */
#ifndef PTXKIT_RUNTIME_STATUS_H
#define PTXKIT_RUNTIME_STATUS_H

#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"

#define PTXKIT_ERROR_SIZE 16384 /* the longest message kept, NUL included */

/* Records the calling thread's message and returns status. ctx plays no
 * part in the message (the channel is the thread's, whatever the context);
 * it is taken so that call sites name the context they failed on, as
 * record_cuda_error needs it. */
ptxkit_status record_error(ptxkit_context *ctx, ptxkit_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* For a public call whose failure a shared helper recorded (context_enter,
 * check_launch_options ...), which cannot know the caller: prefixes the
 * message with "fn: " unless it already names fn so. Returns status; a
 * status that is not an error leaves the message. */
ptxkit_status name_failure(ptxkit_status status, const char *fn);
/* Maps a CUresult to a status and records "what: CUDA_ERROR_X: text". */
ptxkit_status record_cuda_error(ptxkit_context *ctx, CUresult r, const char *what);

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
