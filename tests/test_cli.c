/* The ptxkit command: exit codes and output that need no GPU.
 * usage: test_cli PTXKIT PYTHON VALIDATOR SCHEMA_DIR */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <cjson/cJSON.h>
#include <xxhash.h>

#include "report_validate.h"
#include "test_util.h"
#include "tune/record.h"

static const char *exe;
static cJSON *schema;          /* schemas/reports.json: the reports' description */
static bool validator;         /* python3-jsonschema: the JSON Schema checks run */

typedef struct result {
    int code;
    char out[1 << 16], err[1 << 14];
} result;

static char *slurp(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

static void run(result *r, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s >/tmp/ptxkit-cli-out.%d 2>/tmp/ptxkit-cli-err.%d", exe, args, (int)getpid(), (int)getpid());
    int status = system(cmd);
    r->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    char path[64];
    snprintf(path, sizeof path, "/tmp/ptxkit-cli-out.%d", (int)getpid());
    slurp(path, r->out, sizeof r->out);
    remove(path);
    snprintf(path, sizeof path, "/tmp/ptxkit-cli-err.%d", (int)getpid());
    slurp(path, r->err, sizeof r->err);
    remove(path);
}

static bool have_gpu(void) {
    ptxkit_context *ctx;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) return false;
    ptxkit_context_destroy(ctx);
    return true;
}

static void help_and_unknown(void **state) {
    (void)state;
    static result r;
    run(&r, "--help");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, "compile"));
    run(&r, "frobnicate");
    assert_int_equal(r.code, 2);
    assert_non_null(strstr(r.err, "unknown command"));
    const char *helps[] = {"info --help",          "compile --help",        "bench --help", "bench copy --help",
                           "bench launch --help",  "bench startup --help",  "cache --help"};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        run(&r, helps[i]);
        if (r.code != 0) fail_msg("ptxkit %s exited %d", helps[i], r.code);
        assert_non_null(strstr(r.out, "usage"));
    }
}

static void compile_prints_ptx(void **state) {
    (void)state;
    if (!ptxkit_jit_available()) skip();
    static result r;
    run(&r, "compile copy --arch sm_90");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, ".target sm_90"));
    assert_non_null(strstr(r.out, ".entry ptxkit_copy_vec16"));
    run(&r, "compile copy --arch sm_90 -D BLOCK_SIZE=512 -DLOAD_OP=6");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, ".maxntid 512"));
    assert_non_null(strstr(r.out, "ld.global.nc.v4.u32"));
    run(&r, "compile copy --arch sm_90 --resources");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, "registers"));
    assert_non_null(strstr(r.out, "spill"));
    /* the architecture-specific feature set */
    run(&r, "compile copy --arch sm_90a");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, ".target sm_90a"));
    run(&r, "compile copy --arch sm_90a --resources");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, "copy for sm_90a: CUBIN"));
}

static void compile_errors(void **state) {
    (void)state;
    if (!ptxkit_jit_available()) skip();
    static result r;
    run(&r, "compile nosuchfamily --arch sm_90"); /* a usage error naming the families, not a missing source path */
    assert_int_equal(r.code, 2);
    assert_non_null(strstr(r.err, "no kernel family 'nosuchfamily'"));
    assert_non_null(strstr(r.err, "families: copy"));
    assert_null(strstr(r.err, "nosuchfamily.cu"));
    run(&r, "compile copy --arch sm_90 -DLOAD_OP=42");
    assert_int_equal(r.code, 1);
    assert_non_null(strstr(r.err, "LOAD_OP must be 0..6"));
    run(&r, "compile copy --arch banana");
    assert_int_equal(r.code, 2);
}

/* ptxkit compile FILE.cu: the user's own source, its headers, defines and
 * entry (a C++ name expression). */
