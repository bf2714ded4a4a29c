/* The public ptxkit_context_create and ptxkit_context_attach: the runtime's
 * open (src/runtime/context.c), then the context's runner for
 * PTXKIT_TUNE=auto.
 *
 * Why here: a lookup of a tuned configuration (src/tuned) sits below the
 * families, the search (src/tune) above them, and the runtime below both,
 * knowing no family. A lookup that misses a bucket must still reach the
 * search, so something has to hand it the search's entry point. A
 * constructor registering a process-wide hook did that before, invisibly and
 * for every context alike; instead the context carries the runner
 * (ptxkit_context.auto_tune), and the one layer allowed to name the tuner
 * installs it where contexts are opened for the public API. A context the
 * runtime opens alone (context_open: tests, internal tools) has none and
 * never auto-tunes. */
#include "ptxkit.h"
#include "ptxkit_tune.h"
#include "runtime/context.h"
#include "runtime/objects.h"

static bool family_auto(ptxkit_context *ctx, const char *family, const char *variant, size_t n, double budget_s,
                        void *user) {
    (void)user;
    ptxkit_tune_options o = {.budget_s = budget_s};
    return ptxkit_tune(ctx, family, variant, n, n, &o, NULL) == PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_context_create(int ordinal, ptxkit_context **out) {
    ptxkit_status st = context_open(ordinal, out);
    if (st == PTXKIT_SUCCESS) (*out)->auto_tune = family_auto;
    return st;
}

ptxkit_status ptxkit_context_attach(void *cu_context, ptxkit_context **out) {
    ptxkit_status st = context_attach(cu_context, out);
    if (st == PTXKIT_SUCCESS) (*out)->auto_tune = family_auto;
    return st;
}
