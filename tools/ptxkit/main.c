/* ptxkit: command-line tool over the library. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", cmd_info, "driver, NVRTC and device properties, cache directory, measured copy bandwidth"},
    {"compile", cmd_compile, "compile a kernel family with NVRTC (no GPU needed): PTX or resource usage"},
    {"bench", cmd_bench, "benchmarks: ptxkit bench --help lists them"},
    {"cache", cmd_cache, "show or purge the on-disk kernel cache"},
    {"ladder", cmd_ladder, "the reduction ladder (Harris steps 1-9) on this GPU, next to the 2007 G80 table"},
    {"scan-ladder", cmd_scan_ladder, "the scan ladder (Hillis-Steele, Blelloch, shuffles) next to the 2007 table"},
    {"tune", cmd_tune, "choose block size and the other injected constants for this GPU; --show lists them"},
};

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nptxkit COMMAND --help describes a command.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ptxkit %s\n", "0.1.0");
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ptxkit: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