static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void compile_user_file(void **state) {
    (void)state;
    if (!ptxkit_jit_available()) skip();
    static result r;
    char dir[64], source[96], header[96], broken[96], args[1024];
    snprintf(dir, sizeof dir, "/tmp/ptxkit-cli-user.%d", (int)getpid());
    mkdir(dir, 0700);
    snprintf(source, sizeof source, "%s/scale.cu", dir);
    snprintf(header, sizeof header, "%s/offset.txt", dir);
    snprintf(broken, sizeof broken, "%s/broken.cu", dir);
    write_text(source, "#include \"scale/offset.h\"\n"
                       "#include <ptxkit/load.cuh>\n"
                       "template <int BLOCK, typename T>\n"
                       "__global__ void __launch_bounds__(BLOCK) scale(const T *in, T *out, T f, unsigned long long n) {\n"
                       "    unsigned long long i = (unsigned long long)blockIdx.x * BLOCK + threadIdx.x;\n"
                       "    if (i < n) out[i] = in[i] * f + scale_offset<T>();\n"
                       "}\n"
                       "extern \"C\" __global__ void copy_f32(const float *in, float *out) {\n"
                       "    out[threadIdx.x] = ptxkit::ld_f32(in + threadIdx.x);\n"
                       "}\n");
    write_text(header, "template <typename T> __device__ T scale_offset() { return T(SCALE_OFFSET); }\n");
    write_text(broken, "extern \"C\" __global__ void k(int *o) {\n    o[0] = 1;\n    o[1] = not_declared;\n}\n");

    /* a template instance by name expression: its mangled name, first */
    snprintf(args, sizeof args, "compile %s --arch sm_90 --entry 'scale<128, float>' --header scale/offset.h=%s -DSCALE_OFFSET=3",
             source, header);
    run(&r, args);
    if (r.code != 0) fail_msg("ptxkit %s exited %d: %s", args, r.code, r.err);
    assert_non_null(strstr(r.out, "_Z5scaleILi128EfEvPKT0_PS0_S0_y"));
    assert_int_equal(strncmp(r.out, "// ptxkit compile:", 18), 0);
    assert_non_null(strstr(r.out, ".entry _Z5scaleILi128EfEvPKT0_PS0_S0_y("));
    assert_non_null(strstr(r.out, ".maxntid 128"));
    assert_non_null(strstr(r.out, ".target sm_90"));
    /* --name-expression is the same option; -D reaches <ptxkit/load.cuh> */
    snprintf(args, sizeof args, "compile %s --arch sm_90 --name-expression copy_f32 --header scale/offset.h=%s "
             "-DSCALE_OFFSET=3 -D LOAD_OP=3 --option -lineinfo", source, header);
    run(&r, args);
    if (r.code != 0) fail_msg("ptxkit %s exited %d: %s", args, r.code, r.err);
    assert_non_null(strstr(r.out, "ld.global.cs.f32"));
    assert_non_null(strstr(r.out, ".loc")); /* -lineinfo */
    /* without an entry: every extern "C" kernel */
    snprintf(args, sizeof args, "compile %s --arch sm_90 --header scale/offset.h=%s -DSCALE_OFFSET=3 -DLOAD_OP=2", source,
             header);
    run(&r, args);
    if (r.code != 0) fail_msg("ptxkit %s exited %d: %s", args, r.code, r.err);
    assert_non_null(strstr(r.out, ".entry copy_f32("));
    assert_non_null(strstr(r.out, "ld.global.cg.f32"));
    /* resources of the instance */
    snprintf(args, sizeof args, "compile %s --arch sm_90 --entry 'scale<64, double>' --header scale/offset.h=%s "
             "-DSCALE_OFFSET=3 --resources", source, header);
    run(&r, args);
    if (r.code != 0) fail_msg("ptxkit %s exited %d: %s", args, r.code, r.err);
    assert_non_null(strstr(r.out, "registers"));
    assert_non_null(strstr(r.out, "_Z5scaleILi64EdEvPKT0_PS0_S0_y"));

    /* errors: the user's file and line; a missing entry; a missing file or
     * header; an architecture given as an option */
    snprintf(args, sizeof args, "compile %s --arch sm_90", broken);
    run(&r, args);
    assert_int_equal(r.code, 1);
    char where[128];
    snprintf(where, sizeof where, "%s(3)", broken);
    assert_non_null(strstr(r.err, where));
    snprintf(args, sizeof args, "compile %s --arch sm_90 --header scale/offset.h=%s -DSCALE_OFFSET=3 --entry no_such_kernel",
             source, header);
    run(&r, args);
    assert_int_equal(r.code, 1);
    assert_non_null(strstr(r.err, "not found"));
    run(&r, "compile /nonexistent/kernel.cu --arch sm_90");
    assert_int_equal(r.code, 1);
    assert_non_null(strstr(r.err, "/nonexistent/kernel.cu"));
    snprintf(args, sizeof args, "compile %s --arch sm_90 --header scale/offset.h=/nonexistent/offset.h", source);
    run(&r, args);
    assert_int_equal(r.code, 1);
    assert_non_null(strstr(r.err, "/nonexistent/offset.h"));
    snprintf(args, sizeof args, "compile %s --option -arch=sm_80", source);
    run(&r, args);
    assert_int_equal(r.code, 2);
    assert_non_null(strstr(r.err, "--arch"));
    run(&r, "compile copy --arch sm_90 --entry ptxkit_copy_vec16");
    assert_int_equal(r.code, 2);
    remove(source);
    remove(header);
    remove(broken);
    rmdir(dir);
}

static void gpu_commands_without_gpu(void **state) {
    (void)state;
    if (have_gpu()) skip();
    static result r;
    const char *commands[] = {"info", "bench copy", "bench launch", "bench startup --user", "bench startup --runs 2"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        run(&r, commands[i]);
        assert_int_equal(r.code, 1);
        /* one line naming the reason */
        char *nl = strchr(r.err, '\n');
        assert_non_null(nl);
        assert_string_equal(nl + 1, "");
        assert_non_null(strstr(r.err, "no usable GPU"));
    }
}

/* A tuning database whose one entry carries `when`, with a valid checksum. */
static void write_tune_db(const char *path, const char *when) {
    char text[1024];
    int n = snprintf(text, sizeof text,
                     "ptxkit-tune-db 1\nentry\tdevice=GPU\tcc=90\tsms=132\tdriver=13000\tnvrtc=13.0\tlib=0.1.0"
                     "\tfamily=reduce\tvariant=sum.float32\tlog2n=24\tblock=256\titems=4\tvec=16\tbpsm=0\tload=nc"
                     "\tgbs=1.5\tdefault_gbs=1.0\twhen=%s\n",
                     when);
    snprintf(text + n, sizeof text - (size_t)n, "end\tentries=1\txxh3_64=%016llx\n",
             (unsigned long long)XXH3_64bits(text, (size_t)n));
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A time beyond localtime_r's range crashed `tune --show` (NULL to strftime). */
static void tune_show_far_future(void **state) {
    (void)state;
    static result r;
    char path[64];
    snprintf(path, sizeof path, "/tmp/ptxkit-cli-tune.%d.db", (int)getpid());
    setenv("PTXKIT_TUNE_DB", path, 1);
    write_tune_db(path, "67768036191676800");
    run(&r, "tune --show");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, "ignored"));
    write_tune_db(path, "253402300799"); /* the last accepted second */
    run(&r, "tune --show");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, "sum.float32"));
    unsetenv("PTXKIT_TUNE_DB");
    remove(path);
}

