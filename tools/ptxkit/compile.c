/* ptxkit compile FAMILY | FILE.cu: NVRTC only, no GPU needed. A family is
 * one of the library's embedded sources; a file is the user's own, compiled
 * through the public program API exactly as ptxkit_kernel_get would. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "runtime/runtime.h"

#define MAX_HEADERS 32
#define MAX_OPTIONS 16

static void usage(FILE *out) {
    fprintf(out,
            "usage: ptxkit compile FAMILY [-D NAME=VALUE]... [--option OPT]... [--arch sm_XY] [--ptx | --resources]\n"
            "       ptxkit compile FILE.cu [-D NAME[=VALUE]]... [--entry EXPR] [--header NAME=PATH]...\n"
            "                      [--option OPT]... [--arch sm_XY] [--ptx | --resources]\n"
            "Compiles with NVRTC and prints the PTX (default, or --ptx), or with --resources compiles CUBIN and\n"
            "prints each kernel's registers, shared memory and spills. --arch defaults to the GPU's own\n"
            "architecture, or sm_90 when there is no GPU.\n"
            "FAMILY is a kernel family embedded in the library (cu_sources/FAMILY.cu). FILE is your own CUDA C++:\n"
            "any argument ending in .cu or .cuh or naming a file. It may include <ptxkit/load.cuh>,\n"
            "<ptxkit/load_hint.cuh>, <ptxkit/warp.cuh> and <ptxkit/async.cuh>.\n"
            "  --entry EXPR, --name-expression EXPR\n"
            "                     the kernel to compile: an extern \"C\" name or a C++ name expression such as\n"
            "                     'scale<256, float>'; the PTX then starts with a comment giving its lowered\n"
            "                     name. Without it, every extern \"C\" kernel of the file.\n"
            "  --header NAME=PATH the file PATH is the header the source includes as \"NAME\" (PATH alone:\n"
            "                     NAME is its file name)\n"
            "  --option OPT       an NVRTC option (-use_fast_math, -lineinfo, -maxrregcount=64)\n"
            "families:");
    size_t count;
    const embedded_file *files = embedded_all(&count);
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(files[i].name);
        if (len > 3 && strcmp(files[i].name + len - 3, ".cu") == 0) fprintf(out, " %.*s", (int)(len - 3), files[i].name);
    }
    fputc('\n', out);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A user file rather than a family: it says so by its suffix or a slash;
 * else an embedded family of that name wins over a file of that name. */
static bool is_user_file(const char *arg) {
    if (ends_with(arg, ".cu") || ends_with(arg, ".cuh") || strchr(arg, '/')) return true;
    char name[256];
    snprintf(name, sizeof name, "%s.cu", arg);
    if (embedded_find(name)) return false;
    struct stat st;
    return stat(arg, &st) == 0 && S_ISREG(st.st_mode);
}

/* sm_XY, compute_XY or XY; range-checked before the cast */
static int parse_arch(const char *text) {
    const char *v = text;
    if (strncmp(v, "sm_", 3) == 0 || strncmp(v, "compute_", 8) == 0) v = strchr(v, '_') + 1;
    char *end;
    errno = 0;
    long arch = strtol(v, &end, 10);
    return end == v || *end || errno || arch < 30 || arch > 200 ? 0 : (int)arch;
}

static int default_arch(void) {
    ptxkit_context *ctx;
    if (ptxkit_context_open(0, &ctx) != PTXKIT_SUCCESS) return 90;
    ptxkit_device_info d;
    ptxkit_device_info_get(ctx, &d);
    ptxkit_context_close(ctx);
    return d.cc_major * 10 + d.cc_minor;
}

/* The text of a header file, malloc'd; NULL (message printed) on failure. */
static char *read_header(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ptxkit compile: cannot open header %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && size < (64L << 20) && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)size + 1)) != NULL && fread(text, 1, (size_t)size, f) == (size_t)size) {
        text[size] = 0;
    } else {
        free(text);
        text = NULL;
        fprintf(stderr, "ptxkit compile: cannot read header %s (unreadable, or 64 MiB or more)\n", path);
    }
    fclose(f);
    return text;
}

typedef struct compile_args {
    const char *target;           /* the family or file */
    const char *defines[PTXKIT_MAX_KERNEL_DEFINES];
    int define_count;
    const char *options[MAX_OPTIONS];
    int option_count;
    const char *header_specs[MAX_HEADERS];
    int header_count;
    const char *entry;
    int arch;
    bool resources;
} compile_args;

