/* Internal interface of the tuner for the command-line tool and the tests:
 * timing arbitrary configurations (`ptxkit bench blocks`), the database of a
 * context, and its key. */
#ifndef PTXKIT_TUNE_TUNER_H
#define PTXKIT_TUNE_TUNER_H

#include "ptxkit.h"
#include "ptxkit_tune.h"
#include "tuned/db.h"
#include "tuned/lookup.h"
#include "tune/params.h"
#include "tune/problem.h"

#define TUNE_DEFAULT_BUDGET_S 35.0

/* The report behind ptxkit_tune_report (opaque in the public header so it
 * can grow); the command-line tool and the tests read it directly. */
struct ptxkit_tune_report {
    char family[64];                   /* a family's name or a tunable's key */
    char variant[40];
    int size_count;
    ptxkit_tune_result sizes[PTXKIT_TUNE_MAX_SIZES];
    double seconds;                    /* the whole call */
    double compile_seconds;            /* of which compiling (in parallel) */
    int kernels_prepared;              /* variants compiled or loaded from the cache */
    int threads;                       /* compile threads used */
    char database[1024];               /* the file written; "" when none */
    char database_note[512];           /* why not, or what was replaced */
    char record[1024];                 /* the tuning record read or appended to; "" when none */
    char record_note[512];             /* why it was not read or written */
    int record_loaded;                 /* this problem's configurations found in it */
    int record_appended;               /* configurations this call appended */
};
/* Times each of `count` configurations of (family, variant) at size n through
 * the public op (compiled ahead in parallel, checked against the built-in
 * defaults' output) into out[0..count) (problem.h's tune_measured: all zero
 * where configuration i is illegal on this device, fails or gives a wrong
 * result). *default_gbs: the built-in defaults. */
ptxkit_status tune_measure(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                           const tune_config *configs, int count, tune_measured *out, double *default_gbs,
                           ptxkit_tune_progress_fn progress, void *progress_user);

/* ptxkit_tune over an arbitrary list of sizes (the CLI's --sizes): one
 * budget shared among them, as for a range. */
ptxkit_status tune_sizes(ptxkit_context *ctx, const char *family, const char *variant, const size_t *sizes,
                         int size_count, const ptxkit_tune_options *options, ptxkit_tune_report *report);

/* The sizes ptxkit_tune times for the range [n_min, n_max] (powers of two
 * options->size_step apart, n_max's bucket included); sizes has room for
 * PTXKIT_TUNE_MAX_SIZES. */
ptxkit_status tune_range_sizes(ptxkit_context *ctx, size_t n_min, size_t n_max, const ptxkit_tune_options *options,
                               size_t *sizes, int *size_count);

/* Seconds of a budget the next of sizes_left sizes may use: what is left
 * less a floor of half an even share (budget / size_count / 2) kept for
 * each size after it. The first size, which pays the cold compiles of
 * all, may run long; the later ones, their kernels mostly built, keep
 * their floor. */
double tune_size_budget(double budget_s, double left_s, int sizes_left, int size_count);

#endif