/* Out-of-range numbers are usage errors, not wrapped into range. */
static void compile_arch_range(void **state) {
    (void)state;
    static result r;
    const char *bad[] = {"sm_4294967386", "sm_4294967296", "sm_18446744073709551706", "sm_-90", "sm_", "sm_90x", "9O"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "compile copy --arch %s", bad[i]);
        run(&r, args);
        if (r.code != 2) fail_msg("ptxkit %s exited %d", args, r.code);
        assert_non_null(strstr(r.err, "--arch"));
    }
}

/* A cache directory path that is a regular file is an error, not "0 kernels". */
static void cache_dir_is_a_file(void **state) {
    (void)state;
    static result r;
    char path[64];
    snprintf(path, sizeof path, "/tmp/ptxkit-cli-cachefile.%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fclose(f);
    char *saved = getenv("PTXKIT_CACHE_DIR") ? strdup(getenv("PTXKIT_CACHE_DIR")) : NULL;
    setenv("PTXKIT_CACHE_DIR", path, 1);
    run(&r, "cache");
    assert_int_equal(r.code, 1);
    assert_non_null(strstr(r.err, "not a directory"));
    run(&r, "cache --purge");
    assert_int_equal(r.code, 1);
    /* an unusable cap: the default is used and the reason shown */
    char empty[64];
    snprintf(empty, sizeof empty, "/tmp/ptxkit-cli-cache.%d", (int)getpid());
    setenv("PTXKIT_CACHE_DIR", empty, 1); /* missing: an empty cache */
    setenv("PTXKIT_CACHE_MAX_MB", "17592186044416", 1);
    run(&r, "cache");
    unsetenv("PTXKIT_CACHE_MAX_MB");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.err, "PTXKIT_CACHE_MAX_MB='17592186044416' ignored"));
    assert_non_null(strstr(r.out, "cap 512 MiB"));
    if (saved) setenv("PTXKIT_CACHE_DIR", saved, 1);
    else unsetenv("PTXKIT_CACHE_DIR");
    free(saved);
    remove(path);
}

/* Usage errors exit 2 with the usage line before any GPU is opened, so on
 * every machine (`bench copy --size abc` said "no usable GPU"). */
static void usage_errors_before_the_gpu(void **state) {
    (void)state;
    static result r;
    static const char *const bad[] = {
        "bench copy --size abc", "bench copy --size 0", "bench copy --size -1", "bench copy --size 1Q",
        "bench copy --reps x", "bench copy --block 12x", "bench copy --path foo", "bench copy --device x",
        "bench access --items x", "bench access --mib 1", "bench access --reps 0", "bench access --op bogus",
        "bench aos --points x", "bench aos --block x", "bench banks --reps x", "bench banks --iters 0",
        "bench transpose --reps x", "bench transpose --shape 5x5junk", "bench reduce --reps x",
        "bench reduce --block x", "bench reduce --vector x", "bench reduce --sizes -1", "bench reduce --log2 x",
        "bench reduce --ops bogus", "bench reduce --path bogus", "bench reduce --load bogus",
        "bench blocks copy --n abc", "bench blocks", "bench blocks nope", "bench startup --bogus",
        "ladder reduce --block x", "ladder reduce --reps x", "ladder reduce --sizes -1", "ladder reduce --steps 0",
        "ladder reduce --op bogus", "ladder", "ladder nope", "ladder scan --steps 0", "ladder gemm --size x",
        "tune --budget x", "tune --sizes x", "tune --threads 0", "tune bogus", "info --device x", "info extra",
        "compile copy -D 1X=2", "compile copy -D =1", "compile copy -DX=", "compile copy -D 'X=a\tb'",
        "compile copy --arch x", "cache --bogus", "bench nosuch", "nosuch", "bench user-tune --log2 x",
        "bench user-tune --budget 0", "bench launch --bogus",
        "bench streams --log2 19", "bench streams --chunks 4100", "bench streams --chunks 1K", "bench streams --streams 17",
        "bench streams --memory bogus", "bench streams --kernels light,x", "bench streams --heavy-iters 0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(&r, bad[i]);
        if (r.code != 2 || !strstr(r.err, "usage") || strstr(r.err, "no usable GPU"))
            fail_msg("ptxkit %s: exit %d, stderr:\n%s", bad[i], r.code, r.err);
    }
}

/* Unusable environment values: the library keeps the default and the
 * reason; the command prints one warning line for each. */
