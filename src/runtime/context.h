/* Contexts (context.c): opening and attaching one, entering it on the
 * calling thread, and the state kernel families keep per context. The
 * struct itself is in objects.h. */
#ifndef PTXKIT_RUNTIME_CONTEXT_H
#define PTXKIT_RUNTIME_CONTEXT_H

#include "driver/driver.h"
#include "ptxkit.h"

/* ---- per-context state of the ops ---- */

/* The state a kernel family (or the tuning lookup) keeps per context (e.g.
 * events guarding scratch memory, the loaded tuning database): created on
 * first use, told when one of the context's streams is
 * about to be destroyed, released (with the context current) when the
 * context closes. The ops' address identifies the family. */
typedef struct context_state_ops {
    void *(*create)(ptxkit_context *ctx);
    void (*destroy)(ptxkit_context *ctx, void *value);
    void (*stream_closing)(ptxkit_context *ctx, void *value, CUstream stream); /* may be NULL */
} context_state_ops;

/* The family's state, created if needed; NULL when creation fails. */
void *context_state(ptxkit_context *ctx, const context_state_ops *ops);
/* The family's state if it was created, else NULL: for a reader to whom
 * no state means the defaults, so that reading allocates nothing. */
void *context_state_find(ptxkit_context *ctx, const context_state_ops *ops);

/* Destroys every state (context current where the driver allows it); the
 * context's close does this. */
void context_states_release(ptxkit_context *ctx);

/* Calls every state's stream_closing (context current). */
void context_stream_closing(ptxkit_context *ctx, CUstream stream);

/* Open a context as ptxkit_context_create and ptxkit_context_attach do (the
 * same checks and messages) but without the auto-tune runner: those public
 * calls, in src/tune/context_open.c, add it. */
ptxkit_status context_open(int ordinal, ptxkit_context **out);
ptxkit_status context_attach(void *cu_context, ptxkit_context **out);

/* Checks ctx and pushes its CUDA context on the calling thread. Every public
 * entry point pairs it with context_leave. */
ptxkit_status context_enter(ptxkit_context *ctx);
void context_leave(ptxkit_context *ctx);

#endif
