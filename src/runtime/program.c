/* Programs: the application's CUDA C++ source, compiled per (entry,
 * defines) through the same registry, disk cache and NVRTC path as the
 * built-in families. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/cache_key.h"
#include "runtime/compile.h"
#include "runtime/embedded.h"
#include "runtime/header_tree.h"
#include "runtime/program.h"
#include "runtime/status.h"

#define MAX_OPTIONS PROGRAM_MAX_OPTIONS
/* handed-in headers are copied and searched by name: a bound on the count
 * keeps the arithmetic far from overflow (header trees on disk have none) */
#define MAX_PROGRAM_HEADERS 65536
#define MAX_SOURCE_BYTES ((size_t)64 << 20)

void ptxkit_program_destroy(ptxkit_program *p) {
    if (!p || p->builtin) return;
    for (int i = 0; i < p->header_count; i++) {
        free(p->header_names[i]);
        free(p->header_texts[i]);
    }
    for (int i = 0; i < p->option_count; i++) free(p->options[i]);
    free(p->header_names);
    free(p->header_texts);
    header_tree_destroy(p->tree);
    free(p->name);
    free(p->source);
    free(p);
}

static bool has_control_character(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return true;
    return false;
}

/* NVRTC's precompiled-header options (--pch, --use-pch, --pch-dir,
 * --create-pch, ... in their one- and two-dash spellings). */
static bool pch_option(const char *o) {
    while (*o == '-') o++;
    size_t len = strcspn(o, "=");
    for (size_t i = 0; i + 3 <= len; i++)
        if (memcmp(o + i, "pch", 3) == 0) return true;
    return false;
}

ptxkit_status ptxkit_program_create(const char *name, const char *source, const ptxkit_header *headers,
                                    int header_count, ptxkit_program **out) {
    if (!out) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create: out is NULL");
    *out = NULL;
    if (!name || !*name || !source)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create: %s",
                            !source ? "source is NULL" : "the program needs a name (used in compiler messages)");
    if (header_count < 0 || header_count > MAX_PROGRAM_HEADERS || (header_count > 0 && !headers))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create: %d headers (0 to %d, not NULL)",
                            header_count, MAX_PROGRAM_HEADERS);
    /* a newline in a name ends NVRTC's "file(line): error" lines early: a
     * name carrying "\n__nv_name_map(" made a compile error read as NOT_FOUND */
    if (has_control_character(name))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create: the program's name holds a control character");
    for (int i = 0; i < header_count; i++) {
        if (!headers[i].name || !*headers[i].name || !headers[i].text)
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create: header #%d has no name or text", i);
        if (has_control_character(headers[i].name))
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create: header #%d's name holds a control character", i);
        /* NVRTC would read one of two texts of a name, which the cache key
         * (all of them) cannot tell apart */
        for (int j = 0; j < i; j++)
            if (strcmp(headers[i].name, headers[j].name) == 0)
                return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create: two headers named '%s'",
                                    headers[i].name);
        if (embedded_is_builtin_header(headers[i].name))
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_program_create: header '%s' has the name of a ptxkit built-in header", headers[i].name);
    }
    ptxkit_program *p = calloc(1, sizeof *p);
    if (!p) return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_program_create: out of host memory");
    p->name = strdup(name);
    p->source = strdup(source);
    p->header_names = calloc((size_t)header_count + 1, sizeof *p->header_names);
    p->header_texts = calloc((size_t)header_count + 1, sizeof *p->header_texts);
    p->tree = header_tree_create(NULL);
    bool ok = p->name && p->source && p->header_names && p->header_texts && p->tree;
    for (int i = 0; ok && i < header_count; i++) {
        p->header_names[i] = strdup(headers[i].name);
        p->header_texts[i] = strdup(headers[i].text);
        p->header_count = i + 1;
        ok = p->header_names[i] && p->header_texts[i];
    }
    if (!ok) {
        ptxkit_program_destroy(p);
        return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_program_create: out of host memory");
    }
    p->hash = text_hash_of(p->name, p->source, (const char *const *)p->header_names,
                           (const char *const *)p->header_texts, p->header_count);
    *out = p;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_program_create_from_file(const char *path, const ptxkit_header *headers, int header_count,
                                              ptxkit_program **out) {
    if (!out || !path)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create_from_file: NULL argument");
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return record_error(NULL, PTXKIT_ERROR_IO, "ptxkit_program_create_from_file: cannot read kernel source %s", path);
    if (!S_ISREG(st.st_mode)) return record_error(NULL, PTXKIT_ERROR_IO, "ptxkit_program_create_from_file: kernel source %s is not a regular file", path);
    if ((size_t)st.st_size > MAX_SOURCE_BYTES)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_create_from_file: kernel source %s is larger than %zu MiB", path,
                            MAX_SOURCE_BYTES >> 20);
    FILE *f = fopen(path, "rb");
    if (!f) return record_error(NULL, PTXKIT_ERROR_IO, "ptxkit_program_create_from_file: cannot open kernel source %s", path);
    size_t size = (size_t)st.st_size;
    char *text = malloc(size + 1);
    size_t got = text ? fread(text, 1, size, f) : 0;
    fclose(f);
    if (!text) return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_program_create_from_file: out of host memory reading %s", path);
    text[got] = 0;
    if (got != size || strlen(text) != got) {
        free(text);
        return record_error(NULL, PTXKIT_ERROR_IO, "ptxkit_program_create_from_file: kernel source %s: short read or a NUL byte in the text", path);
    }
    ptxkit_status s = ptxkit_program_create(path, text, headers, header_count, out);
    free(text);
    /* the file's directory is searched first, as a compiler searches the
     * directory of the file it compiles */
    header_tree *tree = s == PTXKIT_SUCCESS ? header_tree_create(path) : NULL;
    if (s == PTXKIT_SUCCESS && !tree) {
        ptxkit_program_destroy(*out);
        *out = NULL;
        return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_program_create_from_file: out of host memory");
    }
    if (tree) {
        header_tree_destroy((*out)->tree);
        (*out)->tree = tree;
    }
    return s;
}

