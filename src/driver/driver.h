/* The only code that knows shared-object names and symbol versions.
 * libcuda.so.1 and NVRTC are opened with dlopen; driver entry points come from
 * cuGetProcAddress at the CUDA version whose signatures this table uses. */
#ifndef PTXKIT_DRIVER_H
#define PTXKIT_DRIVER_H

#include <stdbool.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <nvrtc.h>

#include "ptxkit.h"

/* The driver entry points ptxkit uses, each with the version of its
 * signature that cuGetProcAddress returns at DRIVER_API_VERSION (12000):
 * the newest PFN_<name>_v<version> of cudaTypedefs.h not above 12000.
 * cuda.h may map a name to a newer variant (CUDA 13's cuCtxSynchronize_v2);
 * the table keeps 12.0's, whatever toolkit or driver is installed. */
#define DRIVER_REQUIRED_ENTRIES(X)                                              \
    X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorName, 6000)        \
    X(cuGetErrorString, 6000) X(cuDeviceGetCount, 2000) X(cuDeviceGet, 2000)  \
    X(cuDeviceGetName, 2000) X(cuDeviceGetAttribute, 2000)                     \
    X(cuDeviceTotalMem, 3020) X(cuDevicePrimaryCtxRetain, 7000)                \
    X(cuDevicePrimaryCtxRelease, 11000) X(cuCtxPushCurrent, 4000)              \
    X(cuCtxPopCurrent, 4000) X(cuCtxGetCurrent, 4000) X(cuCtxGetDevice, 2000)  \
    X(cuCtxSynchronize, 2000) X(cuMemAlloc, 3020) X(cuMemFree, 3020)           \
    X(cuMemAllocHost, 3020) X(cuMemFreeHost, 2000) X(cuMemGetInfo, 3020)       \
    X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020) X(cuMemcpyDtoD, 3020)          \
    X(cuMemcpyHtoDAsync, 3020) X(cuMemcpyDtoHAsync, 3020)                      \
    X(cuMemcpyDtoDAsync, 3020) X(cuMemsetD8Async, 3020)                        \
    X(cuMemsetD32Async, 3020) X(cuStreamCreate, 2000)                          \
    X(cuStreamDestroy, 4000) X(cuStreamSynchronize, 2000)                      \
    X(cuStreamSetAttribute, 11000) X(cuStreamWaitEvent, 3020)                  \
    X(cuStreamGetCtx, 9020)                                                    \
    X(cuEventCreate, 2000) X(cuEventDestroy, 4000) X(cuEventRecord, 2000)      \
    X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 2000)                    \
    X(cuEventQuery, 2000)                                                      \
    X(cuModuleLoadData, 2000) X(cuModuleLoadDataEx, 2010)                      \
    X(cuModuleUnload, 2000)                                                    \
    X(cuModuleGetFunction, 2000) X(cuFuncGetAttribute, 2020)                   \
    X(cuFuncSetAttribute, 9000) X(cuLaunchKernel, 4000)                        \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) X(cuCtxSetLimit, 3010) \
    X(cuOccupancyMaxPotentialBlockSize, 6050) X(cuModuleGetGlobal, 3020)
/* Entry points a feature needs, not the library: NULL where the driver
 * lacks them, and the feature answers UNSUPPORTED. */
#define DRIVER_OPTIONAL_ENTRIES(X)                                             \
    X(cuLaunchKernelEx, 11060) X(cuCtxResetPersistingL2Cache, 11000)           \
    X(cuCtxGetLimit, 3010) X(cuDevicePrimaryCtxReset, 11000)                   \
    X(cuStreamGetAttribute, 11000) X(cuStreamIsCapturing, 10000)              \
    X(cuThreadExchangeStreamCaptureMode, 10010) X(cuFuncGetParamInfo, 12040)  \
    X(cuStreamQuery, 2000) X(cuStreamCreateWithPriority, 5050)                \
    X(cuCtxGetStreamPriorityRange, 5050) X(cuStreamGetPriority, 5050)          \
    X(cuLaunchHostFunc, 10000) X(cuMemHostAlloc, 2020)                         \
    X(cuMemHostRegister, 6050) X(cuMemHostUnregister, 4000)                    \
    X(cuMemHostGetDevicePointer, 3020) X(cuStreamBeginCapture, 10010)          \
    X(cuStreamEndCapture, 10000) X(cuGraphInstantiateWithFlags, 11040)         \
    X(cuGraphLaunch, 10000) X(cuGraphExecUpdate, 12000)                        \
    X(cuGraphExecDestroy, 10000) X(cuGraphDestroy, 10000)                      \
    X(cuGraphGetNodes, 10000) X(cuPointerGetAttributes, 7000)                 \
    X(cuTensorMapEncodeTiled, 12000)

/* Members keep the API's names; cuda.h's macros (cuMemAlloc -> cuMemAlloc_v2)
 * rename declaration and uses alike. */
#define DRIVER_MEMBER(name, version) PFN_##name##_v##version name;
typedef struct cuda_driver {
    int version; /* cuDriverGetVersion */
    DRIVER_REQUIRED_ENTRIES(DRIVER_MEMBER)
    DRIVER_OPTIONAL_ENTRIES(DRIVER_MEMBER)
} cuda_driver;
#undef DRIVER_MEMBER

/* NVRTC's functions have one version each and nvrtc.h declares them: the
 * pointers take their types from those declarations. */
#define NVRTC_ENTRIES(X)                                                        \
    X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcGetNumSupportedArchs)        \
    X(nvrtcGetSupportedArchs) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)    \
    X(nvrtcCompileProgram) X(nvrtcGetPTXSize) X(nvrtcGetPTX)                   \
    X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetProgramLogSize)            \
    X(nvrtcGetProgramLog) X(nvrtcAddNameExpression) X(nvrtcGetLoweredName)

#define NVRTC_MEMBER(name) __typeof__(name) *name;
typedef struct nvrtc_library {
    int major, minor;
    NVRTC_ENTRIES(NVRTC_MEMBER)
} nvrtc_library;
#undef NVRTC_MEMBER

/* Opens libcuda.so.1 once per process and calls cuInit(0). On failure returns
 * NULL and writes a one-line reason (naming what was looked for) to why. */
const cuda_driver *driver_get(ptxkit_status *status, char *why, size_t why_size);

/* Opens NVRTC once per process (nvrtc.c says where it looks). NULL (with a
 * reason naming the places tried) when none loads. */
const nvrtc_library *nvrtc_get(char *why, size_t why_size);
/* The file NVRTC was loaded from and how it was found, "" when it was not. */
const char *nvrtc_loaded_from(void);
/* The places nvrtc_get tries, in order, each with how it was found. */
enum { NVRTC_MAX_CANDIDATES = 32 };
typedef struct nvrtc_candidates {
    char path[NVRTC_MAX_CANDIDATES][4096];
    const char *how[NVRTC_MAX_CANDIDATES];
    int count;
} nvrtc_candidates;
void nvrtc_search_list(nvrtc_candidates *c);
/* The prefix of the Python interpreter running this process, when it is
 * one (its pip packages are among the places NVRTC is looked for). */
bool nvrtc_python_prefix(char *buf, size_t size);

/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory" style text for a CUresult. */
void driver_error_text(const cuda_driver *cu, CUresult r, char *buf, size_t size);

#endif
