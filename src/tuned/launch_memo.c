/* Resolved launches per context (launch_memo.h): a small table, most
 * recently found first, replaced oldest first. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "tuned/launch_memo.h"
#include "tuned/tuned.h"

enum { MEMO_SIZE = 128 };

typedef struct launch_memo {
    pthread_mutex_t lock;
    struct {
        launch_memo_key key;
        launch_memo_value value;
    } e[MEMO_SIZE];
    unsigned count, next, last;
} launch_memo;

static void *memo_create(ptxkit_context *ctx) {
    (void)ctx;
    launch_memo *m = calloc(1, sizeof *m);
    if (m) pthread_mutex_init(&m->lock, NULL);
    return m;
}

static void memo_destroy(ptxkit_context *ctx, void *p) {
    (void)ctx;
    launch_memo *m = p;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static const context_state_ops memo_ops = {memo_create, memo_destroy, NULL};

launch_memo_key launch_memo_key_for(const void *family, const launch_options *options, const long long *variant,
                                    int variant_count, size_t n) {
    launch_memo_key key;
    memset(&key, 0, sizeof key);
    key.family = family;
    key.options = *options;
    for (int i = 0; i < variant_count && i < LAUNCH_MEMO_VARIANTS; i++) key.variant[i] = variant[i];
    /* what tune_lookup reads, read the same way: the tuner's own calls
     * (guarded) and PTXKIT_TUNE=off use no database, whatever the size */
    key.mode = tune_guard_active() ? TUNE_MODE_OFF : (int)tune_mode_from_env();
    key.bucket = key.mode == TUNE_MODE_OFF ? -1 : tune_bucket(n);
    key.generation = tune_generation();
    return key;
}

static bool key_equal(const launch_memo_key *a, const launch_memo_key *b) {
    const launch_options *x = &a->options, *y = &b->options;
    return a->family == b->family && a->bucket == b->bucket && a->mode == b->mode && a->generation == b->generation &&
           memcmp(a->variant, b->variant, sizeof a->variant) == 0 && x->path == y->path && x->load_op == y->load_op &&
           x->block_size == y->block_size && x->vector_bytes == y->vector_bytes &&
           x->items_per_thread == y->items_per_thread && x->blocks_per_sm == y->blocks_per_sm;
}

bool launch_memo_find(ptxkit_context *ctx, const launch_memo_key *key, launch_memo_value *out) {
    launch_memo *m = context_state(ctx, &memo_ops);
    if (!m) return false;
    bool found = false;
    pthread_mutex_lock(&m->lock);
    /* a caller repeating one call hits the last entry at once */
    for (unsigned k = 0; k < m->count && !found; k++) {
        unsigned i = (m->last + k) % m->count;
        if (key_equal(&m->e[i].key, key)) {
            m->last = i;
            *out = m->e[i].value;
            found = true;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return found;
}

void launch_memo_store(ptxkit_context *ctx, const launch_memo_key *key, const launch_memo_value *value) {
    launch_memo *m = context_state(ctx, &memo_ops);
    if (!m) return;
    pthread_mutex_lock(&m->lock);
    /* an entry of an older tuning generation never matches again and is replaced in turn */
    unsigned i = m->count < MEMO_SIZE ? m->count++ : m->next++ % MEMO_SIZE;
    m->e[i].key = *key;
    m->e[i].value = *value;
    m->last = i;
    pthread_mutex_unlock(&m->lock);
}