/* 0 when parsed, else the exit code (0 after --help is 'done'; -1). */
static int parse(int argc, char **argv, compile_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(arg, "--ptx") == 0) {
            a->resources = false;
        } else if (strcmp(arg, "--resources") == 0) {
            a->resources = true;
        } else if (strcmp(arg, "--arch") == 0 && value) {
            if ((a->arch = parse_arch(value)) == 0) {
                fprintf(stderr, "ptxkit compile: --arch takes sm_XY, not '%s'\n", value);
                usage(stderr);
                return 2;
            }
            i++;
        } else if ((strcmp(arg, "--entry") == 0 || strcmp(arg, "--name-expression") == 0) && value) {
            if (a->entry) {
                fprintf(stderr, "ptxkit compile: one --entry at a time\n");
                usage(stderr);
                return 2;
            }
            a->entry = value;
            i++;
        } else if (strcmp(arg, "--header") == 0 && value) {
            if (a->header_count == MAX_HEADERS) {
                fprintf(stderr, "ptxkit compile: at most %d --header\n", MAX_HEADERS);
                usage(stderr);
                return 2;
            }
            a->header_specs[a->header_count++] = value;
            i++;
        } else if (strcmp(arg, "--option") == 0 && value) {
            if (a->option_count == MAX_OPTIONS) {
                fprintf(stderr, "ptxkit compile: at most %d --option\n", MAX_OPTIONS);
                usage(stderr);
                return 2;
            }
            a->options[a->option_count++] = value;
            i++;
        } else if (strncmp(arg, "-D", 2) == 0) {
            const char *d = arg[2] ? arg + 2 : value;
            if (!arg[2]) i++;
            /* NAME or NAME=VALUE with NAME an identifier: what NVRTC's -D takes */
            size_t name = d ? strspn(d, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") : 0;
            bool ok = d && name > 0 && !(d[0] >= '0' && d[0] <= '9') &&
                      (d[name] == 0 || (d[name] == '=' && cli_parse_define(d)));
            if (!ok || a->define_count == PTXKIT_MAX_KERNEL_DEFINES) {
                fprintf(stderr, "ptxkit compile: -D takes NAME or NAME=VALUE (NAME an identifier; at most %d), not '%s'\n",
                        PTXKIT_MAX_KERNEL_DEFINES, d ? d : "");
                usage(stderr);
                return 2;
            }
            a->defines[a->define_count++] = d;
        } else if (arg[0] != '-' && !a->target) {
            a->target = arg;
        } else {
            fprintf(stderr, "ptxkit compile: unexpected argument '%s'\n", arg);
            usage(stderr);
            return 2;
        }
    }
    if (!a->target) {
        usage(stderr);
        return 2;
    }
    return 0;
}

static int compile_embedded_family(const compile_args *a) {
    if (a->entry || a->header_count) {
        fprintf(stderr, "ptxkit compile: --entry and --header are for your own files, not family %s\n", a->target);
        usage(stderr);
        return 2;
    }
    const char *options[MAX_OPTIONS + 1];
    int count = 0;
    for (int i = 0; i < a->option_count; i++) options[count++] = a->options[i];
    if (a->resources) options[count++] = "--ptxas-options=-v";
    compile_output out;
    ptxkit_status st =
        compile_family(NULL, a->target, a->defines, a->define_count, a->arch, !a->resources, options, count, &out);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit compile: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error(NULL));
        return 1;
    }
    if (a->resources)
        printf("%s for sm_%d: CUBIN of %zu bytes in %.1f ms\n%s", a->target, a->arch, out.size, out.compile_ms,
               out.log ? out.log : "(NVRTC gave no resource report)\n");
    else
        fwrite(out.image, 1, out.size, stdout);
    compile_output_free(&out);
    return 0;
}

/* Every extern "C" kernel of the file: a compile without a name
 * expression, which the public API (one kernel at a time) does not offer. */
