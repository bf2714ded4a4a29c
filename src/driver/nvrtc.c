/* NVRTC through dlopen: PTXKIT_NVRTC_PATH, then CUDA 13's and 12's names. */
#include <dlfcn.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "driver/driver.h"
#include "runtime/files.h" /* libc only: below every layer, this one included */

static nvrtc_library nvrtc;
static bool nvrtc_ok;
static char nvrtc_why[768];
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;

static const char *const nvrtc_names[] = {
    "libnvrtc.so.13", "libnvrtc.so.12",
    "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
};

static bool nvrtc_bind(void *lib) {
#define BIND(name) if (!(*(void **)&nvrtc.name = dlsym(lib, #name))) return false;
    NVRTC_ENTRIES(BIND)
#undef BIND
    return nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor) == NVRTC_SUCCESS;
}

static void nvrtc_load(void) {
    const char *override = getenv("PTXKIT_NVRTC_PATH");
    size_t used = 0;
    used += (size_t)snprintf(nvrtc_why, sizeof nvrtc_why, "NVRTC not found (tried");
    const char *const *names = nvrtc_names;
    size_t count = sizeof nvrtc_names / sizeof nvrtc_names[0];
    const char *one[1];
    if (override && *override) {
        one[0] = override;
        names = one;
        count = 1;
    }
    for (size_t i = 0; i < count; i++) {
        /* dlopen opens a path blocking, inside pthread_once: a FIFO there
         * hung every thread's first NVRTC use; only a regular file is handed
         * over (a bare name is the loader's search) */
        if (strchr(names[i], '/') && !files_is_regular(names[i])) {
            struct stat st;
            bool exists = stat(names[i], &st) == 0;
            if (used < sizeof nvrtc_why)
                used += (size_t)snprintf(nvrtc_why + used, sizeof nvrtc_why - used, " %s%s", names[i],
                                         exists ? " (not a regular file)" : "");
            continue;
        }
        /* lazy binding: resolving all of NVRTC's symbols up front costs ~90 ms */
        void *lib = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
        if (lib && nvrtc_bind(lib)) {
            nvrtc_ok = true;
            return;
        }
        if (lib) dlclose(lib);
        if (used < sizeof nvrtc_why)
            used += (size_t)snprintf(nvrtc_why + used, sizeof nvrtc_why - used, " %s", names[i]);
    }
    if (used < sizeof nvrtc_why)
        snprintf(nvrtc_why + used, sizeof nvrtc_why - used, "%s): the JIT path is unavailable; set PTXKIT_NVRTC_PATH",
                 override ? " from PTXKIT_NVRTC_PATH" : "");
}

const nvrtc_library *nvrtc_get(char *why, size_t why_size) {
    pthread_once(&nvrtc_once, nvrtc_load);
    if (!nvrtc_ok) {
        if (why && why_size) snprintf(why, why_size, "%s", nvrtc_why);
        return NULL;
    }
    return &nvrtc;
}
