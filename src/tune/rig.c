/* Measuring rig of the tuner (see rig.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "tune/rig.h"

/* Rotate buffers until this many times the L2 size is touched between two
 * uses of one buffer, so no timed call finds its input in L2. */
#define ROTATE_L2_MULTIPLE 4
#define DEFAULT_L2_BYTES (64u << 20)
#define FILL_CHUNK_BYTES ((size_t)16 << 20)
/* The verification view: at most this many items, plus a ragged tail. */
#define VERIFY_MAX_LOG2 22
#define VERIFY_TAIL 13
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

static ptxkit_status run_on(tune_rig *r, const ptxkit_launch_options *o, int set) {
    const tune_family *f = r->v->family;
    return f->run(r->ctx, r->v, r->in[set], r->out[set], r->n, o, r->stream);
}

/* Fills `bytes` at dst with the family's values: one chunk from the host,
 * replicated on the device. */
static ptxkit_status fill_device(tune_rig *r, ptxkit_dptr dst, size_t bytes, uint64_t seed) {
    if (bytes == 0) return PTXKIT_SUCCESS;
    size_t chunk = bytes < FILL_CHUNK_BYTES ? bytes : FILL_CHUNK_BYTES;
    unsigned char *host = malloc(chunk);
    if (!host) return record_error(r->ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune: out of host memory");
    uint64_t state = seed;
    tune_fill_host(r->v, host, chunk, &state);
    ptxkit_status st = ptxkit_memcpy_htod(r->ctx, dst, host, chunk);
    free(host);
    for (size_t done = chunk; st == PTXKIT_SUCCESS && done < bytes;) {
        size_t part = bytes - done < done ? bytes - done : done; /* doubling */
        st = ptxkit_memcpy_dtod(r->ctx, dst + done, dst, part);
        done += part;
    }
    return st;
}

static ptxkit_status choose_sets(tune_rig *r, size_t working, size_t verify_bytes) {
    size_t l2 = r->ctx->info.l2_bytes > 0 ? (size_t)r->ctx->info.l2_bytes : DEFAULT_L2_BYTES;
    size_t target = ROTATE_L2_MULTIPLE * l2;
    size_t sets = working >= target ? 1 : (target + working - 1) / working;
    if (sets > RIG_MAX_SETS) sets = RIG_MAX_SETS;
    size_t free_bytes = 0, total = 0;
    if (ptxkit_memory_info(r->ctx, &free_bytes, &total) == PTXKIT_SUCCESS && free_bytes) {
        size_t usable = free_bytes / 10 * 8;
        while (sets > 1 && (sets * working + verify_bytes > usable)) sets--;
        if (working + verify_bytes > usable)
            return record_error(r->ctx, PTXKIT_ERROR_OUT_OF_MEMORY,
                                "tune: %zu items of %s need %zu MiB of GPU memory, %zu MiB are free", r->n, r->v->name,
                                (working + verify_bytes) >> 20, free_bytes >> 20);
    }
    r->sets = (int)sets;
    return PTXKIT_SUCCESS;
}

ptxkit_status rig_open(tune_rig *r, ptxkit_context *ctx, const tune_variant *v, size_t n) {
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->v = v;
    r->n = n;
    const tune_family *f = v->family;
    size_t in_bytes = f->in_bytes(v, n), out_bytes = f->out_bytes(v, n);
    if (n == 0 || in_bytes / n != (v->elem_size ? v->elem_size : 1) || in_bytes + out_bytes < in_bytes)
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "tune: %zu items of %s overflow a byte count", n, v->name);
    size_t vmax = (size_t)1 << VERIFY_MAX_LOG2;
    r->verify_n = (n < vmax ? n : vmax) + VERIFY_TAIL;
    r->verify_offset = v->elem_size > 4 ? v->elem_size : 4; /* element-aligned, not vector-aligned */
    r->verify_out_bytes = f->out_bytes(v, r->verify_n);
    size_t verify_in_bytes = f->in_bytes(v, r->verify_n) + r->verify_offset;
    size_t verify_out_alloc = r->verify_out_bytes + r->verify_offset;
    ptxkit_status st = choose_sets(r, in_bytes + out_bytes, verify_in_bytes + verify_out_alloc);
    if (st != PTXKIT_SUCCESS) return st;

    int allocated = 0;
    for (; allocated < r->sets; allocated++) {
        if ((st = ptxkit_malloc(ctx, in_bytes, &r->in[allocated])) != PTXKIT_SUCCESS) break;
        if ((st = ptxkit_malloc(ctx, out_bytes, &r->out[allocated])) != PTXKIT_SUCCESS) {
            ptxkit_free(ctx, r->in[allocated]);
            r->in[allocated] = 0;
            break;
        }
    }
    if (allocated == 0) return st;
    r->sets = allocated; /* fewer sets still measure, if less well */
    if ((st = ptxkit_malloc(ctx, verify_in_bytes, &r->verify_in)) != PTXKIT_SUCCESS ||
        (st = ptxkit_malloc(ctx, verify_out_alloc, &r->verify_out)) != PTXKIT_SUCCESS)
        goto fail;
    r->reference = malloc(r->verify_out_bytes);
    r->scratch = malloc(r->verify_out_bytes);
    if (!r->reference || !r->scratch) {
        st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune: out of host memory");
        goto fail;
    }
    if ((st = fill_device(r, r->in[0], in_bytes, 0x7e57ull + n)) != PTXKIT_SUCCESS) goto fail;
    for (int i = 1; i < r->sets; i++)
        if ((st = ptxkit_memcpy_dtod(ctx, r->in[i], r->in[0], in_bytes)) != PTXKIT_SUCCESS) goto fail;
    if ((st = fill_device(r, r->verify_in, verify_in_bytes, 0x5eedull ^ n)) != PTXKIT_SUCCESS) goto fail;
    /* Device-to-device copies are not ordered with the rig's non-blocking stream. */
    if ((st = ptxkit_synchronize(ctx)) != PTXKIT_SUCCESS) goto fail;
    if ((st = ptxkit_stream_create(ctx, &r->stream)) != PTXKIT_SUCCESS ||
        (st = ptxkit_event_create(ctx, &r->start)) != PTXKIT_SUCCESS ||
        (st = ptxkit_event_create(ctx, &r->stop)) != PTXKIT_SUCCESS)
        goto fail;

    /* The reference: the built-in defaults on the verification view. */
    ptxkit_launch_options defaults = {.path = PTXKIT_PATH_JIT};
    bool same;
    unsigned char *keep = r->reference;
    r->reference = NULL; /* rig_verify fills scratch only */
    st = rig_verify(r, &defaults, &same);
    r->reference = keep;
    if (st != PTXKIT_SUCCESS) goto fail;
    memcpy(r->reference, r->scratch, r->verify_out_bytes);
    return PTXKIT_SUCCESS;
fail:
    rig_close(r);
    return st;
}