/* The directory of an include-path option ("-IDIR", "--include-path=DIR",
 * "-I=DIR"), NULL for any other option or an empty directory. */
static const char *include_dir_of(const char *o) {
    const char *dir = NULL;
    if (strncmp(o, "-I", 2) == 0) dir = o[2] == '=' ? o + 3 : o + 2;
    else if (strncmp(o, "--include-path=", 15) == 0) dir = o + 15;
    else if (strncmp(o, "-include-path=", 14) == 0) dir = o + 14;
    return dir && *dir ? dir : NULL;
}

ptxkit_status ptxkit_program_add_include_dirs(ptxkit_program *p, const char *const *dirs, int count) {
    if (!p || p->builtin || count < 0 || (count > 0 && !dirs))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_add_include_dirs: bad arguments");
    return header_tree_add_dirs(p->tree, dirs, count, "ptxkit_program_add_include_dirs");
}

text_hash program_header_digest(const ptxkit_program *p) {
    if (!p || !p->tree) return (text_hash){0, 0};
    return header_tree_digest(p->tree, p->hash, p->name, p->source, (const char *const *)p->header_names,
                              (const char *const *)p->header_texts, p->header_count);
}

/* The contents of every header a compile of p may read: the handed-in
 * ones and the tree on disk (the program's own text is not needed: NVRTC
 * compares the source's prelude itself). */
static text_hash program_pch_domain(const ptxkit_program *p) {
    text_hash tree = program_header_digest(p);
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    XXH3_128bits_update(&state, &tree, sizeof tree);
    for (int i = 0; i < p->header_count; i++) {
        XXH3_128bits_update(&state, p->header_names[i], strlen(p->header_names[i]) + 1);
        XXH3_128bits_update(&state, p->header_texts[i], strlen(p->header_texts[i]) + 1);
    }
    XXH128_hash_t h = XXH3_128bits_digest(&state);
    return (text_hash){h.low64, h.high64};
}

