/* NVRTC's automatic precompiled headers (pch.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/pch.h"

/* nvrtcGetPCHCreateStatus's answers (nvrtc.h of 12.8; older headers lack them) */
enum { PCH_CREATED = 0, PCH_NOT_ATTEMPTED = 13, PCH_HEAP_EXHAUSTED = 14, PCH_CREATE_FAILED = 15 };
typedef nvrtcResult (*pch_status_fn)(nvrtcProgram);

static pthread_mutex_t pch_lock = PTHREAD_MUTEX_INITIALIZER; /* held by the one compile using PCH */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static int mode = -1;
static bool refused; /* NVRTC rejected the options once */
static text_hash owners[PCH_MAX_CREATED];
static int created;
static pch_status_fn status_of;
static bool status_looked_up;

/* The optional entry point, from the NVRTC library already loaded (12.8+). */
static pch_status_fn status_entry(const nvrtc_library *rtc) {
    if (status_looked_up) return status_of;
    status_looked_up = true;
    Dl_info info;
    void *symbol;
    memcpy(&symbol, &rtc->nvrtcVersion, sizeof symbol);
    if (!dladdr(symbol, &info) || !info.dli_fname) return NULL;
    void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (!lib) return NULL;
    void *found = dlsym(lib, "nvrtcGetPCHCreateStatus");
    memcpy(&status_of, &found, sizeof status_of);
    dlclose(lib); /* NOLOAD took a reference; NVRTC itself stays loaded */
    return status_of;
}

static bool available_locked(const nvrtc_library *rtc) {
    if (refused || mode == 0) return false;
    if (mode < 0) {
        const char *env = getenv("PTXKIT_PCH");
        if (env && strcmp(env, "off") == 0) return false;
    }
    if (rtc->major < 12 || (rtc->major == 12 && rtc->minor < 8)) return false;
    return status_entry(rtc) != NULL;
}

bool pch_available(const nvrtc_library *rtc) {
    pthread_mutex_lock(&state_lock);
    bool on = rtc && available_locked(rtc);
    pthread_mutex_unlock(&state_lock);
    return on;
}

int pch_created_count(void) {
    pthread_mutex_lock(&state_lock);
    int n = created;
    pthread_mutex_unlock(&state_lock);
    return n;
}

void pch_set_mode(int m) {
    pthread_mutex_lock(&state_lock);
    mode = m < 0 ? -1 : m > 0;
    pthread_mutex_unlock(&state_lock);
}

static bool owns(text_hash domain) {
    for (int i = 0; i < created; i++)
        if (owners[i].lo == domain.lo && owners[i].hi == domain.hi) return true;
    return false;
}

/* Every program (PTXKIT_PCH=on, or the benchmark's switch), not only those
 * reading headers from disk. */
static bool for_every_program(void) {
    if (mode >= 0) return mode == 1;
    const char *env = getenv("PTXKIT_PCH");
    return env && strcmp(env, "on") == 0;
}

bool pch_before(const nvrtc_library *rtc, text_hash domain, bool prelude_on_disk, char *domain_option, size_t size,
                const char *options[PCH_OPTION_COUNT]) {
    if (!pch_available(rtc) || pthread_mutex_trylock(&pch_lock) != 0) return false;
    pthread_mutex_lock(&state_lock);
    bool use = (prelude_on_disk || for_every_program()) && (owns(domain) || created < PCH_MAX_CREATED);
    pthread_mutex_unlock(&state_lock);
    if (!use) {
        pthread_mutex_unlock(&pch_lock);
        return false;
    }
    snprintf(domain_option, size, "-D__PTXKIT_PCH_DOMAIN_%016llx%016llx", (unsigned long long)domain.hi,
             (unsigned long long)domain.lo);
    options[0] = "-pch";
    /* NVRTC's notes about preludes made, used or unusable stay out of the log */
    options[1] = "-pch-messages=false";
    options[2] = "-pch-verbose=false";
    options[3] = domain_option;
    return true;
}

void pch_after(const nvrtc_library *rtc, nvrtcProgram prog, text_hash domain, nvrtcResult compile_result) {
    pthread_mutex_lock(&state_lock);
    if (compile_result == NVRTC_ERROR_INVALID_OPTION) {
        refused = true;
    } else if (status_entry(rtc) && prog && (int)status_entry(rtc)(prog) == PCH_CREATED && !owns(domain) &&
               created < PCH_MAX_CREATED) {
        owners[created++] = domain;
    }
    pthread_mutex_unlock(&state_lock);
    pthread_mutex_unlock(&pch_lock);
}
