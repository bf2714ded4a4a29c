/* NVRTC compilation (compile.c): a request (a source, its headers,
 * defines and options) and what it produces; and the monotonic clock the
 * compile times are read with. */
#ifndef PTXKIT_RUNTIME_COMPILE_H
#define PTXKIT_RUNTIME_COMPILE_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"

/* The most defines a family is compiled with (a kernel_spec holds as many). */
#define PTXKIT_MAX_DEFINES 16

typedef struct compile_output {
    char *image;          /* CUBIN or NUL-terminated PTX, malloc'd */
    size_t size;
    bool is_cubin;
    char *log;            /* NVRTC log, malloc'd, may be NULL */
    char *lowered_name;   /* with a name expression: the entry's name in the image */
    char **lowered_names; /* with name_expressions: each one's name in the image, malloc'd */
    int lowered_count;
    double compile_ms;
} compile_output;

/* One NVRTC compilation: a source with its name, headers, defines, extra
 * options and optionally a name expression whose lowered name is wanted.
 * builtin_headers offers every embedded .cuh by its own name and as
 * "ptxkit/<name without the ptxkit_ prefix>" (the user-kernel contract). */
typedef struct compile_request {
    const char *name;
    const char *source;
    const char *const *header_names;
    const char *const *header_texts;
    int header_count;
    bool builtin_headers;
    const char *const *defines;
    int define_count;
    const char *const *options;
    int option_count;
    const char *name_expression;
    /* Several name expressions (kernels and __device__/__constant__
     * variables) of one module; their lowered names come back in
     * compile_output.lowered_names, in this order. */
    const char *const *name_expressions;
    int name_expression_count;
} compile_request;

ptxkit_status compile_source(ptxkit_context *ctx, const compile_request *req, int arch, bool want_ptx,
                             compile_output *out);

void compile_output_free(compile_output *out);

/* Monotonic clock in milliseconds. */
double now_ms(void);

#endif
