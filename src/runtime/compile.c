/* NVRTC compilation of an embedded kernel family. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/compile.h"
#include "runtime/embedded.h"
#include "runtime/files.h"
#include "runtime/status.h"

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Highest architecture NVRTC can emit CUBIN for that is <= arch; 0 if none. */
static int nvrtc_cubin_arch(const nvrtc_library *rtc, int arch, bool *exact) {
    int count = 0, best = 0;
    *exact = false;
    if (rtc->nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0 || count > 256) return arch;
    int archs[256];
    if (rtc->nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS) return arch;
    for (int i = 0; i < count; i++) {
        if (archs[i] == arch) *exact = true;
        if (archs[i] <= arch && archs[i] > best) best = archs[i];
    }
    return best;
}

void compile_output_free(compile_output *out) {
    if (!out) return;
    free(out->image);
    free(out->log);
    free(out->lowered_name);
    for (int i = 0; i < out->lowered_count; i++) free(out->lowered_names[i]);
    free(out->lowered_names);
    memset(out, 0, sizeof *out);
}

/* The embedded headers (embedded_is_header): each by its own name, and the
 * user-facing ones also as "ptxkit/<name>" ("ptxkit_load.cuh" is
 * <ptxkit/load.cuh>). Room for them beside a request's own headers: */
enum { MAX_BUILTIN_HEADERS = 128 };

static int builtin_headers(const char **texts, const char **names, char (*aliases)[64], int room) {
    size_t file_count;
    const embedded_file *files = embedded_all(&file_count);
    int n = 0;
    for (size_t i = 0; i < file_count && n + 2 <= room; i++) {
        if (!embedded_is_header(files[i].name)) continue;
        texts[n] = files[i].text;
        names[n++] = files[i].name;
        if (strncmp(files[i].name, "ptxkit_", 7) == 0) {
            snprintf(aliases[n], sizeof aliases[0], "ptxkit/%s", files[i].name + 7);
            texts[n] = files[i].text;
            names[n] = aliases[n];
            n++;
        }
    }
    return n;
}

/* PTXKIT_DUMP_SOURCE=DIR: the failing source, its headers and the options,
 * so a compile error can be reproduced outside the application. Best effort:
 * a dump that cannot be written changes nothing about the error. */
static void dump_failed_source(const compile_request *req, const char *const *options, int option_count,
                               char *where, size_t where_size) {
    where[0] = 0;
    const char *dir = getenv("PTXKIT_DUMP_SOURCE");
    if (!dir || !*dir || !files_make_dirs(dir)) return;
    char path[4096], base[160];
    /* the program's base name, made safe for a file name */
    const char *name = req->name ? req->name : "program.cu", *slash = strrchr(name, '/');
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : name);
    for (char *c = base; *c; c++)
        if (*c == '/' || *c == '\\') *c = '_';
    snprintf(path, sizeof path, "%s/%s", dir, base);
    const void *parts[1] = {req->source};
    size_t sizes[1] = {strlen(req->source)};
    if (files_write_atomic(path, parts, sizes, 1, false) != 0) return;
    snprintf(where, where_size, "\nsource dumped to %s", path);
    for (int i = 0; i < req->header_count; i++) {
        char hpath[4096 + 200], hname[200];
        snprintf(hname, sizeof hname, "%s", req->header_names[i]);
        for (char *c = hname; *c; c++)
            if (*c == '/') *c = '_';
        snprintf(hpath, sizeof hpath, "%s/%s.header.%s", dir, base, hname);
        parts[0] = req->header_texts[i];
        sizes[0] = strlen(req->header_texts[i]);
        files_write_atomic(hpath, parts, sizes, 1, false);
    }
    char text[8192];
    size_t used = 0;
    for (int i = 0; i < option_count && used < sizeof text; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s\n", options[i]);
    if (req->name_expression && used < sizeof text)
        used += (size_t)snprintf(text + used, sizeof text - used, "# name expression: %s\n", req->name_expression);
    char opath[4096 + 16];
    snprintf(opath, sizeof opath, "%s.options", path);
    parts[0] = text;
    sizes[0] = used < sizeof text ? used : sizeof text - 1;
    files_write_atomic(opath, parts, sizes, 1, false);
}

