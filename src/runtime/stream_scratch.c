/* Stream-owned scratch with one hand-over rule (stream_scratch.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "runtime/stream_scratch.h"
#include "tuned/tuned.h"

typedef struct scratch_slot {
    CUstream owner;             /* valid while owned */
    bool owned;
    bool pinned;                /* its owner's work was captured into a graph */
    CUevent handover;           /* the previous owner's work, when pending */
    bool pending;
    unsigned long long last_use;
    CUdeviceptr buffer;
    size_t bytes;
    bool buffer_captured;       /* a graph holds the buffer's address */
    void *payload;
} scratch_slot;

/* A buffer no slot uses any more: freed once `done` has completed; a NULL
 * `done` (a graph may use it, or no event could be recorded) waits for the
 * context's close. */
typedef struct retired_buffer {
    CUdeviceptr ptr;
    CUevent done;
} retired_buffer;

typedef struct scratch_pool {
    const stream_scratch_client *client;
    pthread_mutex_t lock;
    scratch_slot slot[STREAM_SCRATCH_MAX_SLOTS];
    unsigned long long clock;
    retired_buffer *retired;
    size_t retired_count, retired_capacity;
} scratch_pool;

typedef struct scratch_state {
    pthread_mutex_t lock; /* guards pools[] */
    scratch_pool *pools[STREAM_SCRATCH_MAX_CLIENTS];
} scratch_state;

/* ---- capture ------------------------------------------------------------ */

/* Whether work queued on `stream` now would be recorded by a capture; a
 * stream the driver cannot answer for (e.g. the legacy stream while a
 * blocking stream is captured) counts as captured: nothing may be done
 * behind a capture's back. */
static bool stream_captured(const cuda_driver *cu, CUstream stream, CUresult *result) {
    CUstreamCaptureStatus status;
    CUresult r = capture_stream_query(cu, stream, &status);
    if (result) *result = r;
    return r != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE;
}

ptxkit_status capture_guard_enter(ptxkit_context *ctx, ptxkit_stream *stream, capture_guard *g) {
    memset(g, 0, sizeof *g);
    /* a context that never reached the driver (the CPU tests' stand-in)
     * has no stream to capture; its calls fail on their arguments */
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "context is NULL");
    if (!ctx->cu) return PTXKIT_SUCCESS;
    /* An application's stream knows its context: asked directly, a call
     * costs one driver call, not three. The legacy stream is the current
     * context's, so it (and a driver that wants a context anyway) is asked
     * with ours current. */
    CUresult r = CUDA_ERROR_INVALID_CONTEXT;
    CUstream handle = stream_handle(stream);
    if (handle) g->capturing = stream_captured(ctx->cu, handle, &r);
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        ptxkit_status st = context_enter(ctx);
        if (st != PTXKIT_SUCCESS) return st;
        g->capturing = stream_captured(ctx->cu, handle, &r);
        context_leave(ctx);
    }
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "cuStreamIsCapturing");
    if (!g->capturing) return PTXKIT_SUCCESS;
    if (ctx->cu->cuThreadExchangeStreamCaptureMode) {
        g->mode = CU_STREAM_CAPTURE_MODE_RELAXED;
        g->mode_changed = ctx->cu->cuThreadExchangeStreamCaptureMode(&g->mode) == CUDA_SUCCESS;
    }
    tune_auto_pause(true);
    return PTXKIT_SUCCESS;
}

void capture_guard_leave(ptxkit_context *ctx, capture_guard *g) {
    if (!g->capturing) return;
    tune_auto_pause(false);
    if (g->mode_changed) ctx->cu->cuThreadExchangeStreamCaptureMode(&g->mode);
    g->mode_changed = false;
    g->capturing = false;
}

/* ---- the per-context state ----------------------------------------------- */

/* Frees what has finished (lock held, context current, no capture on the
 * calling stream: an event query is not recorded, but freeing may wait). */
static void reap_retired(const cuda_driver *cu, scratch_pool *p) {
    size_t kept = 0;
    for (size_t i = 0; i < p->retired_count; i++) {
        retired_buffer *b = &p->retired[i];
        if (b->done && cu->cuEventQuery(b->done) == CUDA_SUCCESS) {
            cu->cuMemFree(b->ptr);
            cu->cuEventDestroy(b->done);
        } else {
            p->retired[kept++] = *b;
        }
    }
    p->retired_count = kept;
}

