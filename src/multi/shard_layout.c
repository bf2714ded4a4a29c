/* Shard bookkeeping: where each rank's part of an array starts. Plain CPU
 * code: no context, GPU or NCCL. */
#include <stdint.h>

#include "runtime/status.h"

ptxkit_status ptxkit_shard_split(size_t total, int ranks, int rank, size_t *offset, size_t *count) {
    if (!offset || !count)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_shard_split: %s is NULL", offset ? "count" : "offset");
    if (ranks < 1 || rank < 0 || rank >= ranks)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_shard_split: rank %d of %d ranks", rank, ranks);
    size_t base = total / (size_t)ranks, extra = total % (size_t)ranks, r = (size_t)rank;
    *count = base + (r < extra ? 1 : 0);
    *offset = base * r + (r < extra ? r : extra);
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_shard_offsets(const size_t *counts, int ranks, size_t *offsets, size_t *total) {
    if (!counts || !offsets)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_shard_offsets: %s is NULL",
                            counts ? "offsets" : "counts");
    if (ranks < 1) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_shard_offsets: %d ranks", ranks);
    size_t sum = 0;
    for (int r = 0; r < ranks; r++) {
        if (counts[r] > SIZE_MAX - sum)
            return record_error(NULL, PTXKIT_ERROR_OVERFLOW, "ptxkit_shard_offsets: the counts overflow size_t at rank %d", r);
        offsets[r] = sum;
        sum += counts[r];
    }
    if (total) *total = sum;
    return PTXKIT_SUCCESS;
}
