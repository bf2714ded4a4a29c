/* ptxkit compile FAMILY | FILE.cu: NVRTC only, no GPU needed. A family is
 * one of the library's embedded sources; a file is the user's own, compiled
 * through the public program API exactly as ptxkit_program_kernel_get would. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "compile_space.h"

#define MAX_HEADERS 32
#define MAX_OPTIONS 16
#define MAX_INCLUDE_DIRS 32

static const char compile_usage[] =
    "usage: ptxkit compile FAMILY [-D NAME=VALUE]... [--option OPT]... [--arch sm_XY[a]] [--ptx | --resources] [--strict]\n"
    "       ptxkit compile FILE.cu [-D NAME[=VALUE]]... [--entry EXPR] [--header NAME=PATH]... [-I DIR]...\n"
    "                      [--option OPT]... [--arch sm_XY[a]] [--ptx | --resources]\n";

static const char compile_help[] =
    "Compiles with NVRTC and prints the PTX (default, or --ptx), or with --resources compiles CUBIN and\n"
    "prints each kernel's registers, shared memory and spills. --arch defaults to the GPU's own\n"
    "architecture, or sm_90 when there is no GPU.\n"
    "FAMILY is a kernel family embedded in the library (listed below). FILE is your own CUDA C++:\n"
    "any argument ending in .cu or .cuh or naming a file. It may include <ptxkit/load.cuh>,\n"
    "<ptxkit/load_hint.cuh>, <ptxkit/warp.cuh>, <ptxkit/async.cuh> and <ptxkit/grid.cuh>.\n"
    "  -D NAME=VALUE      a define; for a FAMILY, one its source never reads, or a value outside the\n"
    "                     parameter space it declares for the tuner (BLOCK_SIZE, UNROLL, VEC_UNROLL,\n"
    "                     VEC_BYTES, LOAD_OP), is a warning\n"
    "  --strict           makes those warnings usage errors (exit 2)\n"
    "  --entry EXPR, --name-expression EXPR\n"
    "                     the kernel to compile: an extern \"C\" name or a C++ name expression such as\n"
    "                     'scale<256, float>'; the PTX then starts with a comment giving its lowered\n"
    "                     name. Without it, every extern \"C\" kernel of the file.\n"
    "  --header NAME=PATH the file PATH is the header the source includes as \"NAME\" (PATH alone:\n"
    "                     NAME is its file name)\n"
    "  -I DIR, --include-dir DIR\n"
    "                     a directory of headers, searched after the file's own directory and before\n"
    "                     the CUDA toolkit's\n"
    "  --option OPT       an NVRTC option (-use_fast_math, -lineinfo, -maxrregcount=64)\n";

static void list_families(FILE *out) {
    fprintf(out, "families:");
    const char *name;
    for (int i = 0; (name = ptxkit_program_builtin_source_name_get(i)) != NULL; i++) {
        size_t len = strlen(name);
        if (len > 3 && strcmp(name + len - 3, ".cu") == 0) fprintf(out, " %.*s", (int)(len - 3), name);
    }
    fputc('\n', out);
}

/* Whether the library holds family `family` (its source family.cu). */
static bool builtin_family(const char *family, const char **text) {
    char name[256];
    const char *unused;
    snprintf(name, sizeof name, "%s.cu", family);
    return ptxkit_program_builtin_source_get(name, text ? text : &unused, NULL) == PTXKIT_SUCCESS;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A user file rather than a family: it says so by its suffix or a slash;
 * else an embedded family of that name wins over a file of that name. */
static bool is_user_file(const char *arg) {
    if (ends_with(arg, ".cu") || ends_with(arg, ".cuh") || strchr(arg, '/')) return true;
    if (builtin_family(arg, NULL)) return false;
    struct stat st;
    return stat(arg, &st) == 0 && S_ISREG(st.st_mode);
}

/* sm_XY, compute_XY or XY, each with an optional "a" (the architecture-
 * specific feature set, sm_90 on); range-checked before the cast */
static bool parse_arch(const char *text, void *value, char *why, size_t why_size) {
    const char *v = text;
    if (strncmp(v, "sm_", 3) == 0 || strncmp(v, "compute_", 8) == 0) v = strchr(v, '_') + 1;
    char *end;
    errno = 0;
    long arch = v[0] >= '0' && v[0] <= '9' ? strtol(v, &end, 10) : 0;
    bool specific = arch && !errno && *end == 'a';
    if (specific) end++;
    if (arch >= 30 && arch <= 200 && !errno && !*end && (!specific || arch >= 90)) {
        *(int *)value = (int)arch | (specific ? PTXKIT_ARCH_SPECIFIC : 0);
        return true;
    }
    snprintf(why, why_size, "takes sm_XY, compute_XY or XY (30 to 200), or sm_XYa from sm_90a on");
    return false;
}

/* "90" or "90a", as the user wrote it */
static const char *arch_text(int arch, char *buf, size_t size) {
    snprintf(buf, size, "%d%s", arch & ~PTXKIT_ARCH_SPECIFIC, arch & PTXKIT_ARCH_SPECIFIC ? "a" : "");
    return buf;
}

/* NAME or NAME=VALUE with NAME an identifier: what NVRTC's -D takes */
static bool check_define(const char *d, void *value, char *why, size_t why_size) {
    (void)value;
    size_t name = strspn(d, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
    if (name > 0 && !(d[0] >= '0' && d[0] <= '9') && (d[name] == 0 || (d[name] == '=' && cli_parse_define(d))))
        return true;
    snprintf(why, why_size, "takes NAME or NAME=VALUE (NAME an identifier, VALUE printable, at most %d characters)",
             CLI_DEFINE_MAX);
    return false;
}

static int default_arch(void) {
    ptxkit_context *ctx;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) return 90;
    ptxkit_device_info d;
    ptxkit_device_info_get(ctx, &d);
    ptxkit_context_destroy(ctx);
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
    const char *include_dirs[MAX_INCLUDE_DIRS];
    int include_dir_count;
    const char *entry;
    int arch;
    bool resources;
} compile_args;

static int compile_embedded_family(const compile_args *a) {
    const char *options[MAX_OPTIONS + 1];
    int count = 0;
    for (int i = 0; i < a->option_count; i++) options[count++] = a->options[i];
    if (a->resources) options[count++] = "--ptxas-options=-v";
    /* the family's source as a program: the library compiles its own
     * families the same way (name family.cu, the built-in headers) */
    char name[256];
    const char *text = NULL;
    snprintf(name, sizeof name, "%s.cu", a->target);
    ptxkit_program *program = NULL;
    ptxkit_compiled out = {0};
    ptxkit_status st = builtin_family(a->target, &text) ? PTXKIT_SUCCESS : PTXKIT_ERROR_NOT_FOUND;
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_create(name, text, NULL, 0, &program);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_add_options(program, options, count);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_compile(program, NULL, a->defines, a->define_count, a->arch, !a->resources, &out);
    ptxkit_program_destroy(program);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit compile: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error());
        return 1;
    }
    char arch[16];
    if (a->resources)
        printf("%s for sm_%s: CUBIN of %zu bytes in %.1f ms\n%s", a->target, arch_text(a->arch, arch, sizeof arch),
               out.size, out.compile_ms, out.log ? out.log : "(NVRTC gave no resource report)\n");
    else
        fwrite(out.image, 1, out.size, stdout);
    ptxkit_program_compiled_free(&out);
    return 0;
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
            fprintf(stderr, "ptxkit compile: --header takes NAME=PATH or PATH, not '%s'\n%s", spec, compile_usage);
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
    ptxkit_status st = PTXKIT_SUCCESS;
    if (!code) st = ptxkit_program_create_from_file(a->target, headers, a->header_count, &program);
    if (!code && st == PTXKIT_SUCCESS && a->include_dir_count &&
        (st = ptxkit_program_add_include_dirs(program, a->include_dirs, a->include_dir_count)) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit compile: -I: %s\n", ptxkit_last_error());
        code = 2;
    }
    /* options the library refuses (an architecture) are usage errors */
    if (!code && st == PTXKIT_SUCCESS &&
        (st = ptxkit_program_add_options(program, options, option_count)) == PTXKIT_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "ptxkit compile: %s (use --arch)\n%s", ptxkit_last_error(), compile_usage);
        code = 2;
    }
    /* no entry: every extern "C" kernel of the file */
    if (!code && st == PTXKIT_SUCCESS)
        st = ptxkit_program_compile(program, a->entry, a->defines, a->define_count, a->arch, !a->resources, &compiled);
    if (!code && st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit compile: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error());
        code = 1;
    }
    if (!code) {
        const char *image = compiled.image, *log = compiled.log;
        size_t size = compiled.size;
        char what[1400];
        if (a->entry) snprintf(what, sizeof what, "%s, entry %s (%s)", a->target, a->entry, compiled.lowered_name);
        else snprintf(what, sizeof what, "%s", a->target);
        if (a->resources) {
            char arch[16];
            printf("%s for sm_%s: %s of %zu bytes in %.1f ms\n%s", what, arch_text(a->arch, arch, sizeof arch),
                   compiled.is_cubin ? "CUBIN" : "PTX", size, compiled.compile_ms,
                   log ? log : "(NVRTC gave no resource report)\n");
        } else {
            /* a PTX comment: the output stays valid PTX */
            if (a->entry) printf("// ptxkit compile: %s\n", what);
            fwrite(image, 1, size, stdout);
        }
    }
    ptxkit_program_compiled_free(&compiled);
    ptxkit_program_destroy(program);
    for (int i = 0; i < a->header_count; i++) free(texts[i]);
    return code;
}