/* Retires a slot's buffer after the work queued on `stream` so far (lock
 * held; the stream owns the slot, so every earlier user is ordered before
 * that work). */
static ptxkit_status retire_buffer(ptxkit_context *ctx, scratch_pool *p, scratch_slot *s, CUstream stream) {
    const cuda_driver *cu = ctx->cu;
    if (!s->buffer) return PTXKIT_SUCCESS;
    if (p->retired_count == p->retired_capacity) {
        size_t cap = p->retired_capacity ? 2 * p->retired_capacity : 8;
        retired_buffer *grown = realloc(p->retired, cap * sizeof *grown);
        if (!grown) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "%s: out of host memory", p->client->who);
        p->retired = grown;
        p->retired_capacity = cap;
    }
    CUevent done = NULL;
    if (!s->buffer_captured) {
        if (cu->cuEventCreate(&done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) done = NULL;
        else if (cu->cuEventRecord(done, stream) != CUDA_SUCCESS) {
            cu->cuEventDestroy(done);
            done = NULL;
        }
    }
    /* without an event the buffer waits for the context's close */
    p->retired[p->retired_count++] = (retired_buffer){s->buffer, done};
    s->buffer = 0;
    s->bytes = 0;
    s->buffer_captured = false;
    return PTXKIT_SUCCESS;
}

