/* The ptxkit command's checked argument parsers (tools/ptxkit/common.c,
 * args.c): sizes, bounded integers and -D defines at their edges, typed
 * JSON cells; then, given the ptxkit program, every command driven with
 * each bad-argument case of issue 15 (exit 2 and its usage lines, before
 * any GPU is opened) and with values that must be accepted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "test_util.h"

static void sizes(void **state) {
    (void)state;
    static const struct {
        const char *text;
        size_t value;
    } good[] = {{"1", 1},          {"0", 0},           {"1048576", 1 << 20}, {"0x1000", 4096}, {"0512", 512}, {"0X1f", 31}, {"00", 0}, {"2^0", 1},
                {"2^20", 1 << 20}, {"2^63", (size_t)1 << 63}, {"64K", 65536}, {"64k", 65536},   {"1M", 1 << 20},
                {"3G", (size_t)3 << 30}, {"18446744073709551615", SIZE_MAX}, {"17179869183G", (size_t)17179869183 << 30}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        size_t v = 7;
        if (!cli_parse_size(good[i].text, &v) || v != good[i].value) fail_msg("'%s' -> %zu", good[i].text, v);
    }
    static const char *const bad[] = {"", "abc", "-1", "+1", " 1", "1 ", "1Q", "1KB", "2^", "2^64", "2^-1", "2^x",
                                      "18446744073709551616", "17179869184G", "0x", "0xg", "0x-1", "1e6", "K", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t v = 7;
        if (cli_parse_size(bad[i], &v)) fail_msg("'%s' accepted as %zu", bad[i] ? bad[i] : "(null)", v);
        assert_int_equal(v, 7);
    }
}

static void integers(void **state) {
    (void)state;
    long v;
    assert_true(cli_parse_long("0", 0, 10, &v) && v == 0);
    assert_true(cli_parse_long("-5", -10, 10, &v) && v == -5);
    assert_true(cli_parse_long("1024", 0, 1024, &v) && v == 1024);
    static const char *const bad[] = {"", "x", "12x", "1025", "-1", " 1", "+1", "0x10", "99999999999999999999", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cli_parse_long(bad[i], 0, 1024, &v)) fail_msg("'%s' accepted", bad[i] ? bad[i] : "(null)");
    int x = 3;
    assert_false(cli_arg_int("test", "--n", "4294967297", 0, 100, &x)); /* no cast before the check */
    assert_int_equal(x, 3);
}

static void defines(void **state) {
    (void)state;
    static const char *const good[] = {"BLOCK_SIZE=512", "_x=1", "X=unsigned int", "LOAD_OP=6", "A1=(1<<4)"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!cli_parse_define(good[i])) fail_msg("'%s' refused", good[i]);
    char longest[CLI_DEFINE_MAX + 2];
    memset(longest, 'A', sizeof longest);
    longest[1] = '=';
    longest[CLI_DEFINE_MAX] = 0;
    assert_true(cli_parse_define(longest));
    longest[CLI_DEFINE_MAX] = 'A';
    longest[CLI_DEFINE_MAX + 1] = 0;
    assert_false(cli_parse_define(longest));
    static const char *const bad[] = {"", "X", "X=", "=1", "1X=2", "X-Y=1", "X =1", "X=a\tb", "X=a\nb", "X=\x7f",
                                      "X=\xc3\xa4", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cli_parse_define(bad[i])) fail_msg("'%s' accepted", bad[i] ? bad[i] : "(null)");
}

/* JSON cells: strtod's inf, nan and 0x10 are no JSON numbers; a declared
 * number column gives null for a cell that is none, a string column keeps
 * its text, and an undeclared column takes only JSON's number grammar. */
