/* A module's __device__ and __constant__ variables: their address and
 * size by name (a C++ name expression the module was compiled for, an
 * unmangled name, or a loaded image's symbol), and copies of their bytes.
 * The copies are the memory calls' own, on the variable's address: a
 * variable is device memory like any other. */
#include <stdint.h>
#include <string.h>

#include "runtime/context.h"
#include "runtime/module.h"
#include "runtime/objects.h"
#include "runtime/status.h"

/* The variable's address and size; records and returns a failure. */
static ptxkit_status variable_of(ptxkit_module *m, const char *call, const char *name, CUdeviceptr *dptr, size_t *bytes) {
    if (!m || !name || !*name)
        return record_error(m ? m->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %s", call,
                            m ? "the variable's name is NULL or empty" : "module is NULL");
    const char *symbol = module_symbol_name(m, name);
    if (symbol == name && module_name_is_expression(name))
        return record_error(m->ctx, PTXKIT_ERROR_NOT_FOUND,
                            "%s: '%s' is a C++ name expression the module was not compiled for (give it to "
                            "ptxkit_program_module_get; a loaded image's variables go by their mangled names)",
                            call, name);
    ptxkit_status st = context_enter(m->ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = m->ctx->cu->cuModuleGetGlobal(dptr, bytes, m->module, symbol);
    context_leave(m->ctx);
    if (r == CUDA_ERROR_NOT_FOUND)
        return record_error(m->ctx, PTXKIT_ERROR_NOT_FOUND, "%s: the module has no variable '%s'%s%s%s", call, name,
                            symbol != name ? " (lowered '" : "", symbol != name ? symbol : "", symbol != name ? "')" : "");
    if (r != CUDA_SUCCESS) return record_cuda_error(m->ctx, r, "cuModuleGetGlobal");
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_module_variable_get(ptxkit_module *m, const char *name, ptxkit_dptr *dptr, size_t *bytes) {
    if (dptr) *dptr = 0;
    if (bytes) *bytes = 0;
    CUdeviceptr d = 0;
    size_t size = 0;
    ptxkit_status st = variable_of(m, "ptxkit_module_variable_get", name, &d, &size);
    if (st != PTXKIT_SUCCESS) return st;
    if (dptr) *dptr = (ptxkit_dptr)d;
    if (bytes) *bytes = size;
    return PTXKIT_SUCCESS;
}

/* The address of bytes at offset in the variable, once they are checked
 * to lie inside it. */
static ptxkit_status variable_range(ptxkit_module *m, const char *call, const char *name, size_t offset, const void *host,
                                    size_t bytes, ptxkit_dptr *at) {
    CUdeviceptr d = 0;
    size_t size = 0;
    ptxkit_status st = variable_of(m, call, name, &d, &size);
    if (st != PTXKIT_SUCCESS) return st;
    if (offset > size || bytes > size - offset) /* no sum: it could wrap */
        return record_error(m->ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %zu bytes at offset %zu overrun '%s' (%zu bytes)",
                            call, bytes, offset, name, size);
    if (bytes && !host) return record_error(m->ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: the host buffer is NULL", call);
    *at = (ptxkit_dptr)d + offset;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_module_variable_write(ptxkit_module *m, const char *name, size_t offset, const void *src,
                                           size_t bytes) {
    ptxkit_dptr at = 0;
    ptxkit_status st = variable_range(m, "ptxkit_module_variable_write", name, offset, src, bytes, &at);
    if (st != PTXKIT_SUCCESS || !bytes) return st;
    return ptxkit_memcpy_htod(m->ctx, at, src, bytes);
}

ptxkit_status ptxkit_module_variable_read(ptxkit_module *m, const char *name, size_t offset, void *dst, size_t bytes) {
    ptxkit_dptr at = 0;
    ptxkit_status st = variable_range(m, "ptxkit_module_variable_read", name, offset, dst, bytes, &at);
    if (st != PTXKIT_SUCCESS || !bytes) return st;
    return ptxkit_memcpy_dtoh(m->ctx, dst, at, bytes);
}

ptxkit_status ptxkit_module_variable_write_async(ptxkit_module *m, const char *name, size_t offset, const void *src,
                                                 size_t bytes, ptxkit_stream *stream) {
    ptxkit_dptr at = 0;
    ptxkit_status st = variable_range(m, "ptxkit_module_variable_write_async", name, offset, src, bytes, &at);
    if (st != PTXKIT_SUCCESS || !bytes) return st;
    return ptxkit_memcpy_htod_async(m->ctx, at, src, bytes, stream);
}

ptxkit_status ptxkit_module_variable_read_async(ptxkit_module *m, const char *name, size_t offset, void *dst,
                                                size_t bytes, ptxkit_stream *stream) {
    ptxkit_dptr at = 0;
    ptxkit_status st = variable_range(m, "ptxkit_module_variable_read_async", name, offset, dst, bytes, &at);
    if (st != PTXKIT_SUCCESS || !bytes) return st;
    return ptxkit_memcpy_dtoh_async(m->ctx, dst, at, bytes, stream);
}
