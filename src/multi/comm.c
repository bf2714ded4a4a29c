/* Communicators: ncclCommInitAll over contexts of this process, or one
 * rank per process through ncclCommInitRank with an id passed as bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "multi/comm.h"
#include "runtime/context.h"
#include "runtime/status.h"

enum { COMM_MAX_RANKS = 1024 };

static const char *nccl_result_name(nccl_result r) {
    static const char *const names[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                        "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                        "ncclRemoteError",   "ncclInProgress"};
    return r >= 0 && r < (int)(sizeof names / sizeof names[0]) ? names[r] : "ncclResult(unknown)";
}

ptxkit_status comm_nccl_error(const nccl_library *nccl, comm_rank *rank, nccl_result r, const char *what) {
    const char *text = nccl->ncclGetErrorString ? nccl->ncclGetErrorString(r) : NULL;
    /* NCCL's last error is per thread in its builds up to now: the comm
     * argument is accepted and may be NULL */
    const char *last = nccl->ncclGetLastError ? nccl->ncclGetLastError(rank ? rank->nccl : NULL) : NULL;
    ptxkit_status status = r == NCCL_INVALID_ARGUMENT || r == NCCL_INVALID_USAGE ? PTXKIT_ERROR_INVALID_ARGUMENT
                                                                                 : PTXKIT_ERROR_DRIVER;
    char where[32] = "";
    if (rank) snprintf(where, sizeof where, " (rank %d)", rank->rank);
    return record_error(rank ? rank->ctx : NULL, status, "%s%s: %s: %s%s%s", what, where, nccl_result_name(r),
                        text ? text : "", last && *last ? "; NCCL's last error: " : "", last && *last ? last : "");
}

int comm_nccl_type(ptxkit_dtype type) {
    static const int types[PTXKIT_DTYPE_COUNT] = {NCCL_INT32, NCCL_UINT32, NCCL_INT64,
                                                  NCCL_UINT64, NCCL_FLOAT32, NCCL_FLOAT64};
    return types[type];
}

/* NCCL, or UNSUPPORTED with the places tried (thread's error). */
static const nccl_library *comm_library(ptxkit_status *status, const char *what) {
    char why[2048];
    const nccl_library *nccl = nccl_get(why, sizeof why);
    if (!nccl) *status = record_error(NULL, PTXKIT_ERROR_UNSUPPORTED, "%s: %s", what, why);
    return nccl;
}

