/* Reduce and scan of a sharded array: each rank's shard goes through the
 * single-GPU op on its GPU, only one total per rank travels (an in-place
 * ncclAllGather), and the shard kernels finish the job. All-reduce, gather
 * and scatter are NCCL's own collectives. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ptxkit_ops.h"
#include "multi/comm.h"
#include "runtime/context.h"
#include "runtime/status.h"

static ptxkit_stream *stream_of(ptxkit_stream *const *streams, int l) {
    return streams ? streams[l] : NULL;
}

/* The arrays' and comm's checks every sharded call shares. */
static ptxkit_status check_common(ptxkit_comm *comm, ptxkit_dtype type, const char *what) {
    if (!comm) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: comm is NULL", what);
    if ((unsigned)type >= PTXKIT_DTYPE_COUNT)
        return record_error(comm->local[0].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: type %d out of range", what, (int)type);
    return PTXKIT_SUCCESS;
}

static ptxkit_status check_op(ptxkit_comm *comm, ptxkit_reduce_op op, const char *what) {
    if ((unsigned)op >= PTXKIT_REDUCE_OP_COUNT)
        return record_error(comm->local[0].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: operator %d out of range", what,
                            (int)op);
    return PTXKIT_SUCCESS;
}

/* out[l] may be 0 for an empty shard of a scan (nothing is written), never
 * for a reduce (every rank gets the result). */
static ptxkit_status check_arrays(ptxkit_comm *comm, const ptxkit_dptr *out, const ptxkit_dptr *in, const size_t *n,
                                  bool empty_out_allowed, const char *what) {
    if (!out || !in || !n)
        return record_error(comm->local[0].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL (one entry per local rank)",
                            what, !out ? "out" : !in ? "in" : "n");
    for (int l = 0; l < comm->local_ranks; l++) {
        if (!out[l] && (n[l] || !empty_out_allowed))
            return record_error(comm->local[l].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: out[%d] is 0", what, l);
        if (!in[l] && n[l])
            return record_error(comm->local[l].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: in[%d] is 0 with n[%d] = %zu",
                                what, l, l, n[l]);
    }
    return PTXKIT_SUCCESS;
}

/* One in-place all-gather of each local rank's total: the only data the
 * sharded reduce and scan send. */
static ptxkit_status gather_totals(ptxkit_comm *comm, ptxkit_dtype type, ptxkit_stream *const *streams,
                                   const char *what) {
    const nccl_library *nccl = comm->nccl;
    size_t size = ptxkit_dtype_size(type);
    nccl_result r = nccl->ncclGroupStart();
    if (r != NCCL_SUCCESS) return comm_nccl_error(nccl, &comm->local[0], r, "ncclGroupStart");
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int l = 0; l < comm->local_ranks && st == PTXKIT_SUCCESS; l++) {
        comm_rank *lr = &comm->local[l];
        if ((st = context_enter(lr->ctx)) != PTXKIT_SUCCESS) break;
        r = nccl->ncclAllGather((const void *)(uintptr_t)(lr->totals + (ptxkit_dptr)lr->rank * size),
                                (void *)(uintptr_t)lr->totals, 1, comm_nccl_type(type), lr->nccl,
                                ptxkit_stream_handle_get(stream_of(streams, l)));
        context_leave(lr->ctx);
        if (r != NCCL_SUCCESS) st = comm_nccl_error(nccl, lr, r, what);
    }
    /* the group is closed whatever happened, so that NCCL's state stays sane */
    r = nccl->ncclGroupEnd();
    if (st == PTXKIT_SUCCESS && r != NCCL_SUCCESS) st = comm_nccl_error(nccl, &comm->local[0], r, "ncclGroupEnd");
    return st;
}

ptxkit_status ptxkit_comm_reduce(ptxkit_comm *comm, ptxkit_reduce_op op, ptxkit_dtype type, const ptxkit_dptr *out,
                                 const ptxkit_dptr *in, const size_t *n, const ptxkit_config *options,
                                 ptxkit_stream *const *streams) {
    static const char what[] = "ptxkit_comm_reduce";
    ptxkit_status st = check_common(comm, type, what);
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = check_op(comm, op, what)) != PTXKIT_SUCCESS) return st;
    if (ptxkit_reduce_supported(comm->local[0].ctx, op, type) != PTXKIT_SUCCESS)
        return record_error(comm->local[0].ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: %s of %s is not provided", what,
                            ptxkit_reduce_op_name(op),
                            ptxkit_dtype_name(type));
    if ((st = check_arrays(comm, out, in, n, false, what)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *combine[1024];
    for (int l = 0; l < comm->local_ranks; l++)
        if ((st = shard_kernel_get(comm, l, SHARD_COMBINE, op, type, &combine[l])) != PTXKIT_SUCCESS) return st;
    size_t size = ptxkit_dtype_size(type);
    for (int l = 0; l < comm->local_ranks; l++) {
        comm_rank *lr = &comm->local[l];
        st = ptxkit_reduce(lr->ctx, op, type, lr->totals + (ptxkit_dptr)lr->rank * size, in[l], n[l], options,
                           stream_of(streams, l));
        if (st != PTXKIT_SUCCESS) return st;
    }
    if ((st = gather_totals(comm, type, streams, "ncclAllGather (ptxkit_comm_reduce's totals)")) != PTXKIT_SUCCESS)
        return st;
    for (int l = 0; l < comm->local_ranks; l++) {
        comm_rank *lr = &comm->local[l];
        ptxkit_dptr dst = out[l], totals = lr->totals;
        int count = comm->ranks;
        void *args[] = {&dst, &totals, &count};
        st = ptxkit_kernel_launch(combine[l], (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){1, 1, 1}, 0, stream_of(streams, l), args);
        if (st != PTXKIT_SUCCESS) return st;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_comm_scan(ptxkit_comm *comm, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                               const ptxkit_dptr *out, const ptxkit_dptr *in, const size_t *n,
                               const ptxkit_config *options, ptxkit_stream *const *streams) {
    static const char what[] = "ptxkit_comm_scan";
    ptxkit_status st = check_common(comm, type, what);
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = check_op(comm, op, what)) != PTXKIT_SUCCESS) return st;
    if ((unsigned)kind >= PTXKIT_SCAN_KIND_COUNT)
        return record_error(comm->local[0].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: kind %d out of range", what, (int)kind);
    if (ptxkit_scan_supported(comm->local[0].ctx, kind, op, type) != PTXKIT_SUCCESS)
        return record_error(comm->local[0].ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: %s of %s is not provided", what,
                            ptxkit_reduce_op_name(op),
                            ptxkit_dtype_name(type));
    if ((st = check_arrays(comm, out, in, n, true, what)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *total[1024], *offset[1024];
    for (int l = 0; l < comm->local_ranks; l++) {
        if ((st = shard_kernel_get(comm, l, SHARD_TOTAL, op, type, &total[l])) != PTXKIT_SUCCESS) return st;
        if ((st = shard_kernel_get(comm, l, SHARD_OFFSET, op, type, &offset[l])) != PTXKIT_SUCCESS) return st;
    }
    size_t size = ptxkit_dtype_size(type);
    unsigned char identity[8];
    shard_identity(op, type, identity);
    int exclusive = kind == PTXKIT_SCAN_EXCLUSIVE;
    for (int l = 0; l < comm->local_ranks; l++) {
        comm_rank *lr = &comm->local[l];
        ptxkit_stream *stream = stream_of(streams, l);
        ptxkit_dptr last = lr->totals + 8 * (ptxkit_dptr)comm->ranks;
        /* an in-place exclusive scan overwrites the last input, which the
         * shard's total needs */
        if (exclusive && n[l] &&
            (st = ptxkit_memory_copy_async(lr->ctx, last, in[l] + (ptxkit_dptr)(n[l] - 1) * size, size, stream)) !=
                PTXKIT_SUCCESS)
            return st;
        if ((st = ptxkit_scan(lr->ctx, kind, op, type, out[l], in[l], n[l], options, stream)) != PTXKIT_SUCCESS)
            return st;
        ptxkit_dptr totals = lr->totals, scanned = out[l];
        int rank = lr->rank;
        unsigned long long count = n[l];
        void *args[] = {&totals, &rank, &scanned, &last, &count, &exclusive, identity};
        st = ptxkit_kernel_launch(total[l], (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){1, 1, 1}, 0, stream, args);
        if (st != PTXKIT_SUCCESS) return st;
    }
    if ((st = gather_totals(comm, type, streams, "ncclAllGather (ptxkit_comm_scan's totals)")) != PTXKIT_SUCCESS)
        return st;
    for (int l = 0; l < comm->local_ranks; l++) {
        comm_rank *lr = &comm->local[l];
        /* rank 0's prefix is the identity: its shard is final as scanned */
        if (lr->rank == 0 || n[l] == 0) continue;
        ptxkit_dptr dst = out[l], totals = lr->totals;
        unsigned long long count = n[l];
        int rank = lr->rank;
        unsigned long long blocks = (count + 1023) / 1024, cap = (unsigned long long)lr->sm_count * 8;
        if (blocks > cap) blocks = cap;
        void *args[] = {&dst, &count, &totals, &rank};
        st = ptxkit_kernel_launch(offset[l], (ptxkit_dim3){(unsigned)blocks, 1, 1}, (ptxkit_dim3){256, 1, 1}, 0,
                           stream_of(streams, l), args);
        if (st != PTXKIT_SUCCESS) return st;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_comm_allreduce(ptxkit_comm *comm, ptxkit_reduce_op op, ptxkit_dtype type, const ptxkit_dptr *out,
                                    const ptxkit_dptr *in, size_t n, ptxkit_stream *const *streams) {
    static const char what[] = "ptxkit_comm_allreduce";
    ptxkit_status st = check_common(comm, type, what);
    if (st != PTXKIT_SUCCESS) return st;
    int nccl_op = op == PTXKIT_REDUCE_SUM ? NCCL_SUM : op == PTXKIT_REDUCE_MIN ? NCCL_MIN
                                                   : op == PTXKIT_REDUCE_MAX ? NCCL_MAX : -1;
    if (nccl_op < 0)
        return record_error(comm->local[0].ctx, (unsigned)op < PTXKIT_REDUCE_OP_COUNT ? PTXKIT_ERROR_UNSUPPORTED
                                                                                     : PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%s: operator %d: NCCL reduces with sum, min and max only", what, (int)op);
    if (!out || !in) return record_error(comm->local[0].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: out or in is NULL", what);
    for (int l = 0; l < comm->local_ranks; l++)
        if (n && (!out[l] || !in[l]))
            return record_error(comm->local[l].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: out[%d] or in[%d] is 0", what, l, l);
    if (n == 0) return PTXKIT_SUCCESS;
    const nccl_library *nccl = comm->nccl;
    nccl_result r = nccl->ncclGroupStart();
    if (r != NCCL_SUCCESS) return comm_nccl_error(nccl, &comm->local[0], r, "ncclGroupStart");
    for (int l = 0; l < comm->local_ranks && st == PTXKIT_SUCCESS; l++) {
        comm_rank *lr = &comm->local[l];
        if ((st = context_enter(lr->ctx)) != PTXKIT_SUCCESS) break;
        r = nccl->ncclAllReduce((const void *)(uintptr_t)in[l], (void *)(uintptr_t)out[l], n, comm_nccl_type(type),
                                nccl_op, lr->nccl, ptxkit_stream_handle_get(stream_of(streams, l)));
        context_leave(lr->ctx);
        if (r != NCCL_SUCCESS) st = comm_nccl_error(nccl, lr, r, "ncclAllReduce");
    }
    r = nccl->ncclGroupEnd();
    if (st == PTXKIT_SUCCESS && r != NCCL_SUCCESS) st = comm_nccl_error(nccl, &comm->local[0], r, "ncclGroupEnd");
    return st;
}

/* Gather (to_root) or scatter: root exchanges counts[r] elements with every
 * rank r through NCCL send/receive (bytes, so any type and any count); its
 * own part is a device copy. */
static ptxkit_status exchange(ptxkit_comm *comm, ptxkit_dtype type, int root, ptxkit_dptr root_buffer,
                              const ptxkit_dptr *shards, const size_t *counts, ptxkit_stream *const *streams,
                              bool to_root, const char *what) {
    ptxkit_status st = check_common(comm, type, what);
    if (st != PTXKIT_SUCCESS) return st;
    if (root < 0 || root >= comm->ranks)
        return record_error(comm->local[0].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: root %d of %d ranks", what, root,
                            comm->ranks);
    if (!shards || !counts)
        return record_error(comm->local[0].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", what,
                            shards ? "counts" : to_root ? "in" : "out");
    size_t size = ptxkit_dtype_size(type), total = 0;
    for (int r = 0; r < comm->ranks; r++) {
        if (counts[r] > (SIZE_MAX - total) / size)
            return record_error(comm->local[0].ctx, PTXKIT_ERROR_OVERFLOW, "%s: the counts' bytes overflow", what);
        total += counts[r] * size;
    }
    int root_local = root - comm->first_rank;
    bool root_here = root_local >= 0 && root_local < comm->local_ranks;
    if (root_here && total && !root_buffer)
        return record_error(comm->local[root_local].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: root's %s is 0", what,
                            to_root ? "out" : "in");
    for (int l = 0; l < comm->local_ranks; l++)
        if (counts[comm->first_rank + l] && !shards[l])
            return record_error(comm->local[l].ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %s[%d] is 0", what,
                                to_root ? "in" : "out", l);
    const nccl_library *nccl = comm->nccl;
    /* root's own part first: a device copy outside NCCL */
    if (root_here && counts[root]) {
        size_t offset = 0;
        for (int r = 0; r < root; r++) offset += counts[r] * size;
        comm_rank *lr = &comm->local[root_local];
        ptxkit_dptr dst = to_root ? root_buffer + offset : shards[root_local];
        ptxkit_dptr src = to_root ? shards[root_local] : root_buffer + offset;
        if ((st = ptxkit_memory_copy_async(lr->ctx, dst, src, counts[root] * size, stream_of(streams, root_local))) !=
            PTXKIT_SUCCESS)
            return st;
    }
    nccl_result r = nccl->ncclGroupStart();
    if (r != NCCL_SUCCESS) return comm_nccl_error(nccl, &comm->local[0], r, "ncclGroupStart");
    for (int l = 0; l < comm->local_ranks && st == PTXKIT_SUCCESS; l++) {
        comm_rank *lr = &comm->local[l];
        void *stream = ptxkit_stream_handle_get(stream_of(streams, l));
        if ((st = context_enter(lr->ctx)) != PTXKIT_SUCCESS) break;
        if (lr->rank == root) {
            size_t offset = 0;
            for (int peer = 0; peer < comm->ranks && r == NCCL_SUCCESS; offset += counts[peer] * size, peer++) {
                if (peer == root || !counts[peer]) continue;
                r = to_root ? nccl->ncclRecv((void *)(uintptr_t)(root_buffer + offset), counts[peer] * size, NCCL_UINT8,
                                             peer, lr->nccl, stream)
                            : nccl->ncclSend((const void *)(uintptr_t)(root_buffer + offset), counts[peer] * size,
                                             NCCL_UINT8, peer, lr->nccl, stream);
            }
        } else if (counts[lr->rank]) {
            size_t bytes = counts[lr->rank] * size;
            r = to_root ? nccl->ncclSend((const void *)(uintptr_t)shards[l], bytes, NCCL_UINT8, root, lr->nccl, stream)
                        : nccl->ncclRecv((void *)(uintptr_t)shards[l], bytes, NCCL_UINT8, root, lr->nccl, stream);
        }
        context_leave(lr->ctx);
        if (r != NCCL_SUCCESS) st = comm_nccl_error(nccl, lr, r, to_root ? "NCCL send/receive (gather)"
                                                                      : "NCCL send/receive (scatter)");
    }
    r = nccl->ncclGroupEnd();
    if (st == PTXKIT_SUCCESS && r != NCCL_SUCCESS) st = comm_nccl_error(nccl, &comm->local[0], r, "ncclGroupEnd");
    return st;
}

ptxkit_status ptxkit_comm_gather(ptxkit_comm *comm, ptxkit_dtype type, int root, ptxkit_dptr out,
                                 const ptxkit_dptr *in, const size_t *counts, ptxkit_stream *const *streams) {
    return exchange(comm, type, root, out, in, counts, streams, true, "ptxkit_comm_gather");
}

ptxkit_status ptxkit_comm_scatter(ptxkit_comm *comm, ptxkit_dtype type, int root, const ptxkit_dptr *out,
                                  ptxkit_dptr in, const size_t *counts, ptxkit_stream *const *streams) {
    return exchange(comm, type, root, in, out, counts, streams, false, "ptxkit_comm_scatter");
}

/* Shard bookkeeping: where each rank's part of an array starts. Plain CPU
 * code: no context, GPU or NCCL. */
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

ptxkit_status ptxkit_shard_offsets_get(const size_t *counts, int ranks, size_t *offsets, size_t *total) {
    if (!counts || !offsets)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_shard_offsets_get: %s is NULL",
                            counts ? "offsets" : "counts");
    if (ranks < 1) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_shard_offsets_get: %d ranks", ranks);
    size_t sum = 0;
    for (int r = 0; r < ranks; r++) {
        if (counts[r] > SIZE_MAX - sum)
            return record_error(NULL, PTXKIT_ERROR_OVERFLOW, "ptxkit_shard_offsets_get: the counts overflow size_t at rank %d", r);
        offsets[r] = sum;
        sum += counts[r];
    }
    if (total) *total = sum;
    return PTXKIT_SUCCESS;
}