static void json_cells(void **state) {
    (void)state;
    const char *headers[] = {"num", "str", "auto"};
    cli_table *t = table_new("t", 3, headers);
    table_types(t, "ns");  /* wrong length: ignored */
    table_types(t, "nsx"); /* not a type: ignored */
    table_types(t, "ns-"); /* the last column undeclared */
    static const struct { const char *cell; int num_kind; int auto_kind; } cases[] = {
        /* kinds: 0 null, 1 number, 2 string */
        {"1.5", 1, 1}, {"-2", 1, 1}, {"1e3", 1, 1}, {"+0.25", 1, 2}, {"inf", 0, 2}, {"nan", 0, 2}, {"0x10", 0, 2},
        {"-", 0, 2}, {"2^24", 0, 2}, {" 1", 0, 2}, {"01", 0, 2}, {"1.", 0, 2}, {"1e999", 0, 0}, {"", 0, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) table_add(t, cases[i].cell, cases[i].cell, cases[i].cell);
    cJSON *doc = table_to_json(t, true);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    doc = cJSON_Parse(text); /* what was written parses */
    assert_non_null(doc);
    free(text);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *row = cJSON_GetArrayItem(rows, (int)i);
        cJSON *str = cJSON_GetObjectItem(row, "str");
        assert_true(cJSON_IsString(str) && strcmp(str->valuestring, cases[i].cell) == 0);
        cJSON *a = cJSON_GetObjectItem(row, "auto");
        int kind = cJSON_IsNull(a) ? 0 : cJSON_IsNumber(a) ? 1 : 2;
        if (kind != cases[i].auto_kind) fail_msg("undeclared '%s': kind %d", cases[i].cell, kind);
    }
    cJSON_Delete(doc);
    table_free(t);
    /* declared */
    t = table_new("t", 3, headers);
    table_types(t, "nsn");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) table_add(t, cases[i].cell, cases[i].cell, cases[i].cell);
    doc = table_to_json(t, true);
    rows = cJSON_GetObjectItem(doc, "rows");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *n = cJSON_GetObjectItem(cJSON_GetArrayItem(rows, (int)i), "num");
        int kind = cJSON_IsNull(n) ? 0 : cJSON_IsNumber(n) ? 1 : 2;
        if (kind != cases[i].num_kind) fail_msg("number column '%s': kind %d", cases[i].cell, kind);
    }
    cJSON *cols = cJSON_GetObjectItem(doc, "columns");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 0), "type")->valuestring, "number");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cols, 1), "type")->valuestring, "string");
    cJSON_Delete(doc);
    table_free(t);
}

/* Configurations: "block=512 items=8 vec=- load=nc" is an object of its
 * parameters; "-" is left out, so the built-in defaults are {}. */
static void config_cells(void **state) {
    (void)state;
    const char *headers[] = {"choice"};
    cli_table *t = table_new("t", 1, headers);
    table_types(t, "c");
    table_add(t, "block=512 items=8 vec=- load=nc");
    table_add(t, "built-in defaults");
    table_add(t, "BLOCK_SIZE=256 BIG=9007199254740993 NEG=-3");
    cJSON *doc = table_to_json(t, true);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    doc = cJSON_Parse(text);
    free(text);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "columns"), 0), "type")->valuestring,
                        "object");
    cJSON *rows = cJSON_GetObjectItem(doc, "rows");
    cJSON *a = cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "choice");
    assert_true(cJSON_IsObject(a) && cJSON_GetArraySize(a) == 3);
    assert_int_equal(cJSON_GetObjectItem(a, "block")->valueint, 512);
    assert_int_equal(cJSON_GetObjectItem(a, "items")->valueint, 8);
    assert_null(cJSON_GetObjectItem(a, "vec"));
    assert_string_equal(cJSON_GetObjectItem(a, "load")->valuestring, "nc");
    cJSON *b = cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 1), "choice");
    assert_true(cJSON_IsObject(b) && cJSON_GetArraySize(b) == 0);
    cJSON *c = cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 2), "choice");
    assert_int_equal(cJSON_GetObjectItem(c, "NEG")->valueint, -3);
    cJSON_Delete(doc);
    table_free(t);
}

/* ---- every command, driven --------------------------------------------- */

static const char *exe;

typedef struct result {
    int code;
    char out[1 << 15], err[1 << 14];
} result;

static void read_into(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    remove(path);
}

static void run(result *r, const char *args) {
    char cmd[2048], out[64], err[64];
    snprintf(out, sizeof out, "/tmp/ptxkit-args-out.%d", (int)getpid());
    snprintf(err, sizeof err, "/tmp/ptxkit-args-err.%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s' %s >%s 2>%s </dev/null", exe, args, out, err);
    int status = system(cmd);
    r->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    read_into(out, r->out, sizeof r->out);
    read_into(err, r->err, sizeof r->err);
}

static bool gpu_present(void) {
    int count = 0;
    return ptxkit_device_count_get(&count) == PTXKIT_SUCCESS && count > 0;
}

/* A usage error: exit 2, one line naming it, then the command's usage
 * lines; never the GPU. */
