/* `ptxkit ladder NAME`: dispatch to the ladder of a kernel family, the
 * steps from a naive kernel to the production one, timed on this GPU. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ptxkit.h"

typedef struct ladder_entry {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} ladder_entry;

static const ladder_entry ladders[] = {
    {"reduce", ladder_reduce, "the reduction ladder (Harris steps 1-7, then shuffles, redux.sync) next to the G80 table"},
    {"scan", ladder_scan, "the scan ladder (Hillis-Steele, Blelloch, shuffles) next to the 2007 table"},
    {"gemm", ladder_gemm, "the matrix-multiply ladder (naive to cp.async pipelines) with the G80 arithmetic"},
};

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit ladder NAME [--device N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [OPTIONS]\n"
                 "\nladders:\n");
    for (size_t i = 0; i < sizeof ladders / sizeof ladders[0]; i++)
        fprintf(out, "  %-10s %s\n", ladders[i].name, ladders[i].summary);
    fprintf(out, "\nptxkit ladder NAME --help describes its options.\n");
}

int cmd_ladder(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2) fprintf(stderr, "ptxkit ladder: needs the NAME of a ladder\n");
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ptxkit %s\n", PTXKIT_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof ladders / sizeof ladders[0]; i++)
        if (strcmp(argv[1], ladders[i].name) == 0) return ladders[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ptxkit ladder: unknown ladder '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
