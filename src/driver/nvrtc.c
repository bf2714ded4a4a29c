/* NVRTC through dlopen, from where users have it: PTXKIT_NVRTC_PATH alone
 * when set; else the loader's search path (LD_LIBRARY_PATH, ld.so.cache),
 * $CUDA_HOME and $CUDA_PATH, the pip wheels (nvidia-cuda-nvrtc) of the
 * Python running this process or of $VIRTUAL_ENV / $CONDA_PREFIX, and
 * /usr/local/cuda; CUDA 13's library before 12's at each place. */
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/driver.h"
#include "runtime/files.h" /* libc only: below every layer, this one included */

static nvrtc_library nvrtc;
static bool nvrtc_ok;
static char nvrtc_why[1024];
static char nvrtc_origin[PATH_MAX + 128];
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;

static void add(nvrtc_candidates *c, const char *how, const char *fmt, const char *dir, const char *name) {
    if (c->count == NVRTC_MAX_CANDIDATES) return;
    if ((size_t)snprintf(c->path[c->count], sizeof c->path[0], fmt, dir, name) >= sizeof c->path[0]) return;
    c->how[c->count++] = how;
}

/* Both versions' names in a toolkit directory (lib64, or the targets tree
 * that some installs use alone). */
static void add_toolkit(nvrtc_candidates *c, const char *how, const char *root) {
    if (!root || root[0] != '/') return;
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12"};
    for (int i = 0; i < 2; i++) {
        add(c, how, "%s/lib64/%s", root, names[i]);
        add(c, how, "%s/targets/x86_64-linux/lib/%s", root, names[i]);
    }
}

/* The pip wheels under a Python prefix: CUDA 13's toolkit wheels put NVRTC
 * in nvidia/cu13/lib, CUDA 12's nvidia-cuda-nvrtc-cu12 in
 * nvidia/cuda_nvrtc/lib, in site-packages of any python3.x. */
static void add_wheels(nvrtc_candidates *c, const char *how, const char *prefix) {
    if (!prefix || prefix[0] != '/') return;
    static const char *const patterns[] = {"%s/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
                                           "%s/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"};
    for (int i = 0; i < 2; i++) {
        char pattern[PATH_MAX];
        if ((size_t)snprintf(pattern, sizeof pattern, patterns[i], prefix) >= sizeof pattern) continue;
        glob_t g;
        if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0)
            for (size_t k = 0; k < g.gl_pathc; k++) add(c, how, "%s%s", g.gl_pathv[k], "");
        globfree(&g);
    }
}

/* The prefix of the Python interpreter running this process, if it is one
 * (a C library loaded through ctypes or an extension): <prefix>/bin/python3.x. */
bool nvrtc_python_prefix(char *buf, size_t size) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = 0;
    char *name = strrchr(exe, '/');
    if (!name || strncmp(name + 1, "python", 6) != 0) return false;
    *name = 0;
    char *bin = strrchr(exe, '/');
    if (!bin || strcmp(bin + 1, "bin") != 0) return false;
    *bin = 0;
    return (size_t)snprintf(buf, size, "%s", exe[0] ? exe : "/") < size;
}

void nvrtc_search_list(nvrtc_candidates *c) {
    c->count = 0;
    const char *override = getenv("PTXKIT_NVRTC_PATH");
    if (override && *override) {
        add(c, "PTXKIT_NVRTC_PATH", "%s%s", override, "");
        return;
    }
    add(c, "the loader's search path", "%s%s", "libnvrtc.so.13", "");
    add(c, "the loader's search path", "%s%s", "libnvrtc.so.12", "");
    add_toolkit(c, "CUDA_HOME", getenv("CUDA_HOME"));
    add_toolkit(c, "CUDA_PATH", getenv("CUDA_PATH"));
    char prefix[PATH_MAX];
    if (nvrtc_python_prefix(prefix, sizeof prefix)) add_wheels(c, "the running Python's pip packages", prefix);
    add_wheels(c, "VIRTUAL_ENV's pip packages", getenv("VIRTUAL_ENV"));
    add_wheels(c, "CONDA_PREFIX's pip packages", getenv("CONDA_PREFIX"));
    add_toolkit(c, "/usr/local/cuda", "/usr/local/cuda");
}

static bool nvrtc_bind(void *lib) {
#define BIND(name) if (!(*(void **)&nvrtc.name = dlsym(lib, #name))) return false;
    NVRTC_ENTRIES(BIND)
#undef BIND
    return nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor) == NVRTC_SUCCESS;
}

static void nvrtc_load(void) {
    static nvrtc_candidates c; /* 128 KiB: off the stack, filled once */
    nvrtc_search_list(&c);
    size_t used = (size_t)snprintf(nvrtc_why, sizeof nvrtc_why, "NVRTC not found (tried");
    for (int i = 0; i < c.count; i++) {
        const char *path = c.path[i];
        /* the same file reached twice (CUDA_HOME=/usr/local/cuda) is tried once */
        bool seen = false;
        for (int k = 0; k < i && !seen; k++) seen = strcmp(c.path[k], path) == 0;
        if (seen) continue;
        /* dlopen opens a path blocking, inside pthread_once: a FIFO there
         * hung every thread's first NVRTC use; only a regular file is handed
         * over (a bare name is the loader's search). A missing file is
         * passed over without a dlopen. */
        struct stat st;
        bool exists = !strchr(path, '/') || stat(path, &st) == 0;
        if (strchr(path, '/') && exists && !files_is_regular(path)) {
            if (used < sizeof nvrtc_why)
                used += (size_t)snprintf(nvrtc_why + used, sizeof nvrtc_why - used, " %s (not a regular file)", path);
            continue;
        }
        /* lazy binding: resolving all of NVRTC's symbols up front costs ~90 ms */
        void *lib = exists ? dlopen(path, RTLD_LAZY | RTLD_LOCAL) : NULL;
        if (lib && nvrtc_bind(lib)) {
            Dl_info info;
            const char *file = dladdr(*(void **)&nvrtc.nvrtcVersion, &info) && info.dli_fname ? info.dli_fname : path;
            snprintf(nvrtc_origin, sizeof nvrtc_origin, "%s (found through %s)", file, c.how[i]);
            nvrtc_ok = true;
            return;
        }
        if (lib) dlclose(lib);
        /* the list names where it looked, not every missing file */
        bool named = exists || strcmp(c.how[i], "PTXKIT_NVRTC_PATH") == 0;
        if (used < sizeof nvrtc_why && (named || i == 0 || c.how[i] != c.how[i - 1]))
            used += (size_t)snprintf(nvrtc_why + used, sizeof nvrtc_why - used, " %s%s", named ? path : c.how[i],
                                     exists ? "" : named ? " (missing)" : "");
    }
    if (used < sizeof nvrtc_why)
        snprintf(nvrtc_why + used, sizeof nvrtc_why - used,
                 "): the JIT path is unavailable; set PTXKIT_NVRTC_PATH to libnvrtc.so.13 or .so.12, or CUDA_HOME");
}

const char *nvrtc_loaded_from(void) {
    pthread_once(&nvrtc_once, nvrtc_load);
    return nvrtc_ok ? nvrtc_origin : "";
}

const nvrtc_library *nvrtc_get(char *why, size_t why_size) {
    pthread_once(&nvrtc_once, nvrtc_load);
    if (!nvrtc_ok) {
        if (why && why_size) snprintf(why, why_size, "%s", nvrtc_why);
        return NULL;
    }
    return &nvrtc;
}