static void expect_usage_error(const char *command, const char *args, const char *says) {
    static result r;
    char line[1024], usage[128];
    snprintf(line, sizeof line, "%s %s", command, args);
    run(&r, line);
    snprintf(usage, sizeof usage, "usage: ptxkit %s", command);
    char *space = strchr(usage + strlen("usage: ptxkit "), ' ');
    if (space && strncmp(command, "bench ", 6) != 0) *space = 0; /* "compile copy": compile's usage */
    if (space && strncmp(command, "bench ", 6) == 0 && (space = strchr(space + 1, ' '))) *space = 0; /* bench blocks copy */
    if (r.code != 2 || !strstr(r.err, usage) || strstr(r.err, "no usable GPU") || (says && !strstr(r.err, says)))
        fail_msg("ptxkit %s: exit %d, expected 2 with '%s'%s%s; stderr:\n%s", line, r.code, usage, says ? " and " : "",
                 says ? says : "", r.err);
    if (strncmp(r.err, "ptxkit ", 7) != 0) fail_msg("ptxkit %s: the first line does not name the command:\n%s", line, r.err);
}

enum { T_DEVICE = 1, T_TABLES = 2, T_SVG = 4, T_JSON = 8 };

typedef struct command_case {
    const char *command;   /* with the operands it needs */
    unsigned traits;
    const char *option, *good; /* a value option and a value it takes */
} command_case;

static const command_case commands[] = {
    {"info", T_DEVICE | T_JSON, NULL, NULL},
    {"compile copy", 0, "--arch", "sm_90"},
    {"cache", 0, NULL, NULL},
    {"bench copy", T_DEVICE | T_TABLES, "--reps", "3"},
    {"bench startup", T_DEVICE | T_TABLES, "--runs", "2"},
    {"bench launch", T_DEVICE | T_TABLES, "--rounds", "2"},
    {"bench access", T_DEVICE | T_TABLES | T_SVG, "--reps", "3"},
    {"bench aos", T_DEVICE | T_TABLES | T_SVG, "--reps", "3"},
    {"bench banks", T_DEVICE | T_TABLES | T_SVG, "--iters", "3"},
    {"bench transpose", T_DEVICE | T_TABLES | T_SVG, "--reps", "3"},
    {"bench reduce", T_DEVICE | T_TABLES, "--reps", "3"},
    {"bench user-tune", T_DEVICE, "--log2", "20"},
    {"bench scan", T_DEVICE | T_TABLES, "--warmup", "3"},
    {"bench blocks copy", T_DEVICE | T_TABLES | T_SVG, "--variant", "bytes"},
    {"ladder reduce", T_DEVICE | T_TABLES, "--reps", "3"},
    {"ladder scan", T_DEVICE | T_TABLES | T_SVG, "--reps", "3"},
    {"tune", T_DEVICE | T_TABLES, "--threads", "2"},
    {"bench compile", T_TABLES, "--arch", "90"},
};

/* What every command shares: --help and --version, unknown options, extra
 * operands, common options it does not take, missing, malformed and
 * repeated values, conflicting report flags. */
