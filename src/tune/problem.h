/* What the tuner searches: a tuning problem. A problem names its entry in
 * the tuning database, declares named parameters with candidate values, and
 * says through its operations which points are legal, how to compile one
 * ahead, launch it at the size being tuned, and check its output. Both the
 * built-in families (family_problem.c) and the application's tunables
 * (tunable.c) are problems: one search, one timing rig, one database. */
#ifndef PTXKIT_TUNE_PROBLEM_H
#define PTXKIT_TUNE_PROBLEM_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "ptxkit_tune.h"

#define TUNE_MAX_PARAMS PTXKIT_TUNE_MAX_PARAMS
#define TUNE_MAX_VALUES 16
#define TUNE_PARAM_NAME 32

/* One configuration: a value for each of the problem's parameters. */
typedef struct tune_point {
    long long v[TUNE_MAX_PARAMS];
} tune_point;

struct tune_problem;

typedef struct tune_problem_ops {
    /* Whether p is legal at size n on the context's device; false with a
     * reason. Called before anything is compiled. */
    bool (*legal)(const struct tune_problem *pr, const tune_point *p, size_t n, char *why, size_t why_size);
    /* Sets up size n (buffers, a reference output); close undoes it. */
    ptxkit_status (*open)(struct tune_problem *pr, size_t n);
    void (*close)(struct tune_problem *pr);
    /* Compiles and loads p's kernels without timing them. Called from
     * several threads at once. NULL: the rig launches p once instead. */
    ptxkit_status (*prepare)(struct tune_problem *pr, const tune_point *p);
    /* One call at the open size, on stream, not synchronized. */
    ptxkit_status (*launch)(struct tune_problem *pr, const tune_point *p, ptxkit_stream *stream);
    /* Runs p on the check input and compares with the reference. */
    ptxkit_status (*verify)(struct tune_problem *pr, const tune_point *p, ptxkit_stream *stream, bool *same);
    /* Bytes one call moves at size n (GB/s); NULL: reports count calls. */
    double (*bytes)(const struct tune_problem *pr, size_t n);
    /* p as the configuration its op takes (ptxkit_tune_result's best);
     * NULL: the problem's names and values as they are. */
    void (*config)(const struct tune_problem *pr, const tune_point *p, ptxkit_config *out);
} tune_problem_ops;

typedef struct tune_problem {
    ptxkit_context *ctx;
    char family[64];       /* the database's family: a built-in's name or a tunable's key */
    char variant[40];      /* "-" for tunables */
    int param_count;
    char names[TUNE_MAX_PARAMS][TUNE_PARAM_NAME];
    long long values[TUNE_MAX_PARAMS][TUNE_MAX_VALUES];
    int counts[TUNE_MAX_PARAMS];
    bool primary[TUNE_MAX_PARAMS]; /* timed as a full grid before the descents */
    tune_point start;      /* where the search starts */
    tune_point defaults;   /* what runs untuned: the reference and the point to beat */
    bool named;            /* stored as named parameters (tunables), not launch options */
    unsigned long long code; /* hash of the kernel code: the tuning record's timings are of this code */
    const tune_problem_ops *ops;
    void *impl;            /* the problem's own state */
} tune_problem;

/* "block=256 items=4" from the problem's names. */
void tune_point_format(const tune_problem *pr, const tune_point *p, char *buf, size_t size);
bool tune_point_equal(const tune_problem *pr, const tune_point *a, const tune_point *b);

/* Combinations of the problem's values, the index-th of them (mixed radix,
 * first parameter slowest), and the index of a point (-1 when a value is
 * not in the space). */
size_t tune_problem_size(const tune_problem *pr);
void tune_problem_point(const tune_problem *pr, size_t index, tune_point *out);
size_t tune_problem_index(const tune_problem *pr, const tune_point *p);

/* Searches pr at each size and saves each size's winner in the database as
 * it comes (see ptxkit_tune). report may be NULL. */
ptxkit_status tune_problem_run(tune_problem *pr, const size_t *sizes, int size_count, const ptxkit_tune_options *options,
                               ptxkit_tune_report *report);

/* One point's timing: the median time per call and its GB/s, the fastest
 * and slowest of the timed batches and how many there were. All zero where
 * the point is illegal, fails or gives a wrong result. */
typedef struct tune_measured {
    double gbs, ms, min_ms, max_ms;
    int samples;
} tune_measured;

/* Times each of points[0..count) at size n (compiled ahead, verified) into
 * out[0..count); *default_gbs the defaults. */
ptxkit_status tune_problem_measure(tune_problem *pr, size_t n, const tune_point *points, int count, tune_measured *out,
                                   double *default_gbs, ptxkit_tune_progress_fn progress, void *progress_user);

#endif