/* A name expression that names no kernel makes NVRTC fail with errors in
 * its own "__nv_name_map" pseudo-file and nowhere else. An error in any of
 * the program's files is a compile error, whatever words it contains (the
 * entry's name is often part of the file name or of the line echoed). */
static bool only_name_map_errors(const char *log) {
    bool any = false;
    for (const char *line = log; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        /* error lines start at column 0 ("FILE(N): error: ...", "Command-line
         * error: ..."); NVRTC indents the source lines it echoes */
        bool error = len && line[0] != ' ' && memmem(line, len, "error: ", 7);
        if (error) {
            any = true;
            if (strncmp(line, "__nv_name_map(", 14) != 0) return false;
        }
        line = end ? end + 1 : NULL;
    }
    return any;
}

/* The lowered name of each of req's name_expressions (a module of several
 * kernels and variables). */
static ptxkit_status lowered_names_of(ptxkit_context *ctx, const nvrtc_library *rtc, nvrtcProgram prog,
                                      const compile_request *req, compile_output *out) {
    out->lowered_names = calloc((size_t)req->name_expression_count, sizeof *out->lowered_names);
    if (!out->lowered_names) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
    out->lowered_count = req->name_expression_count;
    for (int i = 0; i < req->name_expression_count; i++) {
        const char *lowered = NULL;
        nvrtcResult r = rtc->nvrtcGetLoweredName(prog, req->name_expressions[i], &lowered);
        if (r != NVRTC_SUCCESS || !lowered)
            return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "%s: the name expression '%s' names no kernel or variable: %s",
                                req->name, req->name_expressions[i], rtc->nvrtcGetErrorString(r));
        if ((out->lowered_names[i] = strdup(lowered)) == NULL)
            return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
    }
    return PTXKIT_SUCCESS;
}