int cmd_compile(int argc, char **argv) {
    static compile_args a;
    memset(&a, 0, sizeof a);
    const char *name_expression = NULL;
    bool ptx = false, strict = false;
    const arg_option options[] = {
        {.name = "define", .short_name = 'D', .kind = ARG_TEXTS, .value = a.defines, .count = &a.define_count,
         .max = PTXKIT_MAX_KERNEL_DEFINES, .parse = check_define},
        {.name = "option", .kind = ARG_TEXTS, .value = a.options, .count = &a.option_count, .max = MAX_OPTIONS},
        {.name = "header", .kind = ARG_TEXTS, .value = a.header_specs, .count = &a.header_count, .max = MAX_HEADERS},
        {.name = "include-dir", .short_name = 'I', .kind = ARG_TEXTS, .value = a.include_dirs,
         .count = &a.include_dir_count, .max = MAX_INCLUDE_DIRS},
        {.name = "entry", .kind = ARG_TEXT, .value = &a.entry},
        {.name = "name-expression", .kind = ARG_TEXT, .value = &name_expression},
        {.name = "arch", .kind = ARG_PARSE, .value = &a.arch, .parse = parse_arch},
        {.name = "ptx", .kind = ARG_FLAG, .value = &ptx},
        {.name = "resources", .kind = ARG_FLAG, .value = &a.resources},
        {.name = "strict", .kind = ARG_FLAG, .value = &strict},
        {0}};
    static const char *const exclusive[] = {"ptx,resources", "entry,name-expression", NULL};
    const arg_spec spec = {.command = "compile", .usage = compile_usage, .help = compile_help,
                           .more_help = list_families, .options = options, .operands = "a FAMILY or a FILE.cu",
                           .min_operands = 1, .max_operands = 1, .exclusive = exclusive};
    char **operands;
    int rc = args_parse(&spec, argc, argv, NULL, &operands, NULL);
    if (rc >= 0) return rc;
    a.target = operands[0];
    if (name_expression) a.entry = name_expression;
    if (is_user_file(a.target)) {
        if (strict) return args_error(&spec, "--strict checks a FAMILY's defines, not your own file's");
        if (!a.arch) a.arch = default_arch();
        return compile_user_file(&a);
    }
    if (!builtin_family(a.target, NULL)) {
        char names[1024] = "";
        const char *name;
        for (int i = 0; (name = ptxkit_program_builtin_source_name_get(i)) != NULL; i++) {
            size_t len = strlen(name);
            if (len > 3 && strcmp(name + len - 3, ".cu") == 0 && strlen(names) + len < sizeof names)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%.*s", names[0] ? ", " : "",
                         (int)(len - 3), name);
        }
        return args_error(&spec, "no kernel family '%s' and no file of that name (families: %s)", a.target, names);
    }
    if (a.entry || a.header_count)
        return args_error(&spec, "--entry and --header are for your own files, not family %s", a.target);
    if (a.include_dir_count) return args_error(&spec, "-I is for your own files, not family %s", a.target);
    if (!compile_check_defines(a.target, a.defines, a.define_count, strict))
        return args_error(&spec, "--strict: the defines above are not in family %s's space", a.target);
    if (!a.arch) a.arch = default_arch();
    return compile_embedded_family(&a);
}
