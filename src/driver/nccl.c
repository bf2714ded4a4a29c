/* NCCL through dlopen: the version first (ncclGetVersion, refused below
 * NCCL_MIN_VERSION), then the symbols that version has. Missing NCCL only
 * disables the multi-GPU calls (UNSUPPORTED with the reason). */
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "driver/nccl.h"
#include "runtime/files.h" /* libc only: below every layer, this one included */

void nccl_version_text(int code, char *buf, size_t size) {
    if (!buf || !size) return;
    if (code >= 10000)
        snprintf(buf, size, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
    else
        snprintf(buf, size, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

void nccl_close(nccl_library *lib) {
    if (lib && lib->handle) dlclose(lib->handle);
    if (lib) memset(lib, 0, sizeof *lib);
}

bool nccl_open_at(const char *path, const char *how, nccl_library *lib, char *why, size_t why_size) {
    char scratch[8];
    if (!why || !why_size) why = scratch, why_size = sizeof scratch;
    memset(lib, 0, sizeof *lib);
    /* dlopen blocks on a FIFO: only a regular file is handed over (a bare
     * name is the loader's search) */
    if (strchr(path, '/')) {
        struct stat st;
        if (stat(path, &st) != 0) return snprintf(why, why_size, "%s (missing)", path), false;
        if (!files_is_regular(path)) return snprintf(why, why_size, "%s (not a regular file)", path), false;
    }
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror();
        snprintf(why, why_size, "%s (%s)", path, e ? e : "dlopen failed");
        return false;
    }
    lib->handle = handle;
    *(void **)&lib->ncclGetVersion = dlsym(handle, "ncclGetVersion");
    if (!lib->ncclGetVersion) {
        snprintf(why, why_size, "%s (no ncclGetVersion: not NCCL)", path);
        nccl_close(lib);
        return false;
    }
    int version = 0;
    if (lib->ncclGetVersion(&version) != NCCL_SUCCESS || version <= 0) {
        snprintf(why, why_size, "%s (ncclGetVersion failed)", path);
        nccl_close(lib);
        return false;
    }
    if (version < NCCL_MIN_VERSION) {
        char have[32], need[32];
        nccl_version_text(version, have, sizeof have);
        nccl_version_text(NCCL_MIN_VERSION, need, sizeof need);
        snprintf(why, why_size, "%s (NCCL %s, older than the %s ptxkit needs)", path, have, need);
        nccl_close(lib);
        return false;
    }
    lib->version = version;
#define BIND(name, since, ret, params)                                                         \
    if (!(*(void **)&lib->name = dlsym(handle, #name))) {                                      \
        snprintf(why, why_size, "%s (NCCL without %s)", path, #name);                          \
        nccl_close(lib);                                                                       \
        return false;                                                                          \
    }
    NCCL_REQUIRED_ENTRIES(BIND)
#undef BIND
    /* a symbol newer than the library's version is not asked for: a build
     * that has the name with another meaning cannot be called by mistake */
#define BIND_OPTIONAL(name, since, ret, params) \
    if (version >= (since)) *(void **)&lib->name = dlsym(handle, #name);
    NCCL_OPTIONAL_ENTRIES(BIND_OPTIONAL)
#undef BIND_OPTIONAL
    Dl_info info;
    const char *file = dladdr(*(void **)&lib->ncclGetVersion, &info) && info.dli_fname ? info.dli_fname : path;
    snprintf(lib->origin, sizeof lib->origin, "%s (found through %s)", file, how);
    return true;
}

/* ---- the process's NCCL ---- */

enum { NCCL_MAX_CANDIDATES = 16 };
typedef struct nccl_candidates {
    char path[NCCL_MAX_CANDIDATES][PATH_MAX];
    const char *how[NCCL_MAX_CANDIDATES];
    int count;
} nccl_candidates;

static void add(nccl_candidates *c, const char *how, const char *path) {
    if (c->count == NCCL_MAX_CANDIDATES || !path) return;
    if ((size_t)snprintf(c->path[c->count], sizeof c->path[0], "%s", path) >= sizeof c->path[0]) return;
    c->how[c->count++] = how;
}

static void add_dir(nccl_candidates *c, const char *how, const char *root, const char *sub) {
    char path[PATH_MAX];
    if (!root || root[0] != '/') return;
    if ((size_t)snprintf(path, sizeof path, "%s/%s/libnccl.so.2", root, sub) < sizeof path) add(c, how, path);
}

/* nvidia-nccl-cu12 / -cu13 put it in site-packages/nvidia/nccl/lib */
static void add_wheel(nccl_candidates *c, const char *how, const char *prefix) {
    char pattern[PATH_MAX];
    if (!prefix || prefix[0] != '/') return;
    if ((size_t)snprintf(pattern, sizeof pattern, "%s/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
                         prefix) >= sizeof pattern)
        return;
    glob_t g;
    if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0)
        for (size_t k = 0; k < g.gl_pathc; k++) add(c, how, g.gl_pathv[k]);
    globfree(&g);
}

static void nccl_search_list(nccl_candidates *c) {
    c->count = 0;
    const char *override = getenv("PTXKIT_NCCL_PATH");
    if (override && *override) {
        add(c, "PTXKIT_NCCL_PATH", override);
        return;
    }
    add(c, "the loader's search path", "libnccl.so.2");
    add_dir(c, "CUDA_HOME", getenv("CUDA_HOME"), "lib64");
    add_wheel(c, "VIRTUAL_ENV's pip packages", getenv("VIRTUAL_ENV"));
    add_wheel(c, "CONDA_PREFIX's pip packages", getenv("CONDA_PREFIX"));
    add_dir(c, "/usr/local/cuda", "/usr/local/cuda", "lib64");
}

static nccl_library nccl;
static bool nccl_ok;
static char nccl_why[2048];
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;

static void nccl_load(void) {
    static nccl_candidates c; /* off the stack, filled once */
    nccl_search_list(&c);
    size_t used = (size_t)snprintf(nccl_why, sizeof nccl_why, "NCCL not loaded (tried");
    for (int i = 0; i < c.count; i++) {
        bool seen = false;
        for (int k = 0; k < i && !seen; k++) seen = strcmp(c.path[k], c.path[i]) == 0;
        if (seen) continue;
        char why[768];
        if (nccl_open_at(c.path[i], c.how[i], &nccl, why, sizeof why)) {
            nccl_ok = true;
            return;
        }
        if (used < sizeof nccl_why) used += (size_t)snprintf(nccl_why + used, sizeof nccl_why - used, " %s;", why);
    }
    if (used < sizeof nccl_why)
        snprintf(nccl_why + used, sizeof nccl_why - used,
                 "): the multi-GPU calls are unavailable; set PTXKIT_NCCL_PATH to libnccl.so.2 (2.12 or newer)");
}

const nccl_library *nccl_get(char *why, size_t why_size) {
    pthread_once(&nccl_once, nccl_load);
    if (!nccl_ok) {
        if (why && why_size) snprintf(why, why_size, "%s", nccl_why);
        return NULL;
    }
    return &nccl;
}
