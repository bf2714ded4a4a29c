/* NCCL through dlopen (nccl.c): the small part of its C ABI ptxkit uses,
 * declared here so that building needs no nccl.h. tests/check_nccl_abi.py
 * compares these declarations with nccl.h where one is installed. */
#ifndef PTXKIT_DRIVER_NCCL_H
#define PTXKIT_DRIVER_NCCL_H

#include <stdbool.h>
#include <stddef.h>

/* ncclComm_t, ncclUniqueId (NCCL_UNIQUE_ID_BYTES), ncclResult_t */
typedef struct nccl_comm_opaque *nccl_comm;
enum { NCCL_ID_BYTES = 128 };
typedef struct nccl_unique_id {
    char internal[NCCL_ID_BYTES];
} nccl_unique_id;
/* Enums travel as int: every value below fits, as the C ABI passes them. */
typedef int nccl_result;
enum {
    NCCL_SUCCESS = 0,
    NCCL_UNHANDLED_CUDA_ERROR = 1,
    NCCL_SYSTEM_ERROR = 2,
    NCCL_INTERNAL_ERROR = 3,
    NCCL_INVALID_ARGUMENT = 4,
    NCCL_INVALID_USAGE = 5,
    NCCL_REMOTE_ERROR = 6,
    NCCL_IN_PROGRESS = 7
};
/* ncclDataType_t */
enum {
    NCCL_INT8 = 0,
    NCCL_UINT8 = 1,
    NCCL_INT32 = 2,
    NCCL_UINT32 = 3,
    NCCL_INT64 = 4,
    NCCL_UINT64 = 5,
    NCCL_FLOAT32 = 7,
    NCCL_FLOAT64 = 8
};
/* ncclRedOp_t */
enum { NCCL_SUM = 0, NCCL_PROD = 1, NCCL_MAX = 2, NCCL_MIN = 3 };

/* NCCL_VERSION(X, Y, Z) of nccl.h: 2.9 and later X*10000 + Y*100 + Z,
 * older X*1000 + Y*100 + Z. */
#define NCCL_VERSION_CODE_OF(x, y, z) (((x) <= 2 && (y) <= 8) ? (x) * 1000 + (y) * 100 + (z) : (x) * 10000 + (y) * 100 + (z))
/* The oldest NCCL ptxkit accepts: in-place all-gather, send/receive,
 * ncclCommGetAsyncError and CUDA graph capture of collectives are all there. */
#define NCCL_MIN_VERSION NCCL_VERSION_CODE_OF(2, 12, 0)

/* Streams are cudaStream_t (a CUstream): passed as void *, so that this
 * header needs no CUDA header either. X(name, first version, return, params) */
#define NCCL_REQUIRED_ENTRIES(X)                                                                           \
    X(ncclGetVersion, 0, nccl_result, (int *version))                                                    \
    X(ncclGetErrorString, 0, const char *, (nccl_result result))                                         \
    X(ncclGetUniqueId, 0, nccl_result, (nccl_unique_id *unique_id))                                      \
    X(ncclCommInitRank, 0, nccl_result, (nccl_comm *comm, int nranks, nccl_unique_id comm_id, int rank)) \
    X(ncclCommInitAll, 0, nccl_result, (nccl_comm *comm, int ndev, const int *devlist))                  \
    X(ncclCommDestroy, 0, nccl_result, (nccl_comm comm))                                                 \
    X(ncclCommGetAsyncError, 0, nccl_result, (nccl_comm comm, nccl_result *async_error))                 \
    X(ncclGroupStart, 0, nccl_result, (void))                                                            \
    X(ncclGroupEnd, 0, nccl_result, (void))                                                              \
    X(ncclAllReduce, 0, nccl_result,                                                                     \
      (const void *sendbuff, void *recvbuff, size_t count, int datatype, int op, nccl_comm comm, void *stream)) \
    X(ncclAllGather, 0, nccl_result,                                                                     \
      (const void *sendbuff, void *recvbuff, size_t sendcount, int datatype, nccl_comm comm, void *stream)) \
    X(ncclReduceScatter, 0, nccl_result,                                                                 \
      (const void *sendbuff, void *recvbuff, size_t recvcount, int datatype, int op, nccl_comm comm, void *stream)) \
    X(ncclBroadcast, 0, nccl_result,                                                                     \
      (const void *sendbuff, void *recvbuff, size_t count, int datatype, int root, nccl_comm comm, void *stream)) \
    X(ncclSend, 0, nccl_result, (const void *sendbuff, size_t count, int datatype, int peer, nccl_comm comm, void *stream)) \
    X(ncclRecv, 0, nccl_result, (void *recvbuff, size_t count, int datatype, int peer, nccl_comm comm, void *stream))
/* Entries newer than NCCL_MIN_VERSION: asked for only where the library's
 * version has them, NULL elsewhere (the caller does without). */
#define NCCL_OPTIONAL_ENTRIES(X) X(ncclGetLastError, 21300, const char *, (nccl_comm comm))

#define NCCL_MEMBER(name, since, ret, params) ret(*name) params;
typedef struct nccl_library {
    int version;          /* ncclGetVersion's code */
    void *handle;         /* dlopen's */
    char origin[4200];    /* "file (found through how)" */
    NCCL_REQUIRED_ENTRIES(NCCL_MEMBER)
    NCCL_OPTIONAL_ENTRIES(NCCL_MEMBER)
} nccl_library;
#undef NCCL_MEMBER

/* Opens NCCL once per process: PTXKIT_NCCL_PATH alone when set; else the
 * loader's search path (libnccl.so.2), $CUDA_HOME, the pip wheel
 * (nvidia-nccl) of $VIRTUAL_ENV / $CONDA_PREFIX, /usr/local/cuda. NULL
 * (with a reason naming the places tried and why each failed) when none
 * loads or the version is older than NCCL_MIN_VERSION. */
const nccl_library *nccl_get(char *why, size_t why_size);

/* One attempt at one path, nothing cached (nccl_get's step; the tests load
 * stub libraries with it): true with lib filled, else false and why. */
bool nccl_open_at(const char *path, const char *how, nccl_library *lib, char *why, size_t why_size);
/* Closes what nccl_open_at opened. */
void nccl_close(nccl_library *lib);

/* "2.28.9" for a version code (both encodings). */
void nccl_version_text(int code, char *buf, size_t size);

#endif
