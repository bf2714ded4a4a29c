/* NVRTC compilation (compile.c): a request (a source, its headers,
 * defines and options) and what it produces; and the monotonic clock the
 * compile times are read with. */
#ifndef PTXKIT_RUNTIME_COMPILE_H
#define PTXKIT_RUNTIME_COMPILE_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"
#include "runtime/cache_key.h"

/* The most defines a family is compiled with (a kernel_spec holds as many). */
#define PTXKIT_MAX_DEFINES 24

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
    /* directories NVRTC searches for #include, in order (-I each) */
    const char *const *include_dirs;
    int include_dir_count;
    /* NVRTC's precompiled headers may serve a repeated prelude (pch.h);
     * pch_domain names the contents of every header the compile may read */
    bool pch, pch_prelude_on_disk;
    text_hash pch_domain;
} compile_request;

ptxkit_status compile_source(ptxkit_context *ctx, const compile_request *req, int arch, bool want_ptx,
                             compile_output *out);

void compile_output_free(compile_output *out);

/* Monotonic clock in milliseconds. */
double now_ms(void);

/* NVRTC's automatic precompiled headers (NVRTC 12.8 and later):
 * a compile that repeats a program's header prelude with the same options
 * reads the prelude's parsed state instead of parsing it again.
 *
 * NVRTC matches a precompiled prelude by the source's text before its
 * first declaration and by the command line, not by the headers' contents:
 * a header edited on disk (or another text under a handed-in header's
 * name) would be served stale. So each compile names its header contents
 * on the command line (-D__PTXKIT_PCH_DOMAIN_<hash> of the in-memory
 * headers and the header tree's digest): a changed header is another
 * command line, never a stale prelude.
 *
 * NVRTC writes each precompiled prelude (tens of MiB for the toolkit's
 * headers) to a directory of its own per process and removes it at exit.
 * ptxkit lets at most PCH_MAX_CREATED preludes be created per process;
 * after that, only compiles of a domain that owns one use PCH. One compile
 * at a time uses PCH (others compile as before): NVRTC promises nothing
 * about concurrent automatic PCH in one process. PTXKIT_PCH=off: never. */
enum { PCH_MAX_CREATED = 4, PCH_OPTION_COUNT = 4 };

/* Whether this compile of `domain` uses PCH (by default only where the
 * program includes header files from disk: creating a prelude costs time
 * that ptxkit's own small headers do not repay); when true, options[0..3] are
 * the options to add (domain_option holds one of them) and pch_after must
 * follow the compile. */
bool pch_before(const nvrtc_library *rtc, text_hash domain, bool prelude_on_disk, char *domain_option, size_t size,
                const char *options[PCH_OPTION_COUNT]);
/* After a compile that pch_before allowed: records whether it created a
 * prelude; an NVRTC that refused the options (INVALID_OPTION) turns PCH
 * off for the process (the caller compiles again without). */
void pch_after(const nvrtc_library *rtc, nvrtcProgram prog, text_hash domain, nvrtcResult compile_result);

/* 1: on for every program where NVRTC has it, 0: off, -1: as PTXKIT_PCH
 * says (off, on, or by default auto: programs with headers from disk). For
 * the compile benchmark, which compares them in one process. */
void pch_set_mode(int mode);
/* How many preludes this process's compiles created (tests, benchmarks). */
int pch_created_count(void);
/* Whether PCH would be used now (NVRTC 12.8+, not turned off). */
bool pch_available(const nvrtc_library *rtc);

#endif