static void every_command(void **state) {
    (void)state;
    if (!exe) skip();
    static result r;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const command_case *c = &commands[i];
        char args[512];
        snprintf(args, sizeof args, "%s --help", c->command);
        run(&r, args);
        if (r.code != 0 || strncmp(r.out, "usage: ptxkit ", 14) != 0) fail_msg("ptxkit %s: exit %d", args, r.code);
        snprintf(args, sizeof args, "%s --version", c->command);
        run(&r, args);
        if (r.code != 0 || strcmp(r.out, "ptxkit " PTXKIT_VERSION_STRING "\n") != 0) fail_msg("ptxkit %s: %s", args, r.out);
        expect_usage_error(c->command, "--bogus", "unknown option '--bogus'");
        expect_usage_error(c->command, "-q", "unknown option '-q'");
        expect_usage_error(c->command, "one two", "unexpected argument");
        if (!(c->traits & T_SVG)) expect_usage_error(c->command, "--svg chart.svg", "--svg");
        if (c->traits & T_TABLES) {
            expect_usage_error(c->command, "--csv --json", "standard output can hold one");
            expect_usage_error(c->command, "--json - --md -", "standard output can hold one");
            expect_usage_error(c->command, "--md", "--md needs a");
            expect_usage_error(c->command, "--json a.json --json b.json", "--json given twice");
            expect_usage_error(c->command, "--csv=", "--csv needs a FILE");
        } else {
            expect_usage_error(c->command, "--csv", "--csv");
            expect_usage_error(c->command, "--md report.md", "--md");
            if (!(c->traits & T_JSON)) expect_usage_error(c->command, "--json", "--json");
        }
        if (c->traits & T_DEVICE) {
            static const char *const bad[] = {"--device x", "--device -1", "--device 1025", "--device 1e3", "--device ''",
                                              "--device 0 --device 0", "--device"};
            for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) expect_usage_error(c->command, bad[k], "--device");
        } else {
            expect_usage_error(c->command, "--device 0", "unknown option '--device'");
        }
        if (c->option) {
            char bad[128];
            expect_usage_error(c->command, c->option, "needs a value");
            static const char *const values[] = {"abc", "1Q", "''", "' 3'", "99999999999999999999"};
            for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
                if (strcmp(c->option, "--variant") == 0 && k != 2) continue; /* any text names a variant */
                snprintf(bad, sizeof bad, "%s %s", c->option, values[k]);
                expect_usage_error(c->command, bad, c->option);
            }
            snprintf(bad, sizeof bad, "%s %s %s %s", c->option, c->good, c->option, c->good);
            expect_usage_error(c->command, bad, "given twice");
        }
    }
}

/* The cases, command by command: unchecked numbers, unknown
 * enumerations, conflicting flags, families and -D values. */