static ptxkit_status compile_prepared(ptxkit_context *ctx, const nvrtc_library *rtc, const compile_request *req,
                                     int arch, bool want_ptx, compile_output *out, const char **header_text,
                                     const char **header_names, int headers) {
    ptxkit_status st = PTXKIT_SUCCESS;
    /* sm_90a and the like: that architecture exactly, never a lower one */
    bool specific = (arch & PTXKIT_ARCH_SPECIFIC) != 0, exact = false;
    arch &= ~PTXKIT_ARCH_SPECIFIC;
    int target = nvrtc_cubin_arch(rtc, arch, &exact);
    bool cubin = !want_ptx && exact;
    if (!target) return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "compile: NVRTC %d.%d supports no architecture <= sm_%d",
                                     rtc->major, rtc->minor, arch);
    if (specific && (!exact || arch < 90))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "compile: NVRTC %d.%d has no sm_%da (architecture-specific "
                            "features exist from sm_90 on, for architectures NVRTC supports)", rtc->major, rtc->minor, arch);

    char arch_option[48];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s_%d%s", cubin ? "sm" : "compute", cubin ? arch : target,
             specific ? "a" : "");
    const char *arch_name = strchr(arch_option, '=') + 1;
    int option_room = 4 + req->define_count + req->option_count + req->include_dir_count + PCH_OPTION_COUNT;
    const char **options = calloc((size_t)option_room, sizeof *options);
    char **define_options = calloc((size_t)(req->define_count ? req->define_count : 1), sizeof *define_options);
    char **dir_options = calloc((size_t)req->include_dir_count + 1, sizeof *dir_options);
    if (!options || !define_options || !dir_options) {
        free(options);
        free(define_options);
        free(dir_options);
        return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
    }
    int n = 0;
    options[n++] = arch_option;
    options[n++] = "--std=c++17";
    options[n++] = "-default-device";
    /* Headers come from the request and its include directories only:
     * NVRTC would otherwise also read files beside the program's name or in
     * the working directory, which the header scan does not model (a
     * program read from a file names its directory as the first -I). */
    if (req->include_dir_count == 0) options[n++] = "-no-source-include";
    for (int i = 0; i < req->include_dir_count && st == PTXKIT_SUCCESS; i++) {
        size_t len = req->include_dirs[i] ? strlen(req->include_dirs[i]) : 0;
        if ((dir_options[i] = malloc(len + 3)) == NULL) {
            st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
        } else {
            snprintf(dir_options[i], len + 3, "-I%s", req->include_dirs[i] ? req->include_dirs[i] : "");
            options[n++] = dir_options[i];
        }
    }
    for (int i = 0; i < req->define_count && st == PTXKIT_SUCCESS; i++) {
        size_t len = req->defines[i] ? strlen(req->defines[i]) : 0;
        if (!len || len > 4096 || req->defines[i][0] == '=' || strchr(req->defines[i], '\n')) {
            st = record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "compile: define #%d is not NAME or NAME=VALUE", i);
        } else if ((define_options[i] = malloc(len + 3)) == NULL) {
            st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
        } else {
            snprintf(define_options[i], len + 3, "-D%s", req->defines[i]);
            options[n++] = define_options[i];
        }
    }
    for (int i = 0; i < req->option_count && st == PTXKIT_SUCCESS; i++) options[n++] = req->options[i];

    /* a repeated header prelude from NVRTC's precompiled headers (pch.h) */
    char pch_domain[64];
    const char *pch_options[PCH_OPTION_COUNT];
    bool pch = st == PTXKIT_SUCCESS && req->pch &&
               pch_before(rtc, req->pch_domain, req->pch_prelude_on_disk, pch_domain, sizeof pch_domain, pch_options);
    for (int i = 0; pch && i < PCH_OPTION_COUNT; i++) options[n++] = pch_options[i];

    double t0 = now_ms();
    nvrtcProgram prog = NULL;
    nvrtcResult r = NVRTC_SUCCESS;
    for (int attempt = 0; attempt < 2 && st == PTXKIT_SUCCESS; attempt++) {
        r = rtc->nvrtcCreateProgram(&prog, req->source, req->name, headers, header_text, header_names);
        if (r != NVRTC_SUCCESS)
            st = record_error(ctx, PTXKIT_ERROR_COMPILE, "nvrtcCreateProgram(%s): %s", req->name, rtc->nvrtcGetErrorString(r));
        if (st == PTXKIT_SUCCESS && req->name_expression && (r = rtc->nvrtcAddNameExpression(prog, req->name_expression)) != NVRTC_SUCCESS)
            st = record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "nvrtcAddNameExpression(%s): %s", req->name_expression,
                              rtc->nvrtcGetErrorString(r));
        for (int i = 0; st == PTXKIT_SUCCESS && i < req->name_expression_count; i++)
            if ((r = rtc->nvrtcAddNameExpression(prog, req->name_expressions[i])) != NVRTC_SUCCESS)
                st = record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "nvrtcAddNameExpression(%s): %s",
                                  req->name_expressions[i], rtc->nvrtcGetErrorString(r));
        if (st != PTXKIT_SUCCESS) break;
        r = rtc->nvrtcCompileProgram(prog, n, options);
        if (!pch) break;
        pch_after(rtc, prog, req->pch_domain, r);
        pch = false;
        if (r != NVRTC_ERROR_INVALID_OPTION) break;
        /* an NVRTC that takes no PCH options after all: once more without */
        rtc->nvrtcDestroyProgram(&prog);
        prog = NULL;
        n -= PCH_OPTION_COUNT;
    }
    if (st == PTXKIT_SUCCESS) {
        size_t log_size = 0;
        if (rtc->nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
            out->log = malloc(log_size);
            if (out->log && rtc->nvrtcGetProgramLog(prog, out->log) != NVRTC_SUCCESS) out->log[0] = 0;
        }
        if (r != NVRTC_SUCCESS) {
            char flat[512] = "", dumped[4200];
            for (int i = 0, used = 0; i < req->define_count && used < (int)sizeof flat - 1; i++)
                used += snprintf(flat + used, sizeof flat - (size_t)used, " -D%s", req->defines[i]);
            dump_failed_source(req, options, n, dumped, sizeof dumped);
            bool missing = (req->name_expression || req->name_expression_count) && out->log && only_name_map_errors(out->log);
            st = record_error(ctx, missing ? PTXKIT_ERROR_NOT_FOUND : PTXKIT_ERROR_COMPILE,
                              "NVRTC failed to compile %s%s%s for %s%s: %s\n%s%s", req->name,
                              req->name_expression ? ", entry " : "", req->name_expression ? req->name_expression : "",
                              arch_name, flat, rtc->nvrtcGetErrorString(r), out->log ? out->log : "", dumped);
        }
    }
    if (st == PTXKIT_SUCCESS && req->name_expression) {
        const char *lowered = NULL;
        r = rtc->nvrtcGetLoweredName(prog, req->name_expression, &lowered);
        if (r != NVRTC_SUCCESS || !lowered)
            st = record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "%s: the name expression '%s' names no kernel: %s", req->name,
                              req->name_expression, rtc->nvrtcGetErrorString(r));
        else if ((out->lowered_name = strdup(lowered)) == NULL)
            st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
    }
    if (st == PTXKIT_SUCCESS && req->name_expression_count > 0)
        st = lowered_names_of(ctx, rtc, prog, req, out);
    size_t size = 0;
    if (st == PTXKIT_SUCCESS) {
        r = cubin ? rtc->nvrtcGetCUBINSize(prog, &size) : rtc->nvrtcGetPTXSize(prog, &size);
        if (r == NVRTC_SUCCESS && size > 0 && (out->image = malloc(size)) != NULL)
            r = cubin ? rtc->nvrtcGetCUBIN(prog, out->image) : rtc->nvrtcGetPTX(prog, out->image);
        if (r != NVRTC_SUCCESS || !out->image)
            st = record_error(ctx, r == NVRTC_SUCCESS ? PTXKIT_ERROR_OUT_OF_MEMORY : PTXKIT_ERROR_COMPILE,
                              "NVRTC: could not read the compiled image of %s", req->name);
    }
    if (prog) rtc->nvrtcDestroyProgram(&prog);
    for (int i = 0; i < req->define_count; i++) free(define_options[i]);
    free(define_options);
    for (int i = 0; i < req->include_dir_count; i++) free(dir_options[i]);
    free(dir_options);
    free(options);
    if (st != PTXKIT_SUCCESS) {
        compile_output_free(out);
        return st;
    }
    /* PTX from NVRTC counts its terminating NUL; keep size as the text length. */
    out->size = cubin ? size : strlen(out->image);
    out->is_cubin = cubin;
    out->compile_ms = now_ms() - t0;
    return PTXKIT_SUCCESS;
}

