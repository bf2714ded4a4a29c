/* The ptxkit command's argument parsing (tools/ptxkit/common.c): the input,
 * split at NUL bytes, is an argument vector. Its strings also go through the
 * checked value parsers: -D NAME=VALUE, sizes (N, 0xN, 2^K, K/M/G) and
 * bounded integers. Accepted values must be what the parsers promise, and
 * the common flags must be consumed without leaving a hole in argv. (The
 * library takes -D text as given; it has no parser of its own to fuzz.) */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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
    /* cli_parse_common prints its usage errors: keep them off the fuzzer's log */
    static int null_fd = -1;
    if (null_fd < 0) null_fd = open("/dev/null", O_WRONLY);
    fflush(stderr);
    int saved = dup(2);
    dup2(null_fd, 2);
    int before = argc;
    cli_common common;
    bool ok = cli_parse_common(&argc, argv, &common);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (ok) {
        FUZZ_CHECK(argc >= 1 && argc <= before && argv[argc] == NULL, "argv not compacted");
        FUZZ_CHECK(common.device >= 0 && common.device <= 1024, "device %d", common.device);
        for (int i = 1; i < argc; i++)
            FUZZ_CHECK(strcmp(argv[i], "--csv") && strcmp(argv[i], "--json") && strcmp(argv[i], "--device") &&
                           strcmp(argv[i], "--svg"),
                       "a common flag was left in argv");
    }
    free(text);
    return 0;
}
