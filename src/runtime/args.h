/* Small checks of a call's arguments: reserved fields, sizes that must not
 * overflow. Header only. */
#ifndef PTXKIT_RUNTIME_ARGS_H
#define PTXKIT_RUNTIME_ARGS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a public struct's reserved fields are all zero: a caller built
 * against a later header may have set fields this library cannot honour. */
static inline bool reserved_zero(const int *reserved, int count) {
    for (int i = 0; i < count; i++)
        if (reserved[i]) return false;
    return true;
}
#define RESERVED_ZERO(s) reserved_zero((s)->reserved, (int)(sizeof (s)->reserved / sizeof (s)->reserved[0]))

/* a * b without overflow into *out, else false. */
static inline bool mul_size(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

#endif
