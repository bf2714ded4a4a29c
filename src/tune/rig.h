/* The measuring rig of the tuner: device buffers for one family, variant
 * and size, rotated when they would fit in L2; a verification input with
 * the built-in defaults' output as reference; event timing on a private
 * stream; and compiling ahead in parallel. Every call goes through the
 * family's public op. */
#ifndef PTXKIT_TUNE_RIG_H
#define PTXKIT_TUNE_RIG_H

#include "tune/params.h"

#define RIG_MAX_SETS 64
#define RIG_MAX_SAMPLES 64

typedef struct tune_rig {
    ptxkit_context *ctx;
    const tune_variant *v;
    size_t n;
    int sets;                        /* buffer sets timed in turn */
    ptxkit_dptr in[RIG_MAX_SETS], out[RIG_MAX_SETS];
    unsigned rotation;
    /* verification: a smaller, misaligned view with a ragged length */
    ptxkit_dptr verify_in, verify_out;
    size_t verify_n, verify_offset, verify_out_bytes;
    unsigned char *reference, *scratch; /* host: the defaults' output, and a candidate's */
    ptxkit_stream *stream;
    ptxkit_event *start, *stop;
    double compile_ms;               /* wall time spent in rig_prepare */
    int prepared;
} tune_rig;

/* Allocates and fills the buffers and computes the reference output with
 * the built-in defaults. */
ptxkit_status rig_open(tune_rig *r, ptxkit_context *ctx, const tune_variant *v, size_t n);
void rig_close(tune_rig *r);

/* Runs o once on the verification input and compares with the reference:
 * *same false on any difference. */
ptxkit_status rig_verify(tune_rig *r, const ptxkit_launch_options *o, bool *same);

/* One untimed call, one timed call (the estimate), then `samples` (<=
 * RIG_MAX_SAMPLES) timed batches of back-to-back calls sized to about 1 ms;
 * out[i] is the time per call of batch i in ms, *taken how many. With
 * cutoff_ms > 0 and an estimate above it, stops after the estimate (out[0],
 * *taken = 1): a candidate that slow cannot win. */
ptxkit_status rig_time(tune_rig *r, const ptxkit_launch_options *o, int samples, double cutoff_ms, double *out,
                       int *taken);

/* Compiles (and loads) each configuration by calling the op once on the
 * rig's buffers, from `threads` threads at once. status[i] receives each
 * one's result. Blocks until all are done and the GPU is idle. */
void rig_prepare(tune_rig *r, const tune_config *configs, int count, int threads, ptxkit_status *status,
                 char (*messages)[160]);

double median_of(double *values, int count);

#endif
