/* Measuring rig of the tuner (see rig.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/compile.h"
#include "runtime/objects.h"
#include "tune/rig.h"
#include "tuned/tuned.h"

#define SAMPLE_TARGET_MS 1.0
#define MAX_BATCH 512
/* Single calls shorter than this carry launch latency: never cut on them. */
#define CUTOFF_MIN_MS 0.05

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_of(double *values, int count) {
    if (count <= 0) return 0;
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

ptxkit_status rig_open(tune_rig *r, tune_problem *pr, size_t n) {
    memset(r, 0, sizeof *r);
    r->ctx = pr->ctx;
    r->pr = pr;
    r->n = n;
    ptxkit_status st = pr->ops->open(pr, n);
    if (st != PTXKIT_SUCCESS) {
        memset(r, 0, sizeof *r);
        return st;
    }
    r->opened = true;
    if ((st = ptxkit_stream_create(r->ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &r->stream)) != PTXKIT_SUCCESS ||
        (st = ptxkit_event_create(r->ctx, PTXKIT_EVENT_DEFAULT, &r->start)) != PTXKIT_SUCCESS ||
        (st = ptxkit_event_create(r->ctx, PTXKIT_EVENT_DEFAULT, &r->stop)) != PTXKIT_SUCCESS)
        rig_close(r);
    return st;
}

void rig_close(tune_rig *r) {
    if (!r->ctx) return;
    if (r->stream) ptxkit_stream_synchronize(r->ctx, r->stream);
    if (r->opened) r->pr->ops->close(r->pr);
    if (r->start) ptxkit_event_destroy(r->start);
    if (r->stop) ptxkit_event_destroy(r->stop);
    if (r->stream) ptxkit_stream_destroy(r->stream);
    memset(r, 0, sizeof *r);
}

ptxkit_status rig_verify(tune_rig *r, const tune_point *p, bool *same) {
    *same = false;
    return r->pr->ops->verify(r->pr, p, r->stream, same);
}

static ptxkit_status time_batch(tune_rig *r, const tune_point *p, int batch, double *ms_per_call) {
    ptxkit_status st = ptxkit_event_record(r->ctx, r->start, r->stream);
    for (int k = 0; k < batch && st == PTXKIT_SUCCESS; k++) st = r->pr->ops->launch(r->pr, p, r->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(r->ctx, r->stop, r->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_synchronize(r->ctx, r->stop);
    float ms = 0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms_get(r->ctx, r->start, r->stop, &ms);
    *ms_per_call = (double)ms / batch;
    return st;
}

ptxkit_status rig_time(tune_rig *r, const tune_point *p, int samples, double cutoff_ms, double *out, int *taken) {
    *taken = 0;
    if (samples > RIG_MAX_SAMPLES) samples = RIG_MAX_SAMPLES;
    double estimate = 0;
    ptxkit_status st = r->pr->ops->launch(r->pr, p, r->stream);
    if (st == PTXKIT_SUCCESS) st = time_batch(r, p, 1, &estimate);
    if (st == PTXKIT_SUCCESS && cutoff_ms > 0 && estimate > cutoff_ms && estimate > CUTOFF_MIN_MS) {
        out[0] = estimate; /* hopeless: one call says enough */
        *taken = 1;
        return PTXKIT_SUCCESS;
    }
    /* back-to-back calls between two events: launch gaps hide behind the
     * previous call, as in a real pipeline */
    int batch = estimate > 0 ? (int)(SAMPLE_TARGET_MS / estimate + 0.999) : MAX_BATCH;
    batch = batch < 1 ? 1 : batch > MAX_BATCH ? MAX_BATCH : batch;
    for (int s = 0; s < samples && st == PTXKIT_SUCCESS; s++) {
        st = time_batch(r, p, batch, &out[s]);
        if (st == PTXKIT_SUCCESS) *taken = s + 1;
    }
    if (st != PTXKIT_SUCCESS) ptxkit_stream_synchronize(r->ctx, r->stream);
    return st;
}

/* ---- compiling ahead --------------------------------------------------- */

typedef struct prepare_job {
    tune_rig *rig;
    const tune_point *points;
    int count;
    ptxkit_status *status;
    char (*messages)[160];
    int next;               /* under lock */
    pthread_mutex_t lock;
} prepare_job;

/* Each worker prepares one point at a time: the problem's compile-only hook
 * where it has one, else one launch on the default stream. Either compiles
 * the kernel with NVRTC (thread-safe; the module registry locks only its
 * table), writes the disk cache and loads the module into the context, so
 * the timed calls later find it loaded. Verification poisons its output
 * again before reading it. */
static void *prepare_worker(void *arg) {
    prepare_job *job = arg;
    tune_rig *r = job->rig;
    tune_problem *pr = r->pr;
    tune_guard_enter();
    for (;;) {
        pthread_mutex_lock(&job->lock);
        int i = job->next < job->count ? job->next++ : -1;
        pthread_mutex_unlock(&job->lock);
        if (i < 0) break;
        ptxkit_status st;
        if (pr->ops->prepare) {
            st = pr->ops->prepare(pr, &job->points[i]);
        } else {
            st = pr->ops->launch(pr, &job->points[i], NULL);
            if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(r->ctx, NULL);
        }
        job->status[i] = st;
        /* the failure's message is this worker thread's: hand it to the caller with the status */
        if (st != PTXKIT_SUCCESS && job->messages)
            ptxkit_last_error_copy(job->messages[i], sizeof job->messages[i]);
    }
    tune_guard_leave();
    return NULL;
}

void rig_prepare(tune_rig *r, const tune_point *points, int count, int threads, ptxkit_status *status,
                 char (*messages)[160]) {
    if (count <= 0) return;
    double t0 = now_ms();
    prepare_job job = {.rig = r, .points = points, .count = count, .status = status, .messages = messages};
    pthread_mutex_init(&job.lock, NULL);
    ptxkit_stream_synchronize(r->ctx, r->stream);
    if (threads > count) threads = count;
    if (threads > 64) threads = 64;
    pthread_t tids[64];
    int started = 0;
    for (; started < threads - 1; started++)
        if (pthread_create(&tids[started], NULL, prepare_worker, &job) != 0) break;
    prepare_worker(&job); /* the calling thread works too */
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&job.lock);
    ptxkit_context_synchronize(r->ctx);
    r->compile_ms += now_ms() - t0;
    r->prepared += count;
}
