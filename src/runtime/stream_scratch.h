/* Stream-owned scratch: one pool per family and context, one hand-over rule.
 *
 * A family's kernels need scratch besides their data (reduce: partials and a
 * ticket counter in module globals, indexed by slot; scan: a ticket counter
 * and tile status words; gemm: split-K partial sums). Launches sharing
 * scratch must not overlap, and ordering them through their stream costs
 * nothing per call: so each stream keeps one slot while it is among the
 * `slots` most recently used streams of the pool (LRU). A slot is an index
 * (the family's module globals) and an optional device buffer that grows on
 * request, plus host-side bytes (the payload) the family keeps with it.
 *
 * Hand-over. When a slot passes to another stream, an event recorded on the
 * previous owner at that moment (it follows all of the owner's work so far,
 * the slot's included) is waited for by the new one. A stream being
 * destroyed records the event first and gives its slot up. An outgrown or
 * given-up buffer is freed once an event recorded after its last use has
 * completed (polled at later acquires), or when the context closes.
 *
 * Graph capture. While a stream is being captured (cuStreamIsCapturing),
 * nothing runs: launches are recorded, and run at every replay of the graph,
 * later, at times the host does not see. So a captured call:
 *   - allocates nothing, synchronizes nothing and reads nothing back: it uses
 *     only the slot its stream already holds, with a buffer already large
 *     enough (a caller prepares by running the op once on that stream, with
 *     the same or a larger problem, before beginning the capture);
 *   - never hands a slot over. The ordering a hand-over gives is against the
 *     previous owner's work *at capture time*; replays need it against that
 *     owner's future work, which no event recorded now can express (and an
 *     event recorded on an uncaptured stream cannot be waited for by a
 *     capture; one recorded on a stream that is itself being captured would
 *     join the two captures). Where a hand-over or a growth would be needed,
 *     the call fails with PTXKIT_ERROR_CAPTURE and a message saying so,
 *     and records nothing: the capture stays valid.
 *   - pins the slot: it stays with its stream until that stream is destroyed
 *     (uncaptured calls on other streams take other slots; when every slot is
 *     pinned they fail with PTXKIT_ERROR_UNSUPPORTED), and a buffer a graph
 *     has seen is freed only when the context closes. Replays are therefore
 *     correct when they are ordered with the capturing stream's other work:
 *     launch the graph on that stream (or one ordered with it), while the
 *     stream exists.
 * A slot whose owner is being captured right now is never taken by LRU
 * either, even before the capture has used it: the hand-over's event record
 * would land in that capture.
 *
 * The pool's lock is held from a successful stream_scratch_acquire to
 * stream_scratch_release, so a slot's owner cannot change between its
 * choice and the launches that use it. */
#ifndef PTXKIT_STREAM_SCRATCH_H
#define PTXKIT_STREAM_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"

enum { STREAM_SCRATCH_MAX_SLOTS = 16, STREAM_SCRATCH_MAX_CLIENTS = 8 };

/* A family's pool: static in the family's file; its address is the key. */
typedef struct stream_scratch_client {
    const char *who;      /* the family in messages: "scan" */
    int slots;            /* 1 .. STREAM_SCRATCH_MAX_SLOTS */
    size_t payload_bytes; /* host-side bytes per slot, zeroed whenever the slot gets a new buffer */
} stream_scratch_client;

/* A slot held by a call (between acquire and release). */
typedef struct stream_scratch {
    int slot;             /* 0 .. client->slots - 1 */
    CUdeviceptr buffer;   /* 0 until a grow asks for bytes */
    size_t bytes;
    void *payload;        /* client->payload_bytes; NULL when 0 */
    bool capturing;       /* the stream is being captured: no growth */
    struct scratch_pool *pool;
    CUstream stream;
} stream_scratch;

/* What a call needs to know about capture before it starts, and what it
 * changes for its duration while its stream is captured: the calling
 * thread's capture mode becomes relaxed (a kernel loaded for the first time
 * inside a capture is then a module load the driver permits, where a
 * global-mode capture would be invalidated by it) and PTXKIT_TUNE=auto
 * tunes nothing (tune_auto_pause). */
typedef struct capture_guard {
    bool capturing;
    bool mode_changed;
    CUstreamCaptureMode mode;  /* the thread's, to restore */
} capture_guard;

/* Reads whether `stream` is being captured (a capture the driver has
 * already invalidated counts as one: nothing may be allocated for it either)
 * and sets the call up for it. Pair with capture_guard_leave on success. */
ptxkit_status capture_guard_enter(ptxkit_context *ctx, ptxkit_stream *stream, capture_guard *g);
void capture_guard_leave(ptxkit_context *ctx, capture_guard *g);

/* The slot of `stream` in client's pool (context current), ordered after
 * its previous owner where it changes hands; during capture only the
 * stream's own slot (see above). On success the pool's lock is held until
 * stream_scratch_release; on failure it is not, and the error is recorded. */
ptxkit_status stream_scratch_acquire(ptxkit_context *ctx, const stream_scratch_client *client, ptxkit_stream *stream,
                                     bool capturing, stream_scratch *out);

/* Makes the slot's buffer at least `needed` bytes: where it is smaller, a
 * buffer of `want` (>= needed) bytes replaces it (the old one retired, the
 * payload zeroed). During capture a growth is PTXKIT_ERROR_CAPTURE. The
 * lock stays held either way. */
ptxkit_status stream_scratch_grow(ptxkit_context *ctx, stream_scratch *s, size_t needed, size_t want);

void stream_scratch_release(stream_scratch *s);

/* Calls fn on every slot's payload of client's pool (under its lock); none
 * when the pool does not exist yet. For debugging hooks (scan's epoch). */
void stream_scratch_for_each_payload(ptxkit_context *ctx, const stream_scratch_client *client,
                                     void (*fn)(void *payload, void *arg), void *arg);

#endif