static void each_bad_argument(void **state) {
    (void)state;
    if (!exe) skip();
    static const struct { const char *command, *args, *says; } bad[] = {
        {"bench copy", "--size abc", "--size takes a size"},
        {"bench copy", "--size 0", "--size"},
        {"bench copy", "--size -1", "--size"},
        {"bench copy", "--size 1KB", "--size"},
        {"bench copy", "--size 2^41", "--size"},
        {"bench copy", "--path foo", "--path takes auto, jit or ptx"},
        {"bench copy", "--block 12x", "--block"},
        {"bench copy", "--block 33", "power of two"},
        {"bench copy", "--block 4096", "power of two"},
        {"bench copy", "--reps 0", "--reps takes a whole number in [1, 10000]"},
        {"bench reduce", "--ops bogus", "--ops takes a comma-separated list of sum"},
        {"bench reduce", "--ops sum,,max", "--ops"},
        {"bench reduce", "--types float16", "--types"},
        {"bench reduce", "--vector 3", "--vector takes 0 (the default), 4, 8 or 16"},
        {"bench reduce", "--log2 41", "--log2"},
        {"bench reduce", "--sizes 1,,2", "--sizes"},
        {"bench reduce", "--log2 10 --sizes 1024", "--log2 and --sizes exclude each other"},
        {"bench reduce", "--load bogus", "--load takes one of"},
        {"bench reduce", "--passes 3", "--passes"},
        {"bench reduce", "--compare --compare", "--compare given twice"},
        {"bench scan", "--kinds bogus", "--kinds"},
        {"bench scan", "--dynamic 2", "--dynamic"},
        {"bench scan", "--sizes 0x", "--sizes"},
        {"bench scan", "--sizes 0512x", "--sizes"},
        {"bench scan", "--lookback 9", "--lookback"},
        {"bench scan", "--block 100", "power of two"},
        {"ladder reduce", "--op bogus", "--op takes one of sum"},
        {"ladder reduce", "--type float16", "--type takes one of"},
        {"ladder reduce", "--steps 0", "--steps"},
        {"ladder reduce", "--steps 1,11", "--steps"},
        {"ladder reduce", "--op and --type float32", "and of float32 is not provided"},
        {"ladder scan", "--type float32", "--type takes one of int32, uint32, int64, uint64"},
        {"ladder scan", "--kind bogus", "--kind takes one of exclusive, inclusive"},
        {"ladder scan", "--block 48", "power of two"},
        {"bench access", "--op bogus", "--op takes a load operator"},
        {"bench access", "--mib 1", "--mib"},
        {"bench access", "--items x", "--items"},
        {"bench aos", "--points 12", "--points"},
        {"bench banks", "--reps 0", "--reps"},
        {"bench transpose", "--shape 5x5junk", "--shape takes ROWSxCOLS"},
        {"bench launch", "--launches 0", "--launches"},
        {"bench startup", "--runs 1001", "--runs"},
        {"bench user-tune", "--budget 0", "--budget takes seconds in (0, 3600]"},
        {"bench user-tune", "--budget nan", "--budget"},
        {"bench user-tune", "--budget inf", "--budget"},
        {"bench blocks", "", "needs a FAMILY"},
        {"bench blocks", "nope", "no tunable family 'nope' (families: copy, reduce, transpose, scan)"},
        {"bench blocks", "reduce --variant sum.float16", "float16"},
        {"bench blocks", "copy --n abc", "--n"},
        {"tune", "bogus", "no tunable family 'bogus' (families: copy, reduce, transpose, scan, gemm)"},
        {"tune", "reduce --variant sum.float16", "float16"},
        {"tune", "gemm --variant float16.square", "gemm variants are <type>.<class>"},
        {"tune", "gemm --variant float32.tall", "float32.tall"},
        {"bench gemm", "--shapes 0", "--shapes"},
        {"bench gemm", "--shapes 4x4", "--shapes"},
        {"bench gemm", "--tiles 128x128", "--tiles"},
        {"bench gemm", "--types int32", "--types"},
        {"bench gemm", "--ops nx", "--ops"},
        {"bench gemm", "--cublas-f64 fast", "--cublas-f64"},
        {"ladder gemm", "--steps 9", "--steps"},
        {"ladder gemm", "--size 0", "--size"},
        {"tune", "--variant sum.float32", "--variant needs a FAMILY"},
        {"tune", "--exhaustive --verify-exhaustive", "exclude each other"},
        {"tune", "--no-save --no-record", "exclude each other"},
        {"tune", "--show --budget 5", "--show lists the database"},
        {"tune", "--show reduce", "--show lists the database"},
        {"tune", "--record", "--record goes with --show"},
        {"tune", "--export a.json --import b.json", "exclude each other"},
        {"tune", "--show --export a.json", "exclude each other"},
        {"tune", "--export a.json --budget 5", "--export takes no other option"},
        {"tune", "--budget 0", "--budget"},
        {"tune", "--budget 86401", "--budget"},
        {"tune", "--sizes 1,,2", "--sizes"},
        {"tune", "--sizes 0", "--sizes"},
        {"tune", "--max-variants 0", "--max-variants"},
        {"compile copy", "--ptx --resources", "--ptx and --resources exclude each other"},
        {"compile copy", "--entry k --name-expression k", "exclude each other"},
        {"compile copy", "-D", "-D needs a value"},
        {"compile copy", "-D 1X=2", "-D takes NAME or NAME=VALUE"},
        {"compile copy", "-D =1", "-D"},
        {"compile copy", "-DX=", "-D"},
        {"compile copy", "--define 'X=a\tb'", "--define"},
        {"compile copy", "--arch sm_90x", "--arch takes sm_XY"},
        {"compile copy", "--arch sm_80a", "sm_XYa from sm_90a on"},
        {"compile copy", "--arch sm_", "--arch"},
        {"compile copy", "--arch 29", "--arch"},
        {"compile copy", "--arch sm_90 -D BLOCK_SIZE=33 --strict", "outside the parameter space copy declares"},
        {"compile copy", "--arch sm_90 -D BLOCK_SIZE=4096 --strict", "BLOCK_SIZE: 32, 64, 128, 256, 512, 1024"},
        {"compile copy", "--arch sm_90 -D NOSUCH=1 --strict", "never reads NOSUCH"},
        {"compile reduce", "--arch sm_90 -D VEC_BYTES=32 --strict", "VEC_BYTES: 4, 8, 16"},
        {"compile reduce", "--arch sm_90 -D LOAD_OP=9 --strict", "LOAD_OP: 0, 1, 2, 3, 4, 5, 6"},
        {"compile", "nosuch", "no kernel family 'nosuch' and no file of that name (families: "},
        {"compile", "", "needs a FAMILY or a FILE.cu"},
        {"compile copy", "--entry k", "--entry and --header are for your own files"},
        {"compile copy", "-I /tmp", "-I is for your own files"},
        {"cache", "--purge --purge", "--purge given twice"},
        {"cache", "--purge=yes", "--purge takes no value"},
        {"info", "--json a.json --json b.json", "--json given twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_usage_error(bad[i].command, bad[i].args, bad[i].says);
}

/* Warnings, not errors, without --strict: the compile goes on (and fails
 * only if NVRTC does). */
static void define_warnings(void **state) {
    (void)state;
    if (!exe) skip();
    static result r;
    static const struct { const char *args, *says; } cases[] = {
        {"compile copy --arch sm_90 -D BLOCK_SIZE=33", "warning: -D BLOCK_SIZE=33: outside the parameter space"},
        {"compile copy --arch sm_90 -D NOSUCH=1", "warning: -D NOSUCH=1: family copy never reads NOSUCH"},
        {"compile copy --arch sm_90 -D LOAD_OP=42", "warning: -D LOAD_OP=42"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run(&r, cases[i].args);
        if (r.code == 2 || !strstr(r.err, cases[i].says)) fail_msg("ptxkit %s: exit %d\n%s", cases[i].args, r.code, r.err);
    }
    /* values in the space, names the family reads: no warning */
    run(&r, "compile copy --arch sm_90 -D BLOCK_SIZE=256 -D UNROLL=4 -D LOAD_OP=2 --strict");
    if (strstr(r.err, "warning") || r.code == 2) fail_msg("exit %d\n%s", r.code, r.err);
}

/* Values the parsers must accept: without a GPU each command gets as far
 * as opening it (exit 1), never a usage error. */
static void accepted_values(void **state) {
    (void)state;
    if (!exe || gpu_present()) skip();
    static result r;
    static const char *const good[] = {
        "bench copy --size 1G --size 2^20 --size 0x1000 --size 64k --path jit --block 256",
        "bench reduce --sizes 1K,2^20,3M --ops all --types int32 --vector 16 --load cg",
        "bench reduce --log2 10,20 --ops=sum,max --reps=3",
        "bench scan --sizes 0x100,1M --kinds inclusive,exclusive --dynamic 0",
        "ladder reduce --sizes 4M --steps 1,9 --op max --type float32",
        "ladder scan --log2 10,20 --type uint64 --kind inclusive --svg /tmp/never-written.svg",
        "tune reduce --variant max.int32 --sizes 1M,2^24 --budget 0.5 --no-record",
        "tune scan --variant sum.int32 --sizes 64K",
        "bench blocks scan --n 2^20 --json /tmp/never-written.json",
        "bench user-tune --log2 12 --budget 1.5",
        "bench copy --json=- ",
        "info --device 3",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        run(&r, good[i]);
        if (r.code != 1 || !strstr(r.err, "no usable GPU")) fail_msg("ptxkit %s: exit %d\n%s", good[i], r.code, r.err);
    }
}

/* A helper named by the environment (PTXKIT_CUB_LIB is dlopen'ed, the
 * others run) must be a regular file: an executable FIFO passed the old
 * access(X_OK) check and dlopen blocked on it. */
static void helper_paths(void **state) {
    (void)state;
    char dir[] = "/tmp/ptxkit-helper-XXXXXX", fifo[64], sub[64], file[64], path[4096];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/dir", dir);
    snprintf(file, sizeof file, "%s/file", dir);
    assert_int_equal(mkfifo(fifo, 0755), 0);
    assert_int_equal(mkdir(sub, 0755), 0);
    FILE *f = fopen(file, "w");
    fclose(f);
    assert_int_equal(chmod(file, 0755), 0);
    const char *const refused[] = {fifo, sub};
    for (int i = 0; i < 2; i++) {
        setenv("PTXKIT_TEST_HELPER", refused[i], 1);
        assert_false(cli_find_helper("none", "PTXKIT_TEST_HELPER", path, sizeof path));
        assert_false(cli_regular_file(refused[i]));
    }
    setenv("PTXKIT_TEST_HELPER", file, 1);
    assert_true(cli_find_helper("none", "PTXKIT_TEST_HELPER", path, sizeof path));
    unsetenv("PTXKIT_TEST_HELPER");
    unlink(fifo);
    unlink(file);
    rmdir(sub);
    rmdir(dir);
}

int main(int argc, char **argv) {
    exe = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest tests[] = {cmocka_unit_test(sizes), cmocka_unit_test(integers), cmocka_unit_test(defines),
                                       cmocka_unit_test(json_cells), cmocka_unit_test(config_cells),
                                       cmocka_unit_test(every_command), cmocka_unit_test(each_bad_argument),
                                       cmocka_unit_test(define_warnings), cmocka_unit_test(accepted_values),
                                       cmocka_unit_test(helper_paths)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