static void environment_warnings(void **state) {
    (void)state;
    static result r;
    static const struct { const char *name, *value, *says; } bad[] = {
        {"PTXKIT_TUNE", "bogus", "PTXKIT_TUNE='bogus' ignored"},
        {"PTXKIT_TUNE_BUDGET", "abc", "PTXKIT_TUNE_BUDGET='abc' ignored"},
        {"PTXKIT_TUNE_BUDGET", "5abc", "PTXKIT_TUNE_BUDGET='5abc' ignored"},
        {"PTXKIT_CACHE_MAX_MB", "abc", "PTXKIT_CACHE_MAX_MB='abc' ignored"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i].name, bad[i].value, 1);
        run(&r, "cache");
        unsetenv(bad[i].name);
        assert_int_equal(r.code, 0);
        char *hit = strstr(r.err, bad[i].says);
        if (!hit) fail_msg("%s=%s: stderr:\n%s", bad[i].name, bad[i].value, r.err);
        assert_true(strncmp(r.err, "ptxkit: warning: ", 17) == 0);
        char *nl = strchr(r.err, '\n');
        assert_non_null(nl);
        assert_string_equal(nl + 1, ""); /* one line */
    }
    /* valid values: no warning */
    setenv("PTXKIT_TUNE", "auto", 1);
    setenv("PTXKIT_TUNE_BUDGET", "2.5", 1);
    setenv("PTXKIT_CACHE_MAX_MB", "64", 1);
    run(&r, "cache");
    unsetenv("PTXKIT_TUNE");
    unsetenv("PTXKIT_TUNE_BUDGET");
    unsetenv("PTXKIT_CACHE_MAX_MB");
    assert_int_equal(r.code, 0);
    assert_string_equal(r.err, "");
}

static cJSON *parse_file(const char *path) {
    static char text[1 << 16];
    cJSON *doc = cJSON_Parse(slurp(path, text, sizeof text));
    if (!doc) fail_msg("%s is not JSON:\n%s", path, text);
    return doc;
}

static cJSON *member(const cJSON *o, const char *name) {
    cJSON *m = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!m) fail_msg("no field '%s'", name);
    return m;
}

/* `ptxkit info` without a GPU prints what needs none, and exits 1. */
static void info_without_gpu(void **state) {
    (void)state;
    if (have_gpu()) skip();
    static result r;
    run(&r, "info");
    assert_int_equal(r.code, 1);
    const char *lines[] = {"ptxkit            " PTXKIT_VERSION_STRING, "NVRTC ", "kernel cache ", "tuning database ",
                           "driver            not usable: "};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!strstr(r.out, lines[i])) fail_msg("no '%s' in:\n%s", lines[i], r.out);
    assert_non_null(strstr(r.err, "no usable GPU"));
    char path[64];
    snprintf(path, sizeof path, "/tmp/ptxkit-cli-info.%d.json", (int)getpid());
    char args[128];
    snprintf(args, sizeof args, "info --json %s", path);
    run(&r, args);
    assert_int_equal(r.code, 1);
    cJSON *doc = parse_file(path);
    assert_string_equal(member(doc, "schema")->valuestring, "ptxkit-info/1");
    if (validator && report_validate_file(path, "info", NULL, NULL) != 0) fail_msg("%s: not the info schema", path);
    assert_string_equal(member(doc, "library")->valuestring, PTXKIT_VERSION_STRING);
    assert_true(cJSON_IsString(member(doc, "build_type")));
    cJSON *nv = member(doc, "nvrtc");
    assert_true(cJSON_IsBool(member(nv, "available")));
    assert_true(cJSON_IsString(member(nv, cJSON_IsTrue(member(nv, "available")) ? "version" : "error")));
    cJSON *kc = member(doc, "kernel_cache");
    assert_true(cJSON_IsString(member(kc, "directory")));
    assert_true(cJSON_IsNumber(member(kc, "kernels")) && cJSON_IsNumber(member(kc, "bytes")) &&
                cJSON_IsNumber(member(kc, "cap_bytes")));
    cJSON *td = member(doc, "tuning_database");
    assert_true(cJSON_IsString(member(td, "path")) && cJSON_IsString(member(td, "message")));
    cJSON *drv = member(doc, "driver");
    assert_true(cJSON_IsFalse(member(drv, "usable")));
    assert_true(cJSON_IsString(member(drv, "error")));
    assert_true(cJSON_IsNull(member(doc, "device")));
    cJSON_Delete(doc);
    remove(path);
    /* the same on standard output, the text left out */
    run(&r, "info --json");
    assert_int_equal(r.code, 1);
    doc = cJSON_Parse(r.out);
    assert_non_null(doc);
    cJSON_Delete(doc);
    run(&r, "info --csv");
    assert_int_equal(r.code, 2);
}

/* Checks a report against its JSON Schema; returns its first table. */
static const cJSON *check_report(const cJSON *doc, const char *command) {
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "kind")->valuestring, command);
    if (validator && report_validate_doc(doc, NULL) != 0) fail_msg("%s report: not its schema", command);
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "tables"), 0);
}

/* Every command that prints tables has its report in the schema, and the
 * schema names no command that does not exist. */
