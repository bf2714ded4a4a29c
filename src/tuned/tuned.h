/* Tuned launch parameters, read by the ops when the caller leaves an
 * option at 0. src/tuned/ sits below the families (families/) and holds only
 * what reading a tuned configuration needs: the database file (db.h) and
 * the per-context lookup (lookup.h, implemented in lookup.c). The search
 * that writes the database (src/tune/) sits above the families and drives
 * them through their calls; lookups reach it only through the runner a
 * context carries (ctx->auto_tune, installed by src/tune/context_open.c), so
 * no two layers include each other. */
#ifndef PTXKIT_TUNED_H
#define PTXKIT_TUNED_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "runtime/launch.h"

typedef struct tune_config {
    int block_size;
    int items_per_thread;
    int vector_bytes;
    int blocks_per_sm;
    ptxkit_load_op load_op;
} tune_config;

/* The tuned configuration of (family, variant) for the size bucket of n,
 * e.g. ("reduce", "sum.float32", 1 << 24). False when the database has
 * none (or tuning is off): the op keeps its built-in defaults. With
 * PTXKIT_TUNE=auto a miss tunes that bucket first. A field at 0 in *out
 * means "the op's built-in default". */
bool tune_lookup(ptxkit_context *ctx, const char *family, const char *variant, size_t n, tune_config *out);

/* For the ops, after check_launch_options: fills the fields of *opt the
 * caller left at 0 from tune_lookup, when the kernel will be JIT-compiled
 * (a tuned block size would not match the precompiled PTX). copy passes
 * ("copy", "bytes", bytes); reduce ("reduce", "<op>.<type>", n) with the
 * names of ptxkit_reduce_op_name and ptxkit_dtype_name, e.g. "sum.float32". */
void tune_apply(ptxkit_context *ctx, const char *family, const char *variant, size_t n, launch_options *opt);

/* A number that changes whenever a context's tuning database changes in
 * memory (a tuning run stored results, tune_state_reset re-read the file). What
 * tune_apply gave for a size bucket stays valid while this number, the mode
 * (tune_mode_from_env) and tune_guard_active stay the same, so an op may
 * keep it instead of asking on every call. Cheap: one atomic load. */
unsigned tune_generation(void);

/* PTXKIT_TUNE: off (never read the database), cached (the default: use
 * what is there, or a neighbouring bucket's entry within two) or auto (also
 * tune a missing bucket of 2^16 or more on its first use, within
 * PTXKIT_TUNE_BUDGET seconds, default 10). */
typedef enum tune_mode { TUNE_MODE_OFF = 0, TUNE_MODE_CACHED, TUNE_MODE_AUTO } tune_mode;
tune_mode tune_mode_from_env(void);
/* The same, and PTXKIT_TUNE_BUDGET in seconds (default 10): an unusable
 * value means the default, and *note (when given) says so in one line for
 * the command-line tool to show; empty when the value is fine. */
tune_mode tune_mode_from_env_note(char *note, size_t note_size);
double tune_budget_from_env(char *note, size_t note_size);

/* Size bucket of n: floor(log2 n), 0 for n <= 1. */
int tune_bucket(size_t n);

/* While a thread is inside the tuner, tune_lookup answers false on it, so
 * the ops the tuner calls run exactly the options it passes (and auto mode
 * cannot recurse). Nestable. */
void tune_guard_enter(void);
void tune_guard_leave(void);
bool tune_guard_active(void);
/* While paused (nestable, per thread), PTXKIT_TUNE=auto reads the database
 * as cached does and tunes nothing: an op recorded by a stream capture may
 * not allocate or wait. */
void tune_auto_pause(bool on);

#endif
