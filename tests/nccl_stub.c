/* A fake libnccl.so.2 for test_nccl: ncclGetVersion answers STUB_VERSION;
 * the other entries do nothing. STUB_LAST_ERROR adds ncclGetLastError,
 * STUB_NO_ALLGATHER leaves ncclAllGather out. Built once per variant. */
#include <stddef.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int ncclGetVersion(int *version) {
    *version = STUB_VERSION;
    return 0;
}
EXPORT const char *ncclGetErrorString(int result) {
    (void)result;
    return "stub error";
}
/* a recognizable id: bytes 0, 1, 2, ... */
EXPORT int ncclGetUniqueId(void *id) {
    for (int i = 0; i < 128; i++) ((unsigned char *)id)[i] = (unsigned char)i;
    return 0;
}
EXPORT int ncclCommInitRank(void) { return 4; }
EXPORT int ncclCommInitAll(void) { return 4; }
EXPORT int ncclCommDestroy(void) { return 0; }
EXPORT int ncclCommGetAsyncError(void) { return 0; }
EXPORT int ncclGroupStart(void) { return 0; }
EXPORT int ncclGroupEnd(void) { return 0; }
EXPORT int ncclAllReduce(void) { return 0; }
#ifndef STUB_NO_ALLGATHER
EXPORT int ncclAllGather(void) { return 0; }
#endif
EXPORT int ncclReduceScatter(void) { return 0; }
EXPORT int ncclBroadcast(void) { return 0; }
EXPORT int ncclSend(void) { return 0; }
EXPORT int ncclRecv(void) { return 0; }
#ifdef STUB_LAST_ERROR
EXPORT const char *ncclGetLastError(void *comm) {
    (void)comm;
    return "stub last error";
}
#endif
