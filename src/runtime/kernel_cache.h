/* The kernel cache: the one path by which every kernel reaches the GPU.
 *
 * A request names a source of kernels: a program compiled by NVRTC (a
 * built-in family's embedded source or the application's), PTX whose plain
 * global loads are given a cache operator (a family's precompiled PTX or
 * the application's), or a binary image. One key function identifies what
 * it produces, and one path serves it:
 *
 *   key -> registry (per context) -> disk (compiled programs) -> produce
 *   (NVRTC compile, or PTX rewrite) -> load (loader.c) -> registry
 *
 * A module is keyed by its source, defines, options, architecture, driver,
 * NVRTC identity and library version; its kernels by the module's key and
 * their entry, so the entries of one source and defines share one module.
 * Rewritten PTX is not written to disk: the rewrite costs less than a disk
 * read, and the driver keeps its own JIT cache. */
#ifndef PTXKIT_RUNTIME_KERNEL_CACHE_H
#define PTXKIT_RUNTIME_KERNEL_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"
#include "runtime/cache_key.h"
#include "runtime/ptx_rewrite.h"

typedef enum kernel_source {
    KERNEL_FROM_PROGRAM,  /* program, defines: compiled by NVRTC */
    KERNEL_FROM_PTX,      /* image, image_size, load_op: loads rewritten, then JIT-compiled by the driver */
    KERNEL_FROM_IMAGE,    /* image, image_size: CUBIN or fatbin, loaded as is */
    KERNEL_FROM_MODULE,   /* module_key: a module this context loaded before */
} kernel_source;

enum { KERNEL_REQUEST_MAX_OPTIONS = 4 };
typedef struct kernel_request {
    kernel_source kind;
    const ptxkit_program *program;
    const char *const *defines;
    int define_count;
    /* Programs: NVRTC options after the program's own (a family's
     * per-configuration code-generation choice); part of the key. */
    const char *const *options;
    int option_count;
    const void *image;
    size_t image_size;
    /* A name identifying the image within the process (the library's
     * embedded PTX): hashed instead of the bytes. NULL: hash the bytes. */
    const char *image_name;
    ptxkit_load_op load_op;
    const cache_key *module_key;
    /* The kernel's name; NULL asks for the module alone. With
     * name_expression (programs only), a C++ name expression NVRTC lowers:
     * the module is then compiled for that entry (its key includes it). */
    const char *entry;
    bool name_expression;
    /* Programs: the C++ name expressions (kernels and variables) one module
     * is compiled for (instead of entry with name_expression); each is
     * part of the module's key, and their lowered names are kept on disk
     * beside the image. */
    const char *const *names;
    int name_count;
} kernel_request;

typedef enum key_part {
    KEY_MODULE,        /* the module the request produces */
    KEY_KERNEL,        /* its kernel `entry` */
} key_part;

/* The one key function: every cache key, in the registry and on disk, for
 * a GPU of architecture arch (90) under a driver of driver_version (13000). */
cache_key kernel_cache_key(const kernel_request *req, key_part part, int arch, int driver_version);

/* The kernel req->entry, as a ptxkit_kernel owned by the context: from the
 * registry, else through disk, compile or rewrite and load. */
ptxkit_status kernel_cache_get(ptxkit_context *ctx, const kernel_request *req, ptxkit_kernel **out);

/* The module of a program request compiled for req->names, and the
 * lowered name of each name (*lowered: a malloc'd array of req->name_count
 * malloc'd strings, NULL for none; free with kernel_cache_names_free). key:
 * the request's module key, which the caller has computed already
 * (kernel_cache_key, KEY_MODULE). Context current. */
ptxkit_status kernel_cache_program_module(ptxkit_context *ctx, const kernel_request *req, CUmodule *module,
                                          const cache_key *key, char ***lowered);
void kernel_cache_names_free(char **names, int count);

/* The module of req (entry ignored) and its key; *stats (may be NULL) gets
 * the rewrite's counts for PTX. Context current. */
ptxkit_status kernel_cache_module(ptxkit_context *ctx, const kernel_request *req, CUmodule *module,
                                  ptx_rewrite_stats *stats);

#endif
