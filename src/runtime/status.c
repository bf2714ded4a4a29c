/* Status strings and the thread's last error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/objects.h"
#include "runtime/status.h"

static const char *const status_strings[PTXKIT_STATUS_COUNT] = {
    [PTXKIT_SUCCESS] = "success",
    [PTXKIT_ERROR_INVALID_ARGUMENT] = "invalid argument",
    [PTXKIT_ERROR_OVERFLOW] = "size overflow",
    [PTXKIT_ERROR_MISALIGNED] = "misaligned pointer",
    [PTXKIT_ERROR_NO_DRIVER] = "NVIDIA driver not available",
    [PTXKIT_ERROR_STUB_DRIVER] = "CUDA stub library loaded instead of the driver",
    [PTXKIT_ERROR_NO_DEVICE] = "no such GPU",
    [PTXKIT_ERROR_NO_NVRTC] = "NVRTC not available (JIT path disabled)",
    [PTXKIT_ERROR_COMPILE] = "kernel compilation failed",
    [PTXKIT_ERROR_PTX_LOAD] = "driver refused the kernel image",
    [PTXKIT_ERROR_PTX_VERSION] = "PTX ISA version newer than the driver supports",
    [PTXKIT_ERROR_JIT_NOT_FOUND] = "driver PTX JIT compiler not found",
    [PTXKIT_ERROR_OUT_OF_MEMORY] = "out of memory",
    [PTXKIT_ERROR_UNSUPPORTED] = "not supported",
    [PTXKIT_ERROR_LAUNCH] = "kernel launch failed",
    [PTXKIT_ERROR_DRIVER] = "CUDA driver error",
    [PTXKIT_ERROR_IO] = "file system error",
    [PTXKIT_ERROR_NOT_FOUND] = "not found",
    [PTXKIT_ERROR_CORRUPT] = "corrupt file",
    [PTXKIT_ERROR_CONTEXT_LOST] = "a kernel fault left the GPU context unusable",
    [PTXKIT_ERROR_DEVICE_ASSERT] = "a device-side assert failed (the GPU context is unusable)",
    [PTXKIT_NOT_READY] = "not ready (queued work has not finished; not an error)",
    [PTXKIT_ERROR_CAPTURE] = "not allowed during stream capture, or the capture was invalidated",
};

const char *ptxkit_status_string(ptxkit_status status) {
    if ((unsigned)status >= PTXKIT_STATUS_COUNT) return "unknown status";
    return status_strings[status];
}

int ptxkit_status_is_error(ptxkit_status status) { return status != PTXKIT_SUCCESS && status != PTXKIT_NOT_READY; }

/* The one error channel: each thread's message of its own last failure.
 * Thread-local, so no other thread's failure can replace it and reading it
 * needs no lock. */
static _Thread_local char thread_error[PTXKIT_ERROR_SIZE];

static ptxkit_status vrecord(ptxkit_status status, const char *fmt, va_list ap) {
    /* the arguments may point into the message itself (a caller prefixing
     * the last error): format into a copy first */
    char text[PTXKIT_ERROR_SIZE];
    vsnprintf(text, sizeof text, fmt, ap);
    memcpy(thread_error, text, strlen(text) + 1);
    return status;
}

ptxkit_status record_error(ptxkit_context *ctx, ptxkit_status status, const char *fmt, ...) {
    (void)ctx;
    va_list ap;
    va_start(ap, fmt);
    vrecord(status, fmt, ap);
    va_end(ap);
    return status;
}

ptxkit_status name_failure(ptxkit_status status, const char *fn) {
    if (!ptxkit_status_is_error(status)) return status;
    size_t len = strlen(fn);
    for (const char *at = strstr(thread_error, fn); at; at = strstr(at + 1, fn))
        if (at[len] == ':') return status;
    return record_error(NULL, status, "%s: %s", fn, thread_error);
}

ptxkit_status ptxkit_last_error_set(ptxkit_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (fmt) vrecord(status, fmt, ap);
    else thread_error[0] = 0;
    va_end(ap);
    return status;
}