ptxkit_status ptxkit_comm_library_get(char *path, size_t path_size, char *version, size_t version_size) {
    ptxkit_status st = PTXKIT_SUCCESS;
    if (path && path_size) path[0] = 0;
    if (version && version_size) version[0] = 0;
    const nccl_library *nccl = comm_library(&st, "ptxkit_comm_library_get");
    if (!nccl) return st;
    if (path && path_size) snprintf(path, path_size, "%s", nccl->origin);
    nccl_version_text(nccl->version, version, version_size);
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_comm_unique_id_get(unsigned char id[PTXKIT_COMM_ID_BYTES]) {
    if (!id) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_unique_id_get: id is NULL");
    ptxkit_status st = PTXKIT_SUCCESS;
    const nccl_library *nccl = comm_library(&st, "ptxkit_comm_unique_id_get");
    if (!nccl) return st;
    nccl_unique_id u;
    nccl_result r = nccl->ncclGetUniqueId(&u);
    if (r != NCCL_SUCCESS) return comm_nccl_error(nccl, NULL, r, "ncclGetUniqueId");
    _Static_assert(sizeof u.internal == PTXKIT_COMM_ID_BYTES, "ncclUniqueId is PTXKIT_COMM_ID_BYTES bytes");
    memcpy(id, u.internal, PTXKIT_COMM_ID_BYTES);
    return PTXKIT_SUCCESS;
}

static ptxkit_comm *comm_new(const nccl_library *nccl, int ranks, int local_ranks, int first_rank) {
    ptxkit_comm *comm = calloc(1, sizeof *comm + (size_t)local_ranks * sizeof comm->local[0]);
    if (!comm) return NULL;
    comm->nccl = nccl;
    comm->ranks = ranks;
    comm->local_ranks = local_ranks;
    comm->first_rank = first_rank;
    return comm;
}

/* Frees what ptxkit allocated for the communicator; the NCCL communicators
 * are destroyed by the caller. */
static void comm_free(ptxkit_comm *comm) {
    for (int l = 0; l < comm->local_ranks; l++)
        if (comm->local[l].totals) ptxkit_memory_free(comm->local[l].ctx, comm->local[l].totals);
    ptxkit_program_destroy(comm->program);
    free(comm);
}

/* Everything but the NCCL communicators: each rank's totals buffer and
 * SM count, the kernels' program. */
static ptxkit_status comm_prepare(ptxkit_comm *comm) {
    ptxkit_status st = shard_program_create(&comm->program);
    if (st != PTXKIT_SUCCESS) return st;
    for (int l = 0; l < comm->local_ranks; l++) {
        comm_rank *lr = &comm->local[l];
        ptxkit_device_info info;
        if ((st = ptxkit_device_info_get(lr->ctx, &info)) != PTXKIT_SUCCESS) return st;
        lr->sm_count = info.sm_count > 0 ? info.sm_count : 1;
        if ((st = ptxkit_memory_alloc(lr->ctx, 8 * ((size_t)comm->ranks + 1), &lr->totals)) != PTXKIT_SUCCESS) return st;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_comm_create_all(ptxkit_context *const *contexts, int count, ptxkit_comm **out) {
    if (!out) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_create_all: out is NULL");
    *out = NULL;
    if (!contexts) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_create_all: contexts is NULL");
    if (count < 1 || count > COMM_MAX_RANKS)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_create_all: count %d is not in [1, %d]",
                            count, COMM_MAX_RANKS);
    int *devices = calloc((size_t)count, sizeof *devices);
    nccl_comm *handles = calloc((size_t)count, sizeof *handles);
    if (!devices || !handles) {
        free(devices), free(handles);
        return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_comm_create_all: out of host memory");
    }
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int i = 0; i < count && st == PTXKIT_SUCCESS; i++) {
        ptxkit_device_info info;
        if (!contexts[i]) {
            st = record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_create_all: contexts[%d] is NULL", i);
            break;
        }
        if ((st = ptxkit_device_info_get(contexts[i], &info)) != PTXKIT_SUCCESS) break;
        devices[i] = info.ordinal;
        for (int k = 0; k < i; k++)
            if (devices[k] == devices[i])
                st = record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                                  "ptxkit_comm_create_all: contexts[%d] and contexts[%d] are both GPU %d (one rank per GPU)",
                                  k, i, devices[i]);
    }
    const nccl_library *nccl = st == PTXKIT_SUCCESS ? comm_library(&st, "ptxkit_comm_create_all") : NULL;
    ptxkit_comm *comm = nccl ? comm_new(nccl, count, count, 0) : NULL;
    if (nccl && !comm) st = record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_comm_create_all: out of host memory");
    if (comm) {
        /* NCCL sets each device current in turn: the push and pop around
         * it give the thread back the context stack it had */
        if ((st = context_enter(contexts[0])) == PTXKIT_SUCCESS) {
            nccl_result r = nccl->ncclCommInitAll(handles, count, devices);
            context_leave(contexts[0]);
            if (r != NCCL_SUCCESS) {
                st = comm_nccl_error(nccl, NULL, r, "ncclCommInitAll");
                memset(handles, 0, (size_t)count * sizeof *handles);
            }
        }
        for (int i = 0; i < count; i++)
            comm->local[i] = (comm_rank){.ctx = contexts[i], .nccl = handles[i], .rank = i};
        if (st == PTXKIT_SUCCESS) st = comm_prepare(comm);
        if (st != PTXKIT_SUCCESS) {
            ptxkit_comm_destroy(comm);
            comm = NULL;
        }
    }
    free(devices), free(handles);
    *out = comm;
    return st;
}