void rig_close(tune_rig *r) {
    if (!r->ctx) return;
    if (r->stream) ptxkit_stream_synchronize(r->ctx, r->stream);
    for (int i = 0; i < RIG_MAX_SETS; i++) {
        if (r->in[i]) ptxkit_free(r->ctx, r->in[i]);
        if (r->out[i]) ptxkit_free(r->ctx, r->out[i]);
    }
    if (r->verify_in) ptxkit_free(r->ctx, r->verify_in);
    if (r->verify_out) ptxkit_free(r->ctx, r->verify_out);
    if (r->start) ptxkit_event_destroy(r->ctx, r->start);
    if (r->stop) ptxkit_event_destroy(r->ctx, r->stop);
    if (r->stream) ptxkit_stream_destroy(r->ctx, r->stream);
    free(r->reference);
    free(r->scratch);
    memset(r, 0, sizeof *r);
}

ptxkit_status rig_verify(tune_rig *r, const ptxkit_launch_options *o, bool *same) {
    *same = false;
    const tune_family *f = r->v->family;
    ptxkit_dptr in = r->verify_in + r->verify_offset, out = r->verify_out + r->verify_offset;
    /* A poisoned output: a variant that skips part of it is caught. */
    ptxkit_status st = ptxkit_memset8(r->ctx, r->verify_out, 0xA5, r->verify_out_bytes + r->verify_offset, r->stream);
    if (st == PTXKIT_SUCCESS) st = f->run(r->ctx, r->v, in, out, r->verify_n, o, r->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(r->ctx, r->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memcpy_dtoh(r->ctx, r->scratch, out, r->verify_out_bytes);
    if (st != PTXKIT_SUCCESS) return st;
    *same = r->reference ? memcmp(r->scratch, r->reference, r->verify_out_bytes) == 0 : true;
    return PTXKIT_SUCCESS;
}

static ptxkit_status time_batch(tune_rig *r, const ptxkit_launch_options *o, int batch, double *ms_per_call) {
    ptxkit_status st = ptxkit_event_record(r->ctx, r->start, r->stream);
    for (int k = 0; k < batch && st == PTXKIT_SUCCESS; k++) st = run_on(r, o, (int)(r->rotation++ % (unsigned)r->sets));
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(r->ctx, r->stop, r->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_synchronize(r->ctx, r->stop);
    float ms = 0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms(r->ctx, r->start, r->stop, &ms);
    *ms_per_call = (double)ms / batch;
    return st;
}

ptxkit_status rig_time(tune_rig *r, const ptxkit_launch_options *o, int samples, double cutoff_ms, double *out,
                       int *taken) {
    *taken = 0;
    if (samples > RIG_MAX_SAMPLES) samples = RIG_MAX_SAMPLES;
    double estimate = 0;
    ptxkit_status st = run_on(r, o, (int)(r->rotation++ % (unsigned)r->sets));
    if (st == PTXKIT_SUCCESS) st = time_batch(r, o, 1, &estimate);
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
        st = time_batch(r, o, batch, &out[s]);
        if (st == PTXKIT_SUCCESS) *taken = s + 1;
    }
    if (st != PTXKIT_SUCCESS) ptxkit_stream_synchronize(r->ctx, r->stream);
    return st;
}

/* ---- compiling ahead --------------------------------------------------- */

typedef struct prepare_job {
    tune_rig *rig;
    const tune_config *configs;
    int count;
    ptxkit_status *status;
    char (*messages)[160];
    int next;               /* under lock */
    pthread_mutex_t lock;
} prepare_job;

/* Each worker prepares one configuration at a time: the family's compile-only
 * hook where it has one, else one call of the op on the verification view
 * (small: a slow variant costs little). Either compiles the kernel with NVRTC
 * (thread-safe; the module registry locks only its table), writes the disk
 * cache and loads the module into the context, so the timed calls later find
 * it loaded. The op calls run one after another on the default stream; their
 * output is poisoned again before any verification reads it. */
static void *prepare_worker(void *arg) {
    prepare_job *job = arg;
    tune_rig *r = job->rig;
    tune_guard_enter();
    for (;;) {
        pthread_mutex_lock(&job->lock);
        int i = job->next < job->count ? job->next++ : -1;
        pthread_mutex_unlock(&job->lock);
        if (i < 0) break;
        ptxkit_launch_options o = tune_config_options(&job->configs[i]);
        const tune_family *f = r->v->family;
        ptxkit_status st;
        if (f->prepare) {
            st = f->prepare(r->ctx, r->v, &o);
        } else {
            st = f->run(r->ctx, r->v, r->verify_in + r->verify_offset, r->verify_out + r->verify_offset, r->verify_n,
                        &o, NULL);
            if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(r->ctx, NULL);
        }
        job->status[i] = st;
        if (st != PTXKIT_SUCCESS && job->messages) {
            /* another worker may be writing the context's message: read it under its lock */
            pthread_mutex_lock(&r->ctx->error_lock);
            size_t len = strnlen(r->ctx->error, sizeof job->messages[i] - 1);
            memcpy(job->messages[i], r->ctx->error, len);
            job->messages[i][len] = 0;
            pthread_mutex_unlock(&r->ctx->error_lock);
        }
    }
    tune_guard_leave();
    return NULL;
}

void rig_prepare(tune_rig *r, const tune_config *configs, int count, int threads, ptxkit_status *status,
                 char (*messages)[160]) {
    if (count <= 0) return;
    double t0 = now_ms();
    prepare_job job = {.rig = r, .configs = configs, .count = count, .status = status, .messages = messages};
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
    ptxkit_synchronize(r->ctx);
    r->compile_ms += now_ms() - t0;
    r->prepared += count;
}
