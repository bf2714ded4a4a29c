/* The driver's graph calls, straight from libcuda (not through ptxkit), for
 * GPU tests that capture ptxkit's calls the way an application with its own
 * graphs would: one copy, included by each such test. */
#ifndef PTXKIT_TESTS_RAW_GRAPH_API_H
#define PTXKIT_TESTS_RAW_GRAPH_API_H

#include <dlfcn.h>
#include <stdbool.h>

#include <cuda.h>
#include <cudaTypedefs.h>

static struct {
    PFN_cuStreamBeginCapture_v10010 begin;
    PFN_cuStreamEndCapture_v10000 end;
    PFN_cuGraphInstantiateWithFlags_v11040 instantiate;
    PFN_cuGraphLaunch_v10000 launch;
    PFN_cuGraphExecDestroy_v10000 exec_destroy;
    PFN_cuGraphDestroy_v10000 destroy;
} drv;

static bool load_graph_api(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    PFN_cuGetProcAddress_v12000 get = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
    if (!get) return false;
    struct {
        const char *name;
        void **slot;
        int version;
    } entries[] = {
        {"cuStreamBeginCapture", (void **)&drv.begin, 10010},
        {"cuStreamEndCapture", (void **)&drv.end, 10000},
        {"cuGraphInstantiateWithFlags", (void **)&drv.instantiate, 11040},
        {"cuGraphLaunch", (void **)&drv.launch, 10000},
        {"cuGraphExecDestroy", (void **)&drv.exec_destroy, 10000},
        {"cuGraphDestroy", (void **)&drv.destroy, 10000},
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        CUdriverProcAddressQueryResult found;
        if (get(entries[i].name, entries[i].slot, entries[i].version, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
                CUDA_SUCCESS ||
            found != CU_GET_PROC_ADDRESS_SUCCESS || !*entries[i].slot)
            return false;
    }
    return true;
}

#endif
