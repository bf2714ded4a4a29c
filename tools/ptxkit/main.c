/* ptxkit: command-line tool over the library. A command is a line of the
 * table below and a function that parses its arguments with args_parse
 * (args.h) before it touches a GPU. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ptxkit.h"
#include "report.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", cmd_info, "driver, NVRTC and device properties, cache directory, measured copy bandwidth"},
    {"compile", cmd_compile, "compile a kernel family or your own .cu file with NVRTC (no GPU needed): PTX or resources"},
    {"bench", cmd_bench, "benchmarks: ptxkit bench --help lists them"},
    {"cache", cmd_cache, "show or purge the on-disk kernel cache"},
    {"ladder", cmd_ladder, "the ladders from a naive kernel to the production one: reduce, scan, gemm"},
    {"tune", cmd_tune, "choose block size and the other injected constants for this GPU; --show lists them"},
    {"report", cmd_report, "compare two --json reports row by row (exit 1 on a regression): report compare A B"},
};

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit COMMAND [OPTIONS]\n       ptxkit --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n  --help      this text (ptxkit COMMAND --help: a command's)\n"
                 "  --version   the version, as every command's --version prints it\n");
    fprintf(out, "\nptxkit COMMAND --help describes a command; every command takes --help and --version, and a\n"
                 "usage error exits 2 with the command's usage lines before any GPU is opened.\n"
                 "Commands that print tables also write reports like nvbench's, several at once: --json FILE\n"
                 "(metadata and typed columns), --csv FILE, --md FILE; - is standard output, and --csv or --json\n"
                 "alone is the same as with -. Their JSON Schemas are installed in share/ptxkit/schemas.\n");
}

/* The library never prints: it falls back to the default on an unusable
 * environment value and keeps the reason, which the command shows once. */
static void warn_environment(void) {
    char notes[1024];
    if (ptxkit_environment_notes(notes, sizeof notes) != PTXKIT_SUCCESS) return;
    for (char *line = notes, *end; *line; line = end + (*end != 0)) {
        end = line + strcspn(line, "\n");
        fprintf(stderr, "ptxkit: warning: %.*s\n", (int)(end - line), line);
    }
}

int main(int argc, char **argv) {
    warn_environment();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("ptxkit %s\n", PTXKIT_VERSION_STRING);
        return 0;
    }
    report_set_command(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            /* the report files, once the tables are all there */
            if (!report_finish(argv[1], rc) && rc == 0) rc = 1;
            return rc;
        }
    fprintf(stderr, "ptxkit: unknown %s '%s'\n", argv[1][0] == '-' ? "option" : "command", argv[1]);
    usage(stderr);
    return 2;
}
