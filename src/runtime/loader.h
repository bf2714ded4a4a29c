/* The loader (loader.c): an image into a module, with the driver JIT's
 * logs kept. */
#ifndef PTXKIT_RUNTIME_LOADER_H
#define PTXKIT_RUNTIME_LOADER_H

#include <stdbool.h>

#include "driver/driver.h"
#include "ptxkit.h"

/* Loads an image (PTX when is_ptx: its ISA version is checked against the
 * driver first); the driver JIT's logs and wall time go into the context's
 * JIT log, and into the error message on failure. Context current. */
ptxkit_status load_image(ptxkit_context *ctx, const char *what, const void *image, bool is_ptx, CUmodule *module);

#endif