static void schema_covers_every_command(void **state) {
    (void)state;
    static result r;
    static const char *const no_tables[] = {"info", "compile", "cache", "bench user-tune", "report", NULL};
    /* the commands, then the subcommands of those that have them */
    static const char *const lists[] = {"--help", "bench --help", "ladder --help"};
    static const char *const headings[] = {"commands:\n", "benchmarks:\n", "ladders:\n"};
    static const char *const prefixes[] = {"", "bench ", "ladder "};
    int listed = 0;
    for (int l = 0; l < 3; l++) {
        run(&r, lists[l]);
        char *p = strstr(r.out, headings[l]);
        assert_non_null(p);
        for (p = strchr(p, '\n') + 1; p[0] == ' ' && p[1] == ' ' && p[2] != ' '; p = strchr(p, '\n') + 1) {
            char name[64], command[80];
            if (sscanf(p, " %63s", name) != 1 || name[0] == '-') break;
            if (!l && (!strcmp(name, "bench") || !strcmp(name, "ladder"))) continue;
            snprintf(command, sizeof command, "%s%s", prefixes[l], name);
            bool tables = true;
            for (int k = 0; no_tables[k]; k++) tables = tables && strcmp(no_tables[k], command);
            const cJSON *reports = cJSON_GetObjectItemCaseSensitive(schema, "reports");
            if (tables && !cJSON_GetObjectItemCaseSensitive(reports, command))
                fail_msg("'ptxkit %s' prints tables; schemas/reports.json has no report for it", command);
            listed++;
        }
    }
    assert_true(listed >= 17);
    const cJSON *report;
    cJSON_ArrayForEach(report, cJSON_GetObjectItemCaseSensitive(schema, "reports")) {
        char args[128];
        snprintf(args, sizeof args, "%s --help", report->string); /* "tune --show --help" is tune's help */
        run(&r, args);
        if (r.code != 0) fail_msg("the schema's '%s' is no command", report->string);
    }
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* --json FILE --csv FILE --md FILE at once: three consistent files. */
static void report_files(void **state) {
    (void)state;
    static result r;
    static char csv[1 << 14], md[1 << 14];
    char db[64], base[64], args[512];
    snprintf(db, sizeof db, "/tmp/ptxkit-cli-report.%d.db", (int)getpid());
    snprintf(base, sizeof base, "/tmp/ptxkit-cli-report.%d", (int)getpid());
    setenv("PTXKIT_TUNE_DB", db, 1);
    write_tune_db(db, "1763850000");
    char record[96], msg[256];
    snprintf(record, sizeof record, "%s.record.jsonl", base); /* beside the database */
    remove(record);
    tune_record_line line = {.n = 1 << 24, .param_count = 2, .outcome = TUNE_RECORD_OK, .ms = 0.0254, .gbs = 2642.5,
                             .samples = 5, .when = 1763850000, .code = 0x1234};
    tune_db_key_make(&line.key, "GPU", 90, 132, 13000, 13, 0, "0.1.0");
    snprintf(line.family, sizeof line.family, "reduce");
    snprintf(line.variant, sizeof line.variant, "sum.float32");
    snprintf(line.names[0], sizeof line.names[0], "block");
    snprintf(line.names[1], sizeof line.names[1], "items");
    line.values[0] = 256;
    line.values[1] = 4;
    assert_int_equal(tune_record_append(record, &line, msg, sizeof msg), PTXKIT_SUCCESS);
    snprintf(args, sizeof args, "tune --show --json %s.json --csv %s.csv --md %s.md", base, base, base);
    run(&r, args);
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, "sum.float32")); /* the text table still on standard output */
    char path[96];
    snprintf(path, sizeof path, "%s.json", base);
    cJSON *doc = parse_file(path);
    remove(path);
    const cJSON *t = check_report(doc, "tune --show");
    /* the schema is no rubber stamp: a cell of the wrong type, a column
     * missing, a column it does not know, or metadata without its date
     * fails it */
    for (int damage = 0; validator && damage < 4; damage++) {
        cJSON *copy = cJSON_Duplicate(doc, 1);
        cJSON *table0 = cJSON_GetArrayItem(member(copy, "tables"), 0);
        cJSON *row0 = cJSON_GetArrayItem(member(table0, "rows"), 0), *cols0 = member(table0, "columns");
        if (damage == 0) cJSON_ReplaceItemInObject(row0, "sms", cJSON_CreateString("132"));
        if (damage == 1) {
            cJSON_DeleteItemFromArray(cols0, 11); /* gbps */
            cJSON_DeleteItemFromObject(row0, "gbps");
        }
        if (damage == 2) cJSON_AddStringToObject(cJSON_GetArrayItem(cols0, 0), "name2", "x"),
                         cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cols0, 0), "name", cJSON_CreateString("bogus"));
        if (damage == 3) cJSON_DeleteItemFromObject(member(copy, "metadata"), "date");
        if (report_validate_doc(copy, NULL) != 1) fail_msg("damage %d passed the check", damage);
        cJSON_Delete(copy);
    }
    cJSON *cols = member(t, "columns"), *rows = member(t, "rows");
    assert_int_equal(cJSON_GetArraySize(rows), 1);
    cJSON *row = cJSON_GetArrayItem(rows, 0);
    assert_true(cJSON_IsNumber(member(row, "sms")) && member(row, "sms")->valueint == 132);
    assert_true(cJSON_IsNumber(member(row, "gbps")));
    assert_string_equal(member(t, "id")->valuestring, "tune_database");
    assert_string_equal(member(t, "title")->valuestring, "tuning database"); /* the file's state in the note */
    assert_true(cJSON_IsString(member(t, "note")));
    assert_string_equal(member(row, "variant")->valuestring, "sum.float32");
    /* the configuration as an object of its parameters */
    cJSON *choice = member(row, "choice");
    assert_true(cJSON_IsObject(choice));
    assert_int_equal(member(choice, "block")->valueint, 256);
    assert_string_equal(member(choice, "load")->valuestring, "nc");
    assert_null(cJSON_GetObjectItem(choice, "bpsm")); /* at its built-in default: left out */
    /* the record's table: every configuration measured */
    cJSON *tables = member(doc, "tables");
    assert_int_equal(cJSON_GetArraySize(tables), 2);
    cJSON *rec_rows = member(cJSON_GetArrayItem(tables, 1), "rows");
    assert_int_equal(cJSON_GetArraySize(rec_rows), 1);
    cJSON *rec = cJSON_GetArrayItem(rec_rows, 0);
    assert_int_equal(member(member(rec, "config"), "items")->valueint, 4);
    assert_string_equal(member(rec, "outcome")->valuestring, "ok");
    assert_true(member(rec, "time_us")->valuedouble > 25.3 && member(rec, "time_us")->valuedouble < 25.5);
    assert_int_equal(member(rec, "samples")->valueint, 5);
    /* CSV and Markdown: the same tables, a header row and a line a row */
    snprintf(path, sizeof path, "%s.csv", base);
    slurp(path, csv, sizeof csv);
    if (validator) {
        char json_path[96];
        snprintf(json_path, sizeof json_path, "%s.doc.json", base);
        char *text = cJSON_Print(doc);
        write_text(json_path, text);
        free(text);
        if (report_validate_file(json_path, NULL, NULL, path) != 0) fail_msg("CSV:\n%s", csv);
        remove(json_path);
    }
    remove(path);
    assert_int_equal(strncmp(csv, "table,this_gpu,", 15), 0); /* one CSV document: a table column */
    assert_int_equal(count_lines(csv), 3);
    snprintf(path, sizeof path, "%s.md", base);
    slurp(path, md, sizeof md);
    remove(path);
    assert_non_null(strstr(md, "| this_gpu |"));
    assert_non_null(strstr(md, "sum.float32"));
    (void)cols;
    cJSON_Delete(doc);

    /* - is standard output, alone */
    run(&r, "tune --show --json -");
    assert_int_equal(r.code, 0);
    doc = cJSON_Parse(r.out);
    if (!doc) fail_msg("not JSON:\n%s", r.out);
    check_report(doc, "tune --show");
    cJSON_Delete(doc);
    /* --json alone is --json -: the same document */
    run(&r, "tune --show --json");
    assert_int_equal(r.code, 0);
    doc = cJSON_Parse(r.out);
    if (!doc) fail_msg("not JSON:\n%s", r.out);
    check_report(doc, "tune --show");
    cJSON_Delete(doc);
    run(&r, "tune --show --csv"); /* both tables, a table column */
    assert_int_equal(r.code, 0);
    assert_int_equal(count_lines(r.out), 3);
    run(&r, "tune --show --record --csv"); /* the record's */
    assert_int_equal(r.code, 0);
    assert_int_equal(count_lines(r.out), 2);
    assert_non_null(strstr(r.out, "block=256 items=4"));
    /* an unwritable report path fails before any work, exit 1 */
    const char *unwritable[] = {"tune --show --json /nonexistent-dir/r.json", "tune --show --csv /proc/r.csv",
                                "tune --show --md /tmp"};
    for (size_t i = 0; i < sizeof unwritable / sizeof unwritable[0]; i++) {
        run(&r, unwritable[i]);
        if (r.code != 1 || !strstr(r.err, "cannot write") || strstr(r.out, "tuning"))
            fail_msg("ptxkit %s: exit %d, stdout:\n%s\nstderr:\n%s", unwritable[i], r.code, r.out, r.err);
    }
    remove(record);
    /* conflicts and missing values are usage errors */
    const char *bad[] = {"tune --show --csv --json", "tune --show --json - --md -", "tune --show --md",
                         "tune --show --json a.json --json b.json", "tune --show --json=", "tune --show --csv --csv"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(&r, bad[i]);
        if (r.code != 2 || !strstr(r.err, "usage")) fail_msg("ptxkit %s: exit %d, stderr:\n%s", bad[i], r.code, r.err);
    }
    unsetenv("PTXKIT_TUNE_DB");
    remove(db);
}

