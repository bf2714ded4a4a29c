/* Communicators (comm.c) over ptxkit contexts, and what the sharded
 * operations (sharded_ops.c) need of them: the NCCL library, each local
 * rank's context, NCCL communicator, buffer of per-rank totals and the
 * small kernels of shard_kernels.c. */
#ifndef PTXKIT_MULTI_COMM_H
#define PTXKIT_MULTI_COMM_H

#include "driver/nccl.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"

/* The kernels a sharded reduce or scan adds to the single-GPU ops. */
typedef enum shard_kernel {
    SHARD_TOTAL = 0,   /* a scanned shard's total into the totals buffer */
    SHARD_COMBINE,     /* the totals of every rank into one value */
    SHARD_OFFSET,      /* the totals of the ranks before added to a scanned shard */
    SHARD_KERNEL_COUNT
} shard_kernel;

typedef struct comm_rank {
    ptxkit_context *ctx;
    nccl_comm nccl;
    int rank;
    int sm_count;
    /* ranks + 1 slots of 8 bytes: slot r holds rank r's total (all-gathered
     * in place), the last one a shard's last input element (exclusive scan) */
    ptxkit_dptr totals;
    ptxkit_kernel *kernels[SHARD_KERNEL_COUNT][PTXKIT_DTYPE_COUNT][PTXKIT_REDUCE_OP_COUNT];
} comm_rank;

struct ptxkit_comm {
    const nccl_library *nccl;
    int ranks, local_ranks, first_rank;
    ptxkit_program *program; /* shard_kernels.c's source */
    comm_rank local[];
};

/* Records NCCL's failure r of `what` on rank's context (NULL: the thread)
 * and returns the status: name, ncclGetErrorString, ncclGetLastError. */
ptxkit_status comm_nccl_error(const nccl_library *nccl, comm_rank *rank, nccl_result r, const char *what);

/* NCCL's datatype for a ptxkit type. */
int comm_nccl_type(ptxkit_dtype type);

/* The program of the shard kernels (shard_kernels.c), and one kernel for
 * (op, type) on local rank l, loaded once per communicator. */
ptxkit_status shard_program_create(ptxkit_program **out);
ptxkit_status shard_kernel_get(ptxkit_comm *comm, int l, shard_kernel which, ptxkit_reduce_op op, ptxkit_dtype type,
                               ptxkit_kernel **out);
/* The operator's identity in type's representation (8 bytes, the first
 * ptxkit_dtype_size of them used): a kernel argument. */
void shard_identity(ptxkit_reduce_op op, ptxkit_dtype type, unsigned char out[8]);

#endif
