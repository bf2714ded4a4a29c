/* The loader (loader.c): an image into a module, with the driver JIT's
 * logs kept. */
#ifndef PTXKIT_RUNTIME_LOADER_H
#define PTXKIT_RUNTIME_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"

/* Loads an image (PTX when is_ptx: its ISA version is checked against the
 * driver first); what was loaded, the driver JIT's wall time and its info
 * log go into log (cut to log_size: the kernels' ptxkit_kernel_jit_log_get),
 * and its error and info logs into the error message on failure. Context
 * current. */
ptxkit_status load_image(ptxkit_context *ctx, const char *what, const void *image, bool is_ptx, CUmodule *module,
                         char *log, size_t log_size);

#endif