/* A database of the given entry lines, with its end line and checksum. */
static void write_db_entries(const char *path, const char *lines, int count) {
    static char text[1 << 14];
    int n = snprintf(text, sizeof text, "ptxkit-tune-db 1\n%s", lines);
    snprintf(text + n, sizeof text - (size_t)n, "end\tentries=%d\txxh3_64=%016llx\n", count,
             (unsigned long long)XXH3_64bits(text, (size_t)n));
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int compare_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The rows of `tune --show --json` without this_gpu, sorted, for comparing
 * databases (the store keeps its own order). */
static char *show_rows(void) {
    static result r;
    run(&r, "tune --show --json");
    assert_int_equal(r.code, 0);
    cJSON *doc = cJSON_Parse(r.out);
    if (!doc) fail_msg("not JSON:\n%s", r.out);
    cJSON *rows = member(cJSON_GetArrayItem(member(doc, "tables"), 0), "rows"), *row;
    char *lines[64];
    size_t count = 0, total = 1;
    cJSON_ArrayForEach(row, rows) {
        cJSON_DeleteItemFromObject(row, "this_gpu");
        assert_true(count < 64);
        lines[count] = cJSON_PrintUnformatted(row);
        total += strlen(lines[count++]) + 1;
    }
    cJSON_Delete(doc);
    qsort(lines, count, sizeof lines[0], compare_text);
    char *text = calloc(1, total);
    for (size_t i = 0; i < count; i++) {
        strcat(text, lines[i]);
        strcat(text, "\n");
        free(lines[i]);
    }
    return text;
}

/* An export holding one tunable entry whose parameter P is `value` (JSON
 * text: a number or a string). */
static void write_tunable_export(const char *json, const char *value) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"schema\": \"ptxkit-tune-export/1\", \"entries\": [{\"key\": {\"device\": \"G\", \"cc\": 90, "
             "\"sm_count\": 1, \"driver\": 1, \"nvrtc_major\": 13, \"nvrtc_minor\": 0, \"library\": \"0.1.0\"}, "
             "\"family\": \"app.exact\", \"variant\": \"-\", \"log2n\": 20, \"config\": {\"block_size\": 0, "
             "\"items_per_thread\": 0, \"vector_bytes\": 0, \"blocks_per_sm\": 0, \"load\": \"default\"}, "
             "\"params\": {\"P\": %s}, \"gbs\": 1, \"default_gbs\": 1, \"when\": 1}]}",
             value);
    write_text(json, text);
}