ptxkit_status record_cuda_error(ptxkit_context *ctx, CUresult r, const char *what) {
    char text[256];
    driver_error_text(ctx ? ctx->cu : driver_get(NULL, NULL, 0), r, text, sizeof text);
    ptxkit_status st;
    switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY: st = PTXKIT_ERROR_OUT_OF_MEMORY; break;
    case CUDA_ERROR_INVALID_VALUE: st = PTXKIT_ERROR_INVALID_ARGUMENT; break;
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: st = PTXKIT_ERROR_PTX_VERSION; break;
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND: st = PTXKIT_ERROR_JIT_NOT_FOUND; break;
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED: st = PTXKIT_ERROR_PTX_LOAD; break;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_INVALID_CONTEXT: st = PTXKIT_ERROR_LAUNCH; break;
    /* sticky: the driver refuses every later call on the context */
    case CUDA_ERROR_ASSERT: st = PTXKIT_ERROR_DEVICE_ASSERT; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: st = PTXKIT_ERROR_CONTEXT_LOST; break;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE: st = PTXKIT_ERROR_NO_DEVICE; break;
    case CUDA_ERROR_STUB_LIBRARY: st = PTXKIT_ERROR_STUB_DRIVER; break;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    case CUDA_ERROR_STREAM_CAPTURE_MERGE:
    case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
    case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
    case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
    case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
    case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
    case CUDA_ERROR_CAPTURED_EVENT: st = PTXKIT_ERROR_CAPTURE; break;
    default: st = PTXKIT_ERROR_DRIVER; break;
    }
    const bool sticky = st == PTXKIT_ERROR_CONTEXT_LOST || st == PTXKIT_ERROR_DEVICE_ASSERT;
    if (sticky && ctx) ctx->lost = true;
    return record_error(ctx, st, "%s: %s%s", what, text,
                        sticky ? " (a sticky fault: the driver refuses this context from now "
                                                          "on, and this process cannot use the GPU again until it "
                                                          "restarts)"
                                                        : "");
}

const char *ptxkit_last_error(void) { return thread_error; }

size_t ptxkit_last_error_copy(char *buf, size_t size) {
    size_t len = strlen(thread_error);
    if (buf && size) snprintf(buf, size, "%s", thread_error);
    return len;
}

static const char *const load_op_names[PTXKIT_LOAD_OP_COUNT] = {"default", "ca", "cg", "cs", "lu", "cv", "nc"};

const char *ptxkit_load_op_name(ptxkit_load_op op) {
    return (unsigned)op < PTXKIT_LOAD_OP_COUNT ? load_op_names[op] : NULL;
}

ptxkit_status ptxkit_load_op_parse(const char *name, ptxkit_load_op *out) {
    if (!name || !out) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_load_op_parse: NULL argument");
    for (int i = 0; i < PTXKIT_LOAD_OP_COUNT; i++)
        if (strcmp(name, load_op_names[i]) == 0) {
            *out = (ptxkit_load_op)i;
            return PTXKIT_SUCCESS;
        }
    return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                        "ptxkit_load_op_parse: unknown load cache operator '%s' (expected default, ca, cg, cs, lu, cv or nc)",
                        name);
}

void ptxkit_versions_get(ptxkit_versions *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    out->library = PTXKIT_VERSION_MAJOR * 10000 + PTXKIT_VERSION_MINOR * 100 + PTXKIT_VERSION_PATCH;
    const cuda_driver *cu = driver_get(NULL, NULL, 0);
    if (cu) out->driver = cu->version;
    const nvrtc_library *rtc = nvrtc_get(NULL, 0);
    if (rtc) {
        out->nvrtc_major = rtc->major;
        out->nvrtc_minor = rtc->minor;
    }
}

ptxkit_status ptxkit_jit_library_get(char *buf, size_t size) {
    if (!buf || !size) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_jit_library_get: no buffer");
    buf[0] = 0;
    char why[1024] = "";
    if (!nvrtc_get(why, sizeof why))
        return record_error(NULL, PTXKIT_ERROR_NO_NVRTC, "%s", why[0] ? why : "NVRTC could not be opened");
    snprintf(buf, size, "%s", nvrtc_loaded_from());
    return PTXKIT_SUCCESS;
}

int ptxkit_jit_available(void) {
    char why[512] = "";
    if (nvrtc_get(why, sizeof why)) return 1;
    record_error(NULL, PTXKIT_ERROR_NO_NVRTC, "%s", why[0] ? why : "NVRTC could not be opened");
    return 0;
}