ptxkit_status ptxkit_comm_create_rank(ptxkit_context *ctx, const unsigned char id[PTXKIT_COMM_ID_BYTES], int ranks,
                                      int rank, ptxkit_comm **out) {
    if (!out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_create_rank: out is NULL");
    *out = NULL;
    if (!ctx || !id)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_create_rank: %s is NULL", ctx ? "id" : "ctx");
    if (ranks < 1 || ranks > (1 << 20) || rank < 0 || rank >= ranks)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_comm_create_rank: rank %d of %d ranks (needs 0 <= rank < ranks <= 2^20)", rank, ranks);
    ptxkit_status st = PTXKIT_SUCCESS;
    const nccl_library *nccl = comm_library(&st, "ptxkit_comm_create_rank");
    if (!nccl) return st;
    ptxkit_comm *comm = comm_new(nccl, ranks, 1, rank);
    if (!comm) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_comm_create_rank: out of host memory");
    comm->local[0] = (comm_rank){.ctx = ctx, .rank = rank};
    nccl_unique_id u;
    memcpy(u.internal, id, PTXKIT_COMM_ID_BYTES);
    if ((st = context_enter(ctx)) == PTXKIT_SUCCESS) {
        nccl_result r = nccl->ncclCommInitRank(&comm->local[0].nccl, ranks, u, rank);
        context_leave(ctx);
        if (r != NCCL_SUCCESS) {
            comm->local[0].nccl = NULL;
            st = comm_nccl_error(nccl, &comm->local[0], r, "ncclCommInitRank");
        }
    }
    if (st == PTXKIT_SUCCESS) st = comm_prepare(comm);
    if (st != PTXKIT_SUCCESS) {
        ptxkit_comm_destroy(comm);
        return st;
    }
    *out = comm;
    return PTXKIT_SUCCESS;
}

void ptxkit_comm_destroy(ptxkit_comm *comm) {
    if (!comm) return;
    for (int l = 0; l < comm->local_ranks; l++) {
        comm_rank *lr = &comm->local[l];
        if (!lr->ctx) continue;
        /* the totals buffer is freed only once no queued work reads it */
        ptxkit_context_synchronize(lr->ctx);
        if (lr->nccl && context_enter(lr->ctx) == PTXKIT_SUCCESS) {
            comm->nccl->ncclCommDestroy(lr->nccl);
            context_leave(lr->ctx);
        }
        lr->nccl = NULL;
    }
    comm_free(comm);
}

ptxkit_status ptxkit_comm_info_get(const ptxkit_comm *comm, ptxkit_comm_info *out) {
    if (!comm || !out) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_info_get: NULL argument");
    *out = (ptxkit_comm_info){.ranks = comm->ranks, .local_ranks = comm->local_ranks,
                              .first_rank = comm->first_rank, .nccl_version = comm->nccl->version};
    return PTXKIT_SUCCESS;
}

ptxkit_context *ptxkit_comm_context_get(const ptxkit_comm *comm, int local_rank) {
    if (!comm || local_rank < 0 || local_rank >= comm->local_ranks) return NULL;
    return comm->local[local_rank].ctx;
}

ptxkit_status ptxkit_comm_check(ptxkit_comm *comm) {
    if (!comm) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_comm_check: comm is NULL");
    for (int l = 0; l < comm->local_ranks; l++) {
        comm_rank *lr = &comm->local[l];
        nccl_result async = NCCL_SUCCESS;
        nccl_result r = comm->nccl->ncclCommGetAsyncError(lr->nccl, &async);
        if (r != NCCL_SUCCESS) return comm_nccl_error(comm->nccl, lr, r, "ncclCommGetAsyncError");
        if (async != NCCL_SUCCESS && async != NCCL_IN_PROGRESS)
            return comm_nccl_error(comm->nccl, lr, async, "NCCL's queued work");
    }
    return PTXKIT_SUCCESS;
}