/* Integers an import cannot take exactly are refused; those it takes come
 * back from an export as they went in. 9223372036854775807 as a JSON
 * number was stored as INT64_MIN (a bound compared in doubles), and
 * 9007199254740991 went out as 9.00719925474099e+15 (cJSON's 15 digits). */
static void exact_integers(const char *json, const char *import_args) {
    static result r;
    static const char *const refused[] = {"9223372036854775807", "9223372036854775808", "-9223372036854775809",
                                          "9007199254740993", "1e300", "\"9223372036854775808\""};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        write_tunable_export(json, refused[i]);
        run(&r, import_args);
        if (r.code != 1) fail_msg("import of P = %s: exit %d", refused[i], r.code);
    }
    static const struct {
        const char *in, *out;
    } exact[] = {{"\"9223372036854775807\"", "9223372036854775807"},
                 {"\"-9223372036854775808\"", "-9223372036854775808"},
                 {"\"9007199254740991\"", "9007199254740991"},
                 {"9007199254740991", "9007199254740991"},
                 {"999999999999999", NULL}};
    char export_args[256];
    snprintf(export_args, sizeof export_args, "tune --export %s", json);
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        write_tunable_export(json, exact[i].in);
        run(&r, import_args);
        if (r.code != 0) fail_msg("import of P = %s: exit %d\n%s", exact[i].in, r.code, r.err);
        run(&r, export_args);
        assert_int_equal(r.code, 0);
        cJSON *doc = parse_file(json), *e;
        bool found = false;
        cJSON_ArrayForEach(e, member(doc, "entries")) {
            if (strcmp(member(e, "family")->valuestring, "app.exact") != 0) continue;
            cJSON *p = member(member(e, "params"), "P");
            if (exact[i].out) {
                if (!cJSON_IsString(p) || strcmp(p->valuestring, exact[i].out) != 0)
                    fail_msg("P = %s exported as %s", exact[i].in, cJSON_PrintUnformatted(p));
            } else {
                assert_true(cJSON_IsNumber(p) && p->valuedouble == 999999999999999.0);
            }
            found = true;
        }
        assert_true(found);
        cJSON_Delete(doc);
    }
}

/* --export then --import into an empty database gives the same entries,
 * an application tunable's named parameters included. */
