/* See cuda_direct.h. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "cuda_direct.h"

typedef CUresult (*get_proc_fn)(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                CUdriverProcAddressQueryResult *status);

static cuda_direct table;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void resolve(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    get_proc_fn get = lib ? (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (!get) {
        snprintf(failure, sizeof failure, "libcuda.so.1 or its cuGetProcAddress_v2 is missing");
        return;
    }
    static const char *const names[] = {"cuLaunchKernel",      "cuStreamSynchronize", "cuGetErrorName",
                                        "cuInit",              "cuDeviceGet",         "cuDevicePrimaryCtxRetain",
                                        "cuCtxSetCurrent",     "cuMemAlloc",          "cuModuleLoad",
                                        "cuModuleGetFunction", "cuCtxSynchronize",    "cuMemcpyDtoH"};
    void **slots[] = {(void **)&table.launch_kernel,      (void **)&table.stream_synchronize,
                      (void **)&table.error_name,         (void **)&table.init,
                      (void **)&table.device_get,         (void **)&table.primary_ctx_retain,
                      (void **)&table.ctx_set_current,    (void **)&table.mem_alloc,
                      (void **)&table.module_load,        (void **)&table.module_get_function,
                      (void **)&table.ctx_synchronize,    (void **)&table.memcpy_dtoh};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CUdriverProcAddressQueryResult found;
        if (get(names[i], slots[i], 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS || !*slots[i]) {
            snprintf(failure, sizeof failure, "the driver has no %s", names[i]);
            return;
        }
    }
}

const cuda_direct *cuda_direct_get(char *why, size_t why_size) {
    pthread_once(&once, resolve);
    if (failure[0]) {
        if (why && why_size) snprintf(why, why_size, "%s", failure);
        return NULL;
    }
    return &table;
}