ptxkit_status ptxkit_program_add_options(ptxkit_program *p, const char *const *options, int count) {
    if (!p || count < 0 || (count > 0 && !options))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_add_options: bad arguments");
    /* bounded before anything is read: count may be INT_MAX */
    if (count > 4096)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_add_options: at most %d options",
                            MAX_OPTIONS);
    int dir_options = 0;
    for (int i = 0; i < count; i++) {
        const char *o = options[i];
        if (o && include_dir_of(o)) {
            dir_options++;
            continue;
        }
        if (!o || !*o)
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_add_options: option #%d is empty", i);
        /* the architecture is the device's own: a second one would compile
         * code the context cannot load */
        if (strstr(o, "-arch") == o || strstr(o, "--gpu-architecture") == o || strstr(o, "-gpu-architecture") == o)
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_program_add_options: '%s': ptxkit compiles for the context's GPU", o);
        /* a pre-included file is not scanned for the cache key */
        if (strncmp(o, "-I", 2) == 0 || strncmp(o, "--include-path", 14) == 0 || strncmp(o, "-include", 8) == 0 ||
            strncmp(o, "--pre-include", 13) == 0)
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_program_add_options: '%s': %s", o,
                                o[1] == 'I' || o[2] == 'i' ? "an include path takes its directory (-IDIR or --include-path=DIR)"
                                                           : "pre-included files are not supported; #include the header");
        if (pch_option(o))
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_program_add_options: '%s': ptxkit manages NVRTC's precompiled headers itself "
                                "(PTXKIT_PCH=off turns them off)", o);
    }
    if (count - dir_options > MAX_OPTIONS - p->option_count)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_add_options: at most %d options",
                            MAX_OPTIONS);
    /* the include directories first: a missing one refuses the whole call */
    for (int i = 0; i < count && dir_options; i++) {
        const char *dir = include_dir_of(options[i]);
        ptxkit_status st = dir ? header_tree_add_dirs(p->tree, &dir, 1, "ptxkit_program_add_options") : PTXKIT_SUCCESS;
        if (st != PTXKIT_SUCCESS) return st;
    }
    for (int i = 0; i < count; i++) {
        if (include_dir_of(options[i])) continue;
        if ((p->options[p->option_count] = strdup(options[i])) == NULL)
            return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_program_add_options: out of host memory");
        p->option_count++;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status program_check_entry(ptxkit_context *ctx, const char *entry, const char *const *defines, int define_count) {
    if (!entry || !*entry || strlen(entry) > 1024)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "kernel entry name is empty, NULL or too long");
    if (define_count < 0 || define_count > PTXKIT_MAX_KERNEL_DEFINES || (define_count > 0 && !defines))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%d defines (0 to %d, not NULL)", define_count,
                            PTXKIT_MAX_KERNEL_DEFINES);
    for (int i = 0; i < define_count; i++) {
        const char *d = defines[i];
        if (!d || !*d || *d == '=' || strchr(d, '\n'))
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "define #%d is not NAME or NAME=VALUE", i);
    }
    return PTXKIT_SUCCESS;
}

compile_request program_request(const ptxkit_program *p, const char *name_expression, const char *const *defines,
                                int define_count) {
    const char *const *dirs = NULL;
    int dir_count = header_tree_search_path(p->tree, &dirs); /* before the initializer: its order is unspecified */
    /* an application's program: its headers' contents name its precompiled prelude */
    text_hash domain = p->tree ? program_pch_domain(p) : (text_hash){0, 0};
    return (compile_request){
        .name = p->name,
        .source = p->source,
        .header_names = (const char *const *)p->header_names,
        .header_texts = (const char *const *)p->header_texts,
        .header_count = p->header_count,
        .builtin_headers = true,
        .defines = defines,
        .define_count = define_count,
        .options = (const char *const *)p->options,
        .option_count = p->option_count,
        .name_expression = name_expression,
        .include_dir_count = dir_count,
        .include_dirs = dirs,
        /* a prelude read from disk (the toolkit's, the application's) is what
         * costs parsing; ptxkit's own headers are small */
        .pch = p->tree != NULL,
        .pch_prelude_on_disk = p->tree && header_tree_file_count(p->tree) > 0,
        .pch_domain = domain,
    };
}

/* The families' sources, each a program made on first use. The table holds
 * immutable copies of the library's own text, so it is a memo, not state:
 * every context and thread sees the same programs. */
enum { BUILTIN_PROGRAMS = 32 };
static struct ptxkit_program builtin_programs[BUILTIN_PROGRAMS];
static int builtin_program_count;
static pthread_mutex_t builtin_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether `source` is "<family>.cu". */
static bool is_source_of(const char *source, const char *family, size_t family_len) {
    return strncmp(source, family, family_len) == 0 && strcmp(source + family_len, ".cu") == 0;
}

/* Every family kernel lookup comes here, so the programs made so far are
 * searched without the lock: an entry is complete before the count that
 * publishes it is stored (release), and is never changed afterwards. */