static void tune_export_import(void **state) {
    (void)state;
    static result r;
    char db[64], db2[64], json[64], args[256];
    snprintf(db, sizeof db, "/tmp/ptxkit-cli-export.%d.db", (int)getpid());
    snprintf(db2, sizeof db2, "/tmp/ptxkit-cli-import.%d.db", (int)getpid());
    snprintf(json, sizeof json, "/tmp/ptxkit-cli-export.%d.json", (int)getpid());
    remove(db2);
    write_db_entries(db,
                     "entry\tdevice=GPU A\tcc=90\tsms=132\tdriver=13000\tnvrtc=13.0\tlib=0.1.0\tfamily=reduce"
                     "\tvariant=sum.float32\tlog2n=24\tblock=256\titems=4\tvec=16\tbpsm=0\tload=nc\tgbs=2650.25"
                     "\tdefault_gbs=2500.5\twhen=1763850000\n"
                     "entry\tdevice=GPU A\tcc=90\tsms=132\tdriver=13000\tnvrtc=13.0\tlib=0.1.0\tfamily=myapp.stencil"
                     "\tvariant=-\tlog2n=20\tblock=0\titems=0\tvec=0\tbpsm=0\tload=default\tgbs=900.5"
                     "\tdefault_gbs=700\twhen=1763850001\tp.TILE=32\tp.BIG=9007199254740993\n",
                     2);
    setenv("PTXKIT_TUNE_DB", db, 1);
    char *before = show_rows();
    snprintf(args, sizeof args, "tune --export %s", json);
    run(&r, args);
    if (r.code != 0) fail_msg("%s: exit %d\n%s", args, r.code, r.err);
    cJSON *doc = parse_file(json);
    assert_string_equal(member(doc, "schema")->valuestring, "ptxkit-tune-export/1");
    if (validator && report_validate_file(json, "tune --export", NULL, NULL) != 0) fail_msg("%s: not its schema", json);
    assert_true(cJSON_IsObject(member(doc, "metadata")));
    cJSON *entries = member(doc, "entries");
    assert_int_equal(cJSON_GetArraySize(entries), 2);
    cJSON *e;
    cJSON_ArrayForEach(e, entries) {
        cJSON *key = member(e, "key");
        assert_string_equal(member(key, "device")->valuestring, "GPU A");
        assert_int_equal(member(key, "cc")->valueint, 90);
        assert_true(cJSON_IsNumber(member(key, "driver")) && cJSON_IsString(member(key, "library")));
        assert_true(cJSON_IsString(member(e, "family")) && cJSON_IsString(member(e, "variant")));
        assert_true(cJSON_IsNumber(member(e, "log2n")) && cJSON_IsNumber(member(e, "gbs")) &&
                    cJSON_IsNumber(member(e, "when")));
        cJSON *config = member(e, "config");
        assert_true(cJSON_IsNumber(member(config, "block_size")) && cJSON_IsString(member(config, "load")));
        cJSON *params = member(e, "params");
        if (strcmp(member(e, "family")->valuestring, "myapp.stencil") == 0) {
            assert_int_equal(member(params, "TILE")->valueint, 32);
            /* beyond 2^53: a string, not a rounded number */
            assert_string_equal(member(params, "BIG")->valuestring, "9007199254740993");
        } else {
            assert_int_equal(member(config, "block_size")->valueint, 256);
            assert_int_equal(cJSON_GetArraySize(params), 0);
        }
    }
    cJSON_Delete(doc);
    /* into an empty database */
    setenv("PTXKIT_TUNE_DB", db2, 1);
    snprintf(args, sizeof args, "tune --import %s", json);
    run(&r, args);
    if (r.code != 0) fail_msg("%s: exit %d\n%s", args, r.code, r.err);
    assert_non_null(strstr(r.out, "imported 2 entries"));
    char *after = show_rows();
    assert_string_equal(before, after);
    free(after);
    /* and again: a merge, not a duplicate */
    run(&r, args);
    assert_int_equal(r.code, 0);
    after = show_rows();
    assert_string_equal(before, after);
    free(after);
    free(before);
    /* a damaged file imports nothing */
    static const char *const broken[] = {
        "not json", "{\"schema\": \"other\", \"entries\": []}",
        "{\"schema\": \"ptxkit-tune-export/1\", \"entries\": [{\"key\": 1}]}",
        "{\"schema\": \"ptxkit-tune-export/1\", \"entries\": [{\"key\": {\"device\": \"G\", \"cc\": 90, "
        "\"sm_count\": 1, \"driver\": 1, \"nvrtc_major\": 13, \"nvrtc_minor\": 0, \"library\": \"0.1.0\"}, "
        "\"family\": \"reduce\", \"variant\": \"sum.float32\", \"log2n\": 20, \"config\": {\"block_size\": 256, "
        "\"items_per_thread\": 1, \"vector_bytes\": 16, \"blocks_per_sm\": 0, \"load\": \"bogus\"}, \"gbs\": 1, "
        "\"default_gbs\": 1, \"when\": 1}]}"};
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        write_text(json, broken[i]);
        run(&r, args);
        if (r.code != 1) fail_msg("import of %s: exit %d", broken[i], r.code);
    }
    after = show_rows();
    assert_non_null(strstr(after, "myapp.stencil"));
    free(after);
    exact_integers(json, args);
    /* usage errors */
    const char *bad[] = {"tune --export", "tune --export a.json --import b.json", "tune --import a.json --show",
                         "tune --export a.json reduce"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(&r, bad[i]);
        if (r.code != 2 || !strstr(r.err, "usage")) fail_msg("ptxkit %s: exit %d, stderr:\n%s", bad[i], r.code, r.err);
    }
    unsetenv("PTXKIT_TUNE_DB");
    remove(db);
    remove(db2);
    remove(json);
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    exe = argv[1];
    report_validate_setup(argv[2], argv[3], argv[4]);
    validator = report_validator_available();
    if (!validator) fprintf(stderr, "python3-jsonschema is not installed: the JSON Schema checks are skipped\n");
    char desc[4096];
    snprintf(desc, sizeof desc, "%s/reports.json", argv[4]);
    size_t size;
    char *text = test_read_file(desc, &size);
    if (!text || !(schema = cJSON_Parse(text))) {
        fprintf(stderr, "%s: not read\n", desc);
        return 1;
    }
    free(text);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help_and_unknown), cmocka_unit_test(compile_prints_ptx),
        cmocka_unit_test(compile_errors), cmocka_unit_test(compile_user_file),
        cmocka_unit_test(gpu_commands_without_gpu),
        cmocka_unit_test(tune_show_far_future), cmocka_unit_test(compile_arch_range),
        cmocka_unit_test(cache_dir_is_a_file), cmocka_unit_test(usage_errors_before_the_gpu),
        cmocka_unit_test(environment_warnings), cmocka_unit_test(info_without_gpu),
        cmocka_unit_test(report_files), cmocka_unit_test(tune_export_import),
        cmocka_unit_test(schema_covers_every_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