static ptxkit_status compile_whole_file(const compile_args *a, const ptxkit_header *headers, const char **options,
                                        int option_count, compile_output *out) {
    size_t size = 0;
    char *source = NULL;
    FILE *f = fopen(a->target, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        if (n >= 0 && (source = malloc((size_t)n + 1)) != NULL) size = fread(source, 1, (size_t)n, f);
        if (source) source[size] = 0;
        fclose(f);
    }
    if (!source) return record_error(NULL, PTXKIT_ERROR_IO, "cannot read kernel source %s", a->target);
    const char *names[MAX_HEADERS], *texts[MAX_HEADERS];
    for (int i = 0; i < a->header_count; i++) {
        names[i] = headers[i].name;
        texts[i] = headers[i].text;
    }
    compile_request req = {
        .name = a->target,
        .source = source,
        .header_names = names,
        .header_texts = texts,
        .header_count = a->header_count,
        .builtin_headers = true,
        .defines = a->defines,
        .define_count = a->define_count,
        .options = options,
        .option_count = option_count,
    };
    ptxkit_status st = compile_source(NULL, &req, a->arch, !a->resources, out);
    free(source);
    return st;
}

static int compile_user_file(const compile_args *a) {
    ptxkit_header headers[MAX_HEADERS];
    char *texts[MAX_HEADERS] = {0};
    static char names[MAX_HEADERS][256];
    int code = 0;
    for (int i = 0; i < a->header_count && !code; i++) {
        const char *spec = a->header_specs[i], *eq = strchr(spec, '='), *path = eq ? eq + 1 : spec;
        const char *slash = strrchr(path, '/');
        int len = eq ? (int)(eq - spec) : (int)strlen(slash ? slash + 1 : path);
        if (len <= 0 || len >= (int)sizeof names[i] || !*path) {
            fprintf(stderr, "ptxkit compile: --header takes NAME=PATH or PATH, not '%s'\n", spec);
            code = 2;
            break;
        }
        snprintf(names[i], sizeof names[i], "%.*s", len, eq ? spec : (slash ? slash + 1 : path));
        if ((texts[i] = read_header(path)) == NULL) code = 1;
        headers[i] = (ptxkit_header){names[i], texts[i]};
    }
    const char *options[MAX_OPTIONS + 1];
    int option_count = 0;
    for (int i = 0; i < a->option_count; i++) options[option_count++] = a->options[i];
    if (a->resources) options[option_count++] = "--ptxas-options=-v";

    ptxkit_program *program = NULL;
    ptxkit_compiled compiled = {0};
    compile_output whole = {0};
    ptxkit_status st = PTXKIT_SUCCESS;
    if (!code) st = ptxkit_program_create_from_file(a->target, headers, a->header_count, &program);
    /* options the library refuses (an architecture) are usage errors */
    if (!code && st == PTXKIT_SUCCESS &&
        (st = ptxkit_program_add_options(program, options, option_count)) == PTXKIT_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "ptxkit compile: %s (use --arch)\n", ptxkit_last_error(NULL));
        code = 2;
    }
    if (!code && st == PTXKIT_SUCCESS)
        st = a->entry ? ptxkit_program_compile(program, a->entry, a->defines, a->define_count, a->arch, !a->resources,
                                               &compiled)
                      : compile_whole_file(a, headers, options, option_count, &whole);
    if (!code && st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit compile: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error(NULL));
        code = 1;
    }
    if (!code) {
        const char *image = a->entry ? compiled.image : whole.image, *log = a->entry ? compiled.log : whole.log;
        size_t size = a->entry ? compiled.size : whole.size;
        char what[1400];
        if (a->entry) snprintf(what, sizeof what, "%s, entry %s (%s)", a->target, a->entry, compiled.lowered_name);
        else snprintf(what, sizeof what, "%s", a->target);
        if (a->resources) {
            printf("%s for sm_%d: %s of %zu bytes in %.1f ms\n%s", what, a->arch,
                   (a->entry ? compiled.is_cubin : whole.is_cubin) ? "CUBIN" : "PTX", size,
                   a->entry ? compiled.compile_ms : whole.compile_ms, log ? log : "(NVRTC gave no resource report)\n");
        } else {
            /* a PTX comment: the output stays valid PTX */
            if (a->entry) printf("// ptxkit compile: %s\n", what);
            fwrite(image, 1, size, stdout);
        }
    }
    ptxkit_compiled_free(&compiled);
    compile_output_free(&whole);
    ptxkit_program_destroy(program);
    for (int i = 0; i < a->header_count; i++) free(texts[i]);
    return code;
}

int cmd_compile(int argc, char **argv) {
    static compile_args a;
    memset(&a, 0, sizeof a);
    int code = parse(argc, argv, &a);
    if (code) return code < 0 ? 0 : code;
    if (!a.arch) a.arch = default_arch();
    return is_user_file(a.target) ? compile_user_file(&a) : compile_embedded_family(&a);
}