ptxkit_status compile_source(ptxkit_context *ctx, const compile_request *req, int arch, bool want_ptx,
                             compile_output *out) {
    memset(out, 0, sizeof *out);
    char why[768];
    const nvrtc_library *rtc = nvrtc_get(why, sizeof why);
    if (!rtc) return record_error(ctx, PTXKIT_ERROR_NO_NVRTC, "%s", why);
    if (!req || !req->source || !req->name)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "compile: no source or name");
    if (req->define_count < 0 || req->define_count > 64 || req->option_count < 0 || req->option_count > 64 ||
        req->header_count < 0 || req->header_count > (1 << 20) || req->include_dir_count < 0 ||
        req->include_dir_count > (1 << 16))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "compile: too many defines, options or headers");

    /* the request's headers, then the built-in ones (their names and aliases) */
    size_t header_room = (size_t)req->header_count + MAX_BUILTIN_HEADERS;
    const char **header_text = malloc(header_room * sizeof *header_text);
    const char **header_names = malloc(header_room * sizeof *header_names);
    char (*aliases)[64] = malloc(header_room * sizeof *aliases);
    if (!header_text || !header_names || !aliases) {
        free(header_text);
        free(header_names);
        free(aliases);
        return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
    }
    int headers = 0;
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int i = 0; i < req->header_count && st == PTXKIT_SUCCESS; i++) {
        if (!req->header_names[i] || !req->header_texts[i])
            st = record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "compile: header #%d has no name or text", i);
        header_text[headers] = req->header_texts[i];
        header_names[headers++] = req->header_names[i];
    }
    if (req->builtin_headers)
        headers += builtin_headers(header_text + headers, header_names + headers, aliases + headers,
                                   MAX_BUILTIN_HEADERS);
    if (st == PTXKIT_SUCCESS)
        st = compile_prepared(ctx, rtc, req, arch, want_ptx, out, header_text, header_names, headers);
    free(header_text);
    free(header_names);
    free(aliases);
    return st;
}

/* NVRTC's automatic precompiled headers (pch.h). */

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
