/* The ptxkit command's argument parsing (tools/ptxkit/args.c, common.c): the
 * input, split at NUL bytes, is an argument vector parsed against an option
 * table of every kind. Its strings also go through the checked value
 * parsers: -D NAME=VALUE, sizes (N, 0xN, 2^K, K/M/G) and bounded integers.
 * Accepted values must be what the parsers promise: within their bounds,
 * lists within their room, exclusive options never both, one table on
 * standard output. (The library takes -D text as given; it has no parser of
 * its own to fuzz.) */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "fuzz.h"

#define MAX_ARGS 24

static bool identifier_char(char c, bool first) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (!first && c >= '0' && c <= '9');
}

static void check_values(const char *s) {
    if (cli_parse_define(s)) {
        size_t len = strlen(s);
        const char *eq = strchr(s, '=');
        FUZZ_CHECK(len <= CLI_DEFINE_MAX && eq && eq > s && eq[1], "define shape: %s", s);
        for (const char *p = s; p < eq; p++) FUZZ_CHECK(identifier_char(*p, p == s), "define name: %s", s);
        for (const char *p = eq + 1; *p; p++) FUZZ_CHECK(*p >= 0x20 && *p <= 0x7e, "define value: %s", s);
    }
    size_t size;
    if (cli_parse_size(s, &size)) {
        FUZZ_CHECK(s[0] >= '0' && s[0] <= '9', "size with a sign or space: %s", s);
        if (strspn(s, "0123456789") == strlen(s)) {
            char back[32];
            snprintf(back, sizeof back, "%zu", size);
            const char *digits = s + strspn(s, "0");
            FUZZ_CHECK(strcmp(back, *digits ? digits : "0") == 0, "size %s read as %zu", s, size);
        }
    }
    long v;
    if (cli_parse_long(s, -1000, 1000, &v)) {
        FUZZ_CHECK(v >= -1000 && v <= 1000, "out of range: %s", s);
        FUZZ_CHECK(strtol(s, NULL, 10) == v, "long %s read as %ld", s, v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "command";
    for (char *p = text; p <= text + size && argc <= MAX_ARGS; p += strlen(p) + 1) {
        argv[argc++] = p;
        check_values(p);
    }
    argv[argc] = NULL;
    /* args_parse prints its usage errors and --help: keep them off the fuzzer's log */
    static int null_fd = -1;
    if (null_fd < 0) null_fd = open("/dev/null", O_WRONLY);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    int reps = -7, choice = -1;
    double seconds = -1;
    size_t one_size = 0, sizes[4] = {0};
    int size_count = 0, steps[3] = {0}, step_count = 0, text_count = 0;
    bool flag = false, flags[4] = {false};
    const char *variant = NULL, *texts[3] = {NULL};
    static const char *const names[] = {"alpha", "beta", "gamma", "delta", NULL};
    const arg_option options[] = {
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 100},
        {.name = "budget", .kind = ARG_SECONDS, .value = &seconds, .lo = 0, .hi = 3600},
        {.name = "size", .kind = ARG_SIZE, .value = &one_size, .lo = 1, .hi = 1LL << 40},
        {.name = "sizes", .kind = ARG_SIZES, .value = sizes, .count = &size_count, .max = 4, .lo = 1, .hi = 1LL << 30},
        {.name = "log2", .kind = ARG_LOG2S, .value = sizes, .count = &size_count, .max = 4, .lo = 0, .hi = 40},
        {.name = "steps", .kind = ARG_INTS, .value = steps, .count = &step_count, .max = 3, .lo = 1, .hi = 9},
        {.name = "kind", .kind = ARG_CHOICE, .value = &choice, .names = names},
        {.name = "ops", .kind = ARG_CHOICES, .value = flags, .names = names},
        {.name = "flag", .kind = ARG_FLAG, .value = &flag},
        {.name = "variant", .kind = ARG_TEXT, .value = &variant},
        {.name = "define", .short_name = 'D', .kind = ARG_TEXTS, .value = texts, .count = &text_count, .max = 3},
        {0}};
    static const char *const exclusive[] = {"sizes,log2", "flag,kind", NULL};
    const arg_spec spec = {.command = "fuzz", .usage = "usage: fuzz\n", .help = "", .options = options,
                           .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG, .operands = "X", .max_operands = 2,
                           .exclusive = exclusive};
    cli_common common;
    char **operands = NULL;
    int operand_count = -1;
    int rc = args_parse(&spec, argc, argv, &common, &operands, &operand_count);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    /* 1: a report path that cannot be written, refused before any work */
    FUZZ_CHECK(rc == -1 || rc == 0 || rc == 1 || rc == 2, "exit status %d", rc);
    if (rc == -1) {
        FUZZ_CHECK(common.device >= 0 && common.device <= 1024, "device %d", common.device);
        FUZZ_CHECK(operand_count >= 0 && operand_count <= 2 && (operand_count == 0 || operands), "operands %d",
                   operand_count);
        FUZZ_CHECK(reps == -7 || (reps >= 1 && reps <= 100), "reps %d", reps);
        FUZZ_CHECK(seconds == -1 || (seconds > 0 && seconds <= 3600), "budget %g", seconds);
        FUZZ_CHECK(one_size == 0 || (one_size >= 1 && one_size <= (size_t)1 << 40), "size %zu", one_size);
        FUZZ_CHECK(size_count >= 0 && size_count <= 4 && step_count >= 0 && step_count <= 3 && text_count <= 3,
                   "list counts %d %d %d", size_count, step_count, text_count);
        for (int i = 0; i < step_count; i++) FUZZ_CHECK(steps[i] >= 1 && steps[i] <= 9, "step %d", steps[i]);
        FUZZ_CHECK(choice >= -1 && choice < 4, "choice %d", choice);
        FUZZ_CHECK(!(flag && choice >= 0), "exclusive options both taken");
        FUZZ_CHECK(!variant || variant[0], "an empty text taken");
        bool stdout_table = common.format == OUT_CSV || common.format == OUT_JSON;
        FUZZ_CHECK(!(stdout_table && ((common.json_path && !strcmp(common.json_path, "-")) ||
                                      (common.csv_path && !strcmp(common.csv_path, "-")) ||
                                      (common.md_path && !strcmp(common.md_path, "-")))),
                   "two tables on standard output");
    }
    free(text);
    return 0;
}
