/* Reading tuned configurations: the layer below the kernel families. The
 * context's database (loaded on first use), lookups by family or tunable
 * key and size bucket, and PTXKIT_TUNE=auto through the runner that the
 * context carries (ctx->auto_tune): the tuner, which sits above the
 * families, installs it when it opens a context for the public API. */
#ifndef PTXKIT_TUNE_LOOKUP_H
#define PTXKIT_TUNE_LOOKUP_H

#include "runtime/objects.h"
#include "tuned/db.h"
#include "tuned/tuned.h"

#define TUNE_AUTO_BUDGET_S 10.0
/* PTXKIT_TUNE=auto leaves smaller sizes alone: their time is mostly the
 * launch, whatever the configuration. */
#define TUNE_AUTO_MIN_LOG2 16
/* A cached entry for a neighbouring size bucket serves within this distance. */
#define TUNE_NEAREST_BUCKETS 2

/* Tunes (family, variant) at size n within budget_s seconds and saves the
 * result; true when something was saved (objects.h: the type a context
 * carries its built-in families' runner as). */
typedef context_auto_tune_fn tune_auto_fn;

/* The entry for (family, variant) at n's bucket (else a neighbouring one
 * within TUNE_NEAREST_BUCKETS); with PTXKIT_TUNE=auto and auto_fn, a
 * missing bucket of 2^TUNE_AUTO_MIN_LOG2 or more is tuned first, once per
 * process. False when there is none (or tuning is off, or the calling
 * thread is inside the tuner). */
bool tune_lookup_entry(ptxkit_context *ctx, const char *family, const char *variant, size_t n, tune_auto_fn auto_fn,
                       void *auto_user, tune_db_entry *out);

/* tune_lookup_entry with the context's auto-tuning runner (ctx->auto_tune,
 * set by ptxkit_context_create and _attach): for a
 * family whose parameters are named (gemm), read from the entry's
 * p.NAME=VALUE fields. */
bool tune_lookup_params(ptxkit_context *ctx, const char *family, const char *variant, size_t n, tune_db_entry *out);

/* The database key of a context's device and this build. */
void tune_db_key_for(ptxkit_context *ctx, tune_db_key *key);

/* Replaces the context's in-memory database with `db` (taken over), after
 * the tuner has stored results. */
void tune_state_update(ptxkit_context *ctx, tune_db *db);

/* Forgets the context's loaded database and which buckets were auto-tuned:
 * the next use reads the file again (PTXKIT_TUNE_DB and the state directory
 * looked up anew). */
void tune_state_reset(ptxkit_context *ctx);

/* Path and load message of the context's database ("" path when none). */
void tune_state_describe(ptxkit_context *ctx, char *path, size_t path_size, char *msg, size_t msg_size);

#endif