static void pool_destroy(const cuda_driver *cu, scratch_pool *p) {
    for (int i = 0; i < STREAM_SCRATCH_MAX_SLOTS; i++) {
        scratch_slot *s = &p->slot[i];
        if (s->handover) cu->cuEventDestroy(s->handover);
        if (s->buffer) cu->cuMemFree(s->buffer);
        free(s->payload);
    }
    for (size_t i = 0; i < p->retired_count; i++) {
        cu->cuMemFree(p->retired[i].ptr);
        if (p->retired[i].done) cu->cuEventDestroy(p->retired[i].done);
    }
    free(p->retired);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* A new pool (context current); NULL with the error recorded. */
static scratch_pool *pool_create(ptxkit_context *ctx, const stream_scratch_client *client) {
    scratch_pool *p = calloc(1, sizeof *p);
    if (!p) {
        record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the stream scratch", client->who);
        return NULL;
    }
    p->client = client;
    pthread_mutex_init(&p->lock, NULL);
    for (int i = 0; i < client->slots; i++) {
        CUresult r = ctx->cu->cuEventCreate(&p->slot[i].handover, CU_EVENT_DISABLE_TIMING);
        if (r != CUDA_SUCCESS) {
            p->slot[i].handover = NULL;
            pool_destroy(ctx->cu, p);
            record_cuda_error(ctx, r, "stream scratch: cuEventCreate of a hand-over event");
            return NULL;
        }
        if (client->payload_bytes && !(p->slot[i].payload = calloc(1, client->payload_bytes))) {
            pool_destroy(ctx->cu, p);
            record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the stream scratch", client->who);
            return NULL;
        }
    }
    return p;
}

static void *state_create(ptxkit_context *ctx) {
    (void)ctx;
    scratch_state *s = calloc(1, sizeof *s);
    if (s) pthread_mutex_init(&s->lock, NULL);
    return s;
}

static void state_destroy(ptxkit_context *ctx, void *value) {
    scratch_state *s = value;
    /* launches in flight may still use the scratch */
    ctx->cu->cuCtxSynchronize();
    for (int i = 0; i < STREAM_SCRATCH_MAX_CLIENTS; i++)
        if (s->pools[i]) pool_destroy(ctx->cu, s->pools[i]);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* A stream about to be destroyed gives its slots up: a later owner waits
 * for the event recorded here, and its buffers are freed once their work is
 * done (a graph's buffer when the context closes). */
static void state_stream_closing(ptxkit_context *ctx, void *value, CUstream stream) {
    scratch_state *st = value;
    const cuda_driver *cu = ctx->cu;
    pthread_mutex_lock(&st->lock);
    for (int c = 0; c < STREAM_SCRATCH_MAX_CLIENTS; c++) {
        scratch_pool *p = st->pools[c];
        if (!p) continue;
        pthread_mutex_lock(&p->lock);
        for (int i = 0; i < p->client->slots; i++) {
            scratch_slot *s = &p->slot[i];
            if (!s->owned || s->owner != stream) continue;
            /* should the record fail, waiting keeps the ordering */
            bool recorded = cu->cuEventRecord(s->handover, stream) == CUDA_SUCCESS;
            if (recorded) s->pending = true;
            else cu->cuStreamSynchronize(stream);
            if (s->buffer && retire_buffer(ctx, p, s, stream) != PTXKIT_SUCCESS) {
                /* no room to remember it: the stream has finished with it once waited for */
                if (recorded) cu->cuStreamSynchronize(stream);
                if (!s->buffer_captured) cu->cuMemFree(s->buffer);
                s->buffer = 0;
                s->bytes = 0;
            }
            if (s->payload) memset(s->payload, 0, p->client->payload_bytes);
            s->owned = false;
            s->pinned = false;
            s->last_use = 0; /* free: the next new stream takes it, not a live stream's */
        }
        reap_retired(cu, p);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_unlock(&st->lock);
}

static const context_state_ops scratch_state_ops = {state_create, state_destroy, state_stream_closing};

/* The client's pool, created on first use (context current). */
static scratch_pool *pool_of(ptxkit_context *ctx, const stream_scratch_client *client) {
    scratch_state *st = context_state(ctx, &scratch_state_ops);
    if (!st) {
        record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the stream scratch", client->who);
        return NULL;
    }
    /* a pool, once made, stays until the context closes: published whole
     * (as context states are), it is found without the lock */
    for (int k = 0; k < STREAM_SCRATCH_MAX_CLIENTS; k++) {
        scratch_pool *seen = __atomic_load_n(&st->pools[k], __ATOMIC_ACQUIRE);
        if (!seen) break;
        if (seen->client == client) return seen;
    }
    scratch_pool *found = NULL;
    pthread_mutex_lock(&st->lock);
    int i = 0;
    while (i < STREAM_SCRATCH_MAX_CLIENTS && st->pools[i] && st->pools[i]->client != client) i++;
    if (i == STREAM_SCRATCH_MAX_CLIENTS)
        record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: more than %d families use stream scratch", client->who,
                     STREAM_SCRATCH_MAX_CLIENTS);
    else if (st->pools[i])
        found = st->pools[i];
    else
        __atomic_store_n(&st->pools[i], found = pool_create(ctx, client), __ATOMIC_RELEASE);
    pthread_mutex_unlock(&st->lock);
    return found;
}

/* ---- acquire ------------------------------------------------------------ */

/* The slot to hand to a new stream (lock held): the least recently used one
 * that no graph pins and whose owner is not being captured; -1 if none. */
static int pick_free_slot(const cuda_driver *cu, scratch_pool *p) {
    int pick = -1;
    for (int i = 0; i < p->client->slots; i++) {
        scratch_slot *s = &p->slot[i];
        if (s->pinned || (s->owned && stream_captured(cu, s->owner, NULL))) continue;
        if (pick < 0 || s->last_use < p->slot[pick].last_use) pick = i;
    }
    return pick;
}

ptxkit_status stream_scratch_acquire(ptxkit_context *ctx, const stream_scratch_client *client, ptxkit_stream *stream,
                                     bool capturing, stream_scratch *out) {
    memset(out, 0, sizeof *out);
    if (client->slots < 1 || client->slots > STREAM_SCRATCH_MAX_SLOTS)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %d scratch slots (1 to %d)", client->who,
                            client->slots, STREAM_SCRATCH_MAX_SLOTS);
    scratch_pool *p = pool_of(ctx, client);
    if (!p) return ctx->lost ? PTXKIT_ERROR_CONTEXT_LOST : PTXKIT_ERROR_OUT_OF_MEMORY;
    const cuda_driver *cu = ctx->cu;
    CUstream cs = stream_handle(stream);
    pthread_mutex_lock(&p->lock);
    if (!capturing) reap_retired(cu, p);
    int pick = -1;
    for (int i = 0; i < client->slots && pick < 0; i++)
        if (p->slot[i].owned && p->slot[i].owner == cs) pick = i;
    ptxkit_status st = PTXKIT_SUCCESS;
    if (pick < 0 && capturing) {
        st = record_error(ctx, PTXKIT_ERROR_CAPTURE,
                          "%s: during stream capture a call uses only scratch its stream already holds, and this "
                          "stream holds none: run the call once on this stream before beginning the capture",
                          client->who);
    } else if (pick < 0) {
        pick = pick_free_slot(cu, p);
        if (pick < 0) {
            st = record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                              "%s: all %d scratch slots belong to streams captured into graphs (or being captured "
                              "now); destroy one of those streams to free its slot",
                              client->who, client->slots);
        } else {
            scratch_slot *s = &p->slot[pick];
            CUresult r = CUDA_SUCCESS;
            if (s->owned) {
                if ((r = cu->cuEventRecord(s->handover, s->owner)) != CUDA_SUCCESS)
                    st = record_cuda_error(ctx, r, "stream scratch: cuEventRecord on a slot's previous stream");
                else
                    s->pending = true;
            }
            if (st == PTXKIT_SUCCESS && s->pending && (r = cu->cuStreamWaitEvent(cs, s->handover, 0)) != CUDA_SUCCESS)
                st = record_cuda_error(ctx, r, "stream scratch: cuStreamWaitEvent on a slot's previous stream");
            if (st == PTXKIT_SUCCESS) {
                s->owner = cs;
                s->owned = true;
                s->pending = false;
            }
        }
    }
    if (st != PTXKIT_SUCCESS) {
        pthread_mutex_unlock(&p->lock);
        return st;
    }
    scratch_slot *s = &p->slot[pick];
    s->last_use = ++p->clock;
    if (capturing) {
        /* the graph will replay against this slot: it stays with the stream */
        s->pinned = true;
        if (s->buffer) s->buffer_captured = true;
    }
    *out = (stream_scratch){pick, s->buffer, s->bytes, s->payload, capturing, p, cs};
    return PTXKIT_SUCCESS;
}

ptxkit_status stream_scratch_grow(ptxkit_context *ctx, stream_scratch *h, size_t needed, size_t want) {
    scratch_pool *p = h->pool;
    scratch_slot *s = &p->slot[h->slot];
    if (s->bytes >= needed) return PTXKIT_SUCCESS;
    if (h->capturing)
        return record_error(ctx, PTXKIT_ERROR_CAPTURE,
                            "%s: during stream capture a call cannot grow its stream's scratch (%zu bytes needed, %zu "
                            "held): run the call with this size on this stream before beginning the capture",
                            p->client->who, needed, s->bytes);
    /* an uncaptured stream, but this thread captures another in thread-local
     * mode: the driver would refuse the allocation, and may invalidate that
     * capture doing so */
    ptxkit_status refused = capture_thread_refuse(ctx, p->client->who);
    if (refused != PTXKIT_SUCCESS) return refused;
    if (want < needed) want = needed;
    ptxkit_status st = retire_buffer(ctx, p, s, h->stream);
    if (st != PTXKIT_SUCCESS) return st;
    /* the payload described the old buffer: zeroed now, so that a failed
     * allocation leaves a slot that grows again, never stale state */
    if (s->payload) memset(s->payload, 0, p->client->payload_bytes);
    h->buffer = 0;
    h->bytes = 0;
    CUdeviceptr d = 0;
    CUresult r = ctx->cu->cuMemAlloc(&d, want);
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "%s: cuMemAlloc of %zu bytes of stream scratch", p->client->who, want);
        return record_cuda_error(ctx, r, what);
    }
    s->buffer = d;
    s->bytes = want;
    h->buffer = d;
    h->bytes = want;
    return PTXKIT_SUCCESS;
}

void stream_scratch_release(stream_scratch *h) {
    if (h->pool) pthread_mutex_unlock(&h->pool->lock);
    h->pool = NULL;
}

void stream_scratch_for_each_payload(ptxkit_context *ctx, const stream_scratch_client *client,
                                     void (*fn)(void *payload, void *arg), void *arg) {
    scratch_state *st = context_state(ctx, &scratch_state_ops);
    if (!st) return;
    pthread_mutex_lock(&st->lock);
    for (int c = 0; c < STREAM_SCRATCH_MAX_CLIENTS; c++) {
        scratch_pool *p = st->pools[c];
        if (!p || p->client != client) continue;
        pthread_mutex_lock(&p->lock);
        for (int i = 0; i < client->slots; i++)
            if (p->slot[i].payload) fn(p->slot[i].payload, arg);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_unlock(&st->lock);
}
