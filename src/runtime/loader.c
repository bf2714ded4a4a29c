/* Loading an image into the context: the driver JIT's logs and wall time
 * are kept, and PTX newer than the driver is refused by name first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/loader.h"
#include "runtime/objects.h"
#include "runtime/status.h"

/* Lowest CUDA version whose driver accepts a PTX ISA version. */
static int cuda_for_ptx_isa(int major, int minor) {
    if (major >= 9) return (major + 4) * 1000 + minor * 10;
    if (major == 8) return minor >= 6 ? 12000 + (minor + 1) * 10 : 12000 + minor * 10;
    if (major == 7) return 11000 + minor * 10;
    return 10000;
}

/* Loads an image; the driver JIT's info and error logs and the load's wall
 * time go into the error message on failure, and the description, wall
 * time and info log of a PTX load into log (a CUBIN's: the description). */
ptxkit_status load_image(ptxkit_context *ctx, const char *what, const void *image, bool is_ptx, CUmodule *module,
                         char *log, size_t log_size) {
    if (log_size) log[0] = 0;
    if (is_ptx) {
        int major = 0, minor = 0;
        const char *v = strstr((const char *)image, ".version ");
        if (v && sscanf(v + 9, "%d.%d", &major, &minor) == 2 && ctx->cu->version < cuda_for_ptx_isa(major, minor)) {
            int need = cuda_for_ptx_isa(major, minor);
            return record_error(ctx, PTXKIT_ERROR_PTX_VERSION,
                                "%s: PTX ISA %d.%d needs a CUDA %d.%d driver, this one is %d.%d: update the NVIDIA driver, or "
                                "install NVRTC so ptxkit compiles CUBIN for this GPU instead",
                                what, major, minor, need / 1000, need % 1000 / 10, ctx->cu->version / 1000,
                                ctx->cu->version % 1000 / 10);
        }
    }
    if (!is_ptx) {
        /* a CUBIN is not compiled by the driver: no JIT options, whose
         * handling costs a warm process's first kernel; a failure is
         * loaded again below for the driver's error log */
        if (ctx->cu->cuModuleLoadData(module, image) == CUDA_SUCCESS) {
            if (log_size) snprintf(log, log_size, "%s: CUBIN loaded (no driver JIT)", what);
            return PTXKIT_SUCCESS;
        }
    }
    char info_log[4096] = "", error_log[8192] = "";
    float wall_ms = 0;
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
    void *values[] = {info_log, (void *)(uintptr_t)sizeof info_log, error_log, (void *)(uintptr_t)sizeof error_log, NULL};
    CUresult r = ctx->cu->cuModuleLoadDataEx(module, image, 5, opts, values);
    memcpy(&wall_ms, &values[4], sizeof wall_ms);
    /* the description first, then as much of the driver's log as fits */
    int head = log_size ? snprintf(log, log_size, "%s: %s in %.3f ms (driver JIT wall time)", what,
                                   r == CUDA_SUCCESS ? "loaded" : "failed", wall_ms)
                        : -1;
    if (info_log[0] && head >= 0 && (size_t)head + 1 < log_size)
        snprintf(log + head, log_size - (size_t)head, "\n%.*s", (int)(log_size - (size_t)head - 2), info_log);
    if (r != CUDA_SUCCESS) {
        char text[256];
        driver_error_text(ctx->cu, r, text, sizeof text);
        ptxkit_status st = record_cuda_error(ctx, r, what);
        return record_error(ctx, st == PTXKIT_ERROR_DRIVER ? PTXKIT_ERROR_PTX_LOAD : st,
                            "%s: cuModuleLoadDataEx failed after %.2f ms: %s\nJIT error log:\n%s\nJIT info log:\n%s", what,
                            wall_ms, text, error_log, info_log);
    }
    return PTXKIT_SUCCESS;
}
