/* libcuda.so.1 through dlopen and cuGetProcAddress. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "driver/driver.h"

/* The CUDA version whose entry-point signatures the table in driver.h uses:
 * cuGetProcAddress returns, for each name, the variant current at 12.0
 * (cuMemAlloc_v2, cuCtxPopCurrent_v2, ...), whatever newer driver is
 * installed, so the pointers match the PFN_ types driver.h names. */
#define DRIVER_API_VERSION 12000

typedef PFN_cuGetProcAddress_v12000 get_proc_v2_fn;
typedef PFN_cuGetProcAddress_v11030 get_proc_v1_fn;

static cuda_driver driver;
static ptxkit_status driver_status = PTXKIT_ERROR_NO_DRIVER;
static char driver_why[512];
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

/* An entry newer than DRIVER_API_VERSION is asked for at its own version:
 * cuGetProcAddress finds nothing at an older one. */
#define ENTRY(name, version) {#name, (void **)&driver.name, version > DRIVER_API_VERSION ? version : DRIVER_API_VERSION},
static const struct {
    const char *name;
    void **slot;
    int version;
} driver_entries[] = {DRIVER_REQUIRED_ENTRIES(ENTRY)}, optional_entries[] = {DRIVER_OPTIONAL_ENTRIES(ENTRY)};
#undef ENTRY

static void driver_fail(ptxkit_status st, const char *fmt, const char *a, const char *b) {
    driver_status = st;
    snprintf(driver_why, sizeof driver_why, fmt, a, b);
}

static void driver_load(void) {
    /* Never plain libcuda.so: where the toolkit is installed that name can be
     * the link stub, which fails every call with CUDA_ERROR_STUB_LIBRARY. */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        driver_fail(PTXKIT_ERROR_NO_DRIVER, "NVIDIA driver library libcuda.so.1 not found (%s)%s", e ? e : "dlopen failed", "");
        return;
    }
    get_proc_v2_fn get_v2 = (get_proc_v2_fn)dlsym(lib, "cuGetProcAddress_v2");
    get_proc_v1_fn get_v1 = get_v2 ? NULL : (get_proc_v1_fn)dlsym(lib, "cuGetProcAddress");
    if (!get_v2 && !get_v1) {
        driver_fail(PTXKIT_ERROR_NO_DRIVER, "libcuda.so.1 has no cuGetProcAddress: driver older than CUDA 11.3%s%s", "", "");
        return;
    }
    for (size_t i = 0; i < sizeof driver_entries / sizeof driver_entries[0]; i++) {
        CUresult r;
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
        if (get_v2)
            r = get_v2(driver_entries[i].name, driver_entries[i].slot, driver_entries[i].version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
        else
            r = get_v1(driver_entries[i].name, driver_entries[i].slot, driver_entries[i].version, CU_GET_PROC_ADDRESS_DEFAULT);
        if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || !*driver_entries[i].slot) {
            driver_fail(PTXKIT_ERROR_NO_DRIVER, "libcuda.so.1 lacks %s (CUDA %s API): driver too old", driver_entries[i].name, "12.0");
            return;
        }
    }
    for (size_t i = 0; i < sizeof optional_entries / sizeof optional_entries[0]; i++) {
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
        CUresult r = get_v2 ? get_v2(optional_entries[i].name, optional_entries[i].slot, optional_entries[i].version,
                                     CU_GET_PROC_ADDRESS_DEFAULT, &found)
                            : get_v1(optional_entries[i].name, optional_entries[i].slot, optional_entries[i].version,
                                     CU_GET_PROC_ADDRESS_DEFAULT);
        if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS) *optional_entries[i].slot = NULL;
    }
    CUresult r = driver.cuInit(0);
    if (r == CUDA_ERROR_STUB_LIBRARY) {
        driver_fail(PTXKIT_ERROR_STUB_DRIVER,
                    "libcuda.so.1 is the CUDA toolkit's link stub (CUDA_ERROR_STUB_LIBRARY), not the NVIDIA driver: "
                    "remove the stubs directory from the library path%s%s", "", "");
        return;
    }
    if (r != CUDA_SUCCESS) {
        const char *name = "unknown";
        driver.cuGetErrorName(r, &name);
        driver_fail(r == CUDA_ERROR_NO_DEVICE ? PTXKIT_ERROR_NO_DEVICE : PTXKIT_ERROR_NO_DRIVER,
                    "cuInit failed: %s%s", name, r == CUDA_ERROR_NO_DEVICE ? " (no CUDA-capable GPU)" : "");
        return;
    }
    driver.cuDriverGetVersion(&driver.version);
    driver_status = PTXKIT_SUCCESS;
}

const cuda_driver *driver_get(ptxkit_status *status, char *why, size_t why_size) {
    pthread_once(&driver_once, driver_load);
    if (status) *status = driver_status;
    if (driver_status != PTXKIT_SUCCESS) {
        if (why && why_size) snprintf(why, why_size, "%s", driver_why);
        return NULL;
    }
    return &driver;
}

void driver_error_text(const cuda_driver *cu, CUresult r, char *buf, size_t size) {
    const char *name = NULL, *text = NULL;
    if (cu) {
        cu->cuGetErrorName(r, &name);
        cu->cuGetErrorString(r, &text);
    }
    snprintf(buf, size, "%s (%d): %s", name ? name : "CUDA_ERROR", (int)r, text ? text : "unknown error");
}