static const ptxkit_program *builtin_program_made(const char *name, size_t len, int count) {
    for (int i = 0; i < count; i++)
        if (is_source_of(builtin_programs[i].name, name, len)) return &builtin_programs[i];
    return NULL;
}

const ptxkit_program *builtin_program(const char *name) {
    if (!name) return NULL;
    size_t len = strlen(name);
    const ptxkit_program *found =
        builtin_program_made(name, len, __atomic_load_n(&builtin_program_count, __ATOMIC_ACQUIRE));
    if (found) return found;
    char source_name[96];
    if (snprintf(source_name, sizeof source_name, "%s.cu", name) >= (int)sizeof source_name) return NULL;
    pthread_mutex_lock(&builtin_lock);
    found = builtin_program_made(name, len, builtin_program_count);
    const embedded_file *file = found ? NULL : embedded_find(source_name);
    if (file && builtin_program_count < BUILTIN_PROGRAMS) {
        struct ptxkit_program *p = &builtin_programs[builtin_program_count];
        p->name = (char *)file->name;
        p->source = (char *)file->text;
        p->builtin = true;
        p->hash = text_hash_of(p->name, p->source, NULL, NULL, 0);
        __atomic_store_n(&builtin_program_count, builtin_program_count + 1, __ATOMIC_RELEASE);
        found = p;
    }
    pthread_mutex_unlock(&builtin_lock);
    return found;
}

ptxkit_status compile_family(ptxkit_context *ctx, const char *name, const char *const *defines, int define_count,
                             int arch, bool want_ptx, const char *const *extra_options, int extra_count,
                             compile_output *out) {
    memset(out, 0, sizeof *out);
    if (define_count < 0 || define_count > PTXKIT_MAX_DEFINES || extra_count < 0 || extra_count > 16)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "compile: too many defines or options");
    const ptxkit_program *p = builtin_program(name);
    if (!p) return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "compile: no kernel family '%s' (no embedded %s.cu)",
                                name ? name : "(null)", name ? name : "(null)");
    compile_request req = program_request(p, NULL, defines, define_count);
    req.options = extra_options;
    req.option_count = extra_count;
    return compile_source(ctx, &req, arch, want_ptx, out);
}

ptxkit_status ptxkit_program_compile(const ptxkit_program *p, const char *entry, const char *const *defines,
                                     int define_count, int arch, int want_ptx, ptxkit_compiled *out) {
    if (!out) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_compile: out is NULL");
    memset(out, 0, sizeof *out);
    if (!p) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_compile: program is NULL");
    int base = arch & ~PTXKIT_ARCH_SPECIFIC;
    if (base < 30 || base > 1000 || ((arch & PTXKIT_ARCH_SPECIFIC) && base < 90))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_program_compile: architecture %#x is not sm_30.. (or sm_90a.. with PTXKIT_ARCH_SPECIFIC)",
                            (unsigned)arch);
    /* NULL entry: the whole module (the name checked is a stand-in) */
    ptxkit_status st = program_check_entry(NULL, entry ? entry : "*", defines, define_count);
    if (st != PTXKIT_SUCCESS) return st;
    compile_request req = program_request(p, entry, defines, define_count);
    compile_output o;
    if ((st = compile_source(NULL, &req, arch, want_ptx != 0, &o)) != PTXKIT_SUCCESS) return st;
    out->image = o.image;
    out->size = o.size;
    out->is_cubin = o.is_cubin;
    out->log = o.log;
    out->lowered_name = o.lowered_name;
    out->compile_ms = o.compile_ms;
    return PTXKIT_SUCCESS;
}

void ptxkit_program_compiled_free(ptxkit_compiled *c) {
    if (!c) return;
    free(c->image);
    free(c->log);
    free(c->lowered_name);
    memset(c, 0, sizeof *c);
}

unsigned long long program_code_digest(const ptxkit_program *p) {
    if (!p) return 0;
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, &p->hash, sizeof p->hash);
    if (p->tree) {
        text_hash tree = program_header_digest(p);
        XXH3_64bits_update(&state, &tree, sizeof tree);
    }
    for (int i = 0; i < p->option_count; i++) XXH3_64bits_update(&state, p->options[i], strlen(p->options[i]) + 1);
    return (unsigned long long)XXH3_64bits_digest(&state);
}
