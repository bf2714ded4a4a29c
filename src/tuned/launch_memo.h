/* Resolved launches, remembered per context for every family.
 *
 * What a call's options resolve to (tuned values, the loaded kernel, its
 * block size, the most blocks worth launching, and a few family values)
 * depends only on the family and its variant, the caller's options, the
 * size bucket (through the tuning database) and the tuning state, never on
 * the pointers or the exact size. Calls on small inputs are bound by the
 * host's time per call, so a repeat call finds its resolution here instead
 * of consulting the tuning database and hashing the kernel's key again. */
#ifndef PTXKIT_TUNED_LAUNCH_MEMO_H
#define PTXKIT_TUNED_LAUNCH_MEMO_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "runtime/launch.h"

/* Room for a family's selectors and resolved values: gemm's shape, flags
 * and requested tiles, and its configuration and three kernels. */
enum { LAUNCH_MEMO_VARIANTS = 8, LAUNCH_MEMO_EXTRA = 8 };

typedef struct launch_memo_key {
    const void *family;            /* identity: any address unique to the family */
    launch_options options; /* the caller's, validated */
    long long variant[LAUNCH_MEMO_VARIANTS]; /* the family's own selectors (operator, type, vector width...) */
    int bucket;                    /* size bucket; -1 where tuning does not apply */
    int mode;                      /* tune_mode; off inside the tuner */
    unsigned generation;           /* tune_generation() when the key was made */
} launch_memo_key;

typedef struct launch_memo_value {
    ptxkit_kernel *kernel;
    int block;
    unsigned wave;                 /* most useful blocks, where the family sizes its grid by occupancy */
    size_t extra[LAUNCH_MEMO_EXTRA]; /* the family's own resolved values */
} launch_memo_value;

/* A key for (family, options, variant) at size n: the tuning state is read
 * now, before resolving, so a change meanwhile retires what is stored. The
 * options must have been validated. */
launch_memo_key launch_memo_key_for(const void *family, const launch_options *options, const long long *variant,
                                    int variant_count, size_t n);
/* The remembered resolution of key; false when there is none. */
bool launch_memo_find(ptxkit_context *ctx, const launch_memo_key *key, launch_memo_value *out);
/* Remembers a resolution (best effort: without memory, nothing is kept). */
void launch_memo_store(ptxkit_context *ctx, const launch_memo_key *key, const launch_memo_value *value);

#endif
