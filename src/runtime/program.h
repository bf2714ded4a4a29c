/* A program: the text NVRTC compiles (an application's source with its
 * headers and options, or a built-in family's embedded source). The kernel
 * cache reads it; program.c makes it. */
#ifndef PTXKIT_RUNTIME_PROGRAM_H
#define PTXKIT_RUNTIME_PROGRAM_H

#include <stdbool.h>

#include "ptxkit.h"
#include "runtime/cache_key.h"
#include "runtime/compile.h"

#define PROGRAM_MAX_OPTIONS 32

struct ptxkit_program {
    char *name;
    char *source;
    char **header_names, **header_texts;
    int header_count;
    char *options[PROGRAM_MAX_OPTIONS];
    int option_count;
    text_hash hash;   /* of name, source and headers */
    bool builtin;     /* a family's embedded source: text borrowed, never freed */
    struct header_tree *tree; /* include directories and the header tree on disk; NULL for built-in programs */
};

/* The built-in program over the embedded source <name>.cu
 * (name "copy", or a family's second source "gemm_dmma"), made once per
 * process (its text is the library's own and never changes); NULL when the
 * library holds no such source. */
const ptxkit_program *builtin_program(const char *name);

/* Compiles the built-in program `name` for arch (e.g. 90) with NVRTC and
 * no cache, producing CUBIN when want_ptx is false and NVRTC supports the
 * arch, PTX otherwise (the PTX generator and the tests). extra_options may
 * be NULL. */
ptxkit_status compile_family(ptxkit_context *ctx, const char *name, const char *const *defines, int define_count,
                             int arch, bool want_ptx, const char *const *extra_options, int extra_count,
                             compile_output *out);

/* What NVRTC is given to compile `entry` of p with defines (entry NULL or
 * a plain name: no name expression is registered). */
compile_request program_request(const ptxkit_program *p, const char *name_expression, const char *const *defines,
                                int define_count);

/* A hash of a program's name, source, headers and options (the tuning
 * record's code hash of a tunable bound to it). 0 for NULL. */
unsigned long long program_code_digest(const ptxkit_program *p);

/* Checks a kernel's entry name and defines (NAME or NAME=VALUE, at most
 * PTXKIT_MAX_KERNEL_DEFINES) as ptxkit_program_compile and ptxkit_program_kernel_get
 * take them; records and returns the failure. */
ptxkit_status program_check_entry(ptxkit_context *ctx, const char *entry, const char *const *defines,
                                  int define_count);

/* The digest of the header files on disk a compile of p may read
 * (header_tree.h), computed at the program's first use; zero for built-in
 * programs. */
text_hash program_header_digest(const ptxkit_program *p);

#endif
