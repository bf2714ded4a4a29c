/* The measuring rig of the tuner: event timing of a problem's launches on a
 * private stream, verification through the problem, and compiling ahead in
 * parallel. What is launched, on which buffers, is the problem's business. */
#ifndef PTXKIT_TUNE_RIG_H
#define PTXKIT_TUNE_RIG_H

#include "tune/problem.h"

#define RIG_MAX_SAMPLES 64

typedef struct tune_rig {
    ptxkit_context *ctx;
    tune_problem *pr;
    size_t n;
    ptxkit_stream *stream;
    ptxkit_event *start, *stop;
    double compile_ms;               /* wall time spent in rig_prepare */
    int prepared;
    bool opened;
} tune_rig;

/* Opens the problem at size n (its buffers and reference) and the timing
 * stream and events. */
ptxkit_status rig_open(tune_rig *r, tune_problem *pr, size_t n);
void rig_close(tune_rig *r);

/* Runs p once on the problem's check input: *same false on any difference
 * from the reference. */
ptxkit_status rig_verify(tune_rig *r, const tune_point *p, bool *same);

/* One untimed call, one timed call (the estimate), then `samples` (<=
 * RIG_MAX_SAMPLES) timed batches of back-to-back calls sized to about 1 ms;
 * out[i] is the time per call of batch i in ms, *taken how many. With
 * cutoff_ms > 0 and an estimate above it, stops after the estimate (out[0],
 * *taken = 1): a candidate that slow cannot win. */
ptxkit_status rig_time(tune_rig *r, const tune_point *p, int samples, double cutoff_ms, double *out, int *taken);

/* Compiles (and loads) each point from `threads` threads at once: the
 * problem's prepare, else one launch. status[i] receives each one's result.
 * Blocks until all are done and the GPU is idle. */
void rig_prepare(tune_rig *r, const tune_point *points, int count, int threads, ptxkit_status *status,
                 char (*messages)[160]);

double median_of(double *values, int count);

#endif
