/* One argument parser for every ptxkit command, over getopt_long.
 *
 * A command declares an option table and a spec (its usage lines, help
 * text, operands and mutually exclusive options) and calls args_parse
 * first, before anything touches a GPU:
 *
 *     int bench_copy(int argc, char **argv) {
 *         size_t sizes[16]; int size_count = 0, reps = 20;
 *         const arg_option options[] = {
 *             {.name = "size", .kind = ARG_SIZE, .value = sizes, .count = &size_count, .max = 16,
 *              .lo = 1, .hi = 1LL << 40},
 *             {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 10000},
 *             {0}};
 *         const arg_spec spec = {.command = "bench copy", .usage = USAGE, .help = HELP,
 *                                .common = ARGS_DEVICE | ARGS_TABLES, .options = options};
 *         cli_common common;
 *         int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
 *         if (rc >= 0) return rc;
 *         ...
 *
 * Every command thereby takes --help (-h) and --version, and every usage
 * error -- an unknown option, a missing or malformed value, a number out of
 * range, a name not in its list, an option given twice that is not a list,
 * two options that exclude each other, a missing or extra operand -- prints
 * one line naming it, then the command's usage lines, and exits 2. Adding a
 * command: its function in commands.h, a line in main.c's table (or
 * bench.c's for a benchmark), and its spec as above. */
#ifndef PTXKIT_ARGS_H
#define PTXKIT_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"

typedef enum arg_kind {
    ARG_FLAG,    /* bool *value: present */
    ARG_INT,     /* int *value, a whole number in [lo, hi] */
    ARG_SECONDS, /* double *value, seconds in (lo, hi] (no inf or nan) */
    ARG_SIZE,    /* size_t *value in [lo, hi]: N, 0xN, 2^K or N with a K, M or G suffix; with count and max a
                    repeatable option whose values are appended */
    ARG_SIZES,   /* size_t value[max], *count: a comma-separated list of sizes, each in [lo, hi] */
    ARG_LOG2S,   /* size_t value[max], *count: a comma-separated list of exponents in [lo, hi], stored as 2^K */
    ARG_INTS,    /* int value[max], *count: a comma-separated list of whole numbers in [lo, hi] */
    ARG_CHOICE,  /* int *value: the index of one of the names */
    ARG_CHOICES, /* bool value[name count]: a comma-separated list of the names, or all */
    ARG_TEXT,    /* const char **value: any non-empty text (checked by parse when given) */
    ARG_TEXTS,   /* const char *value[max], *count: repeatable text (checked by parse when given) */
    ARG_PARSE    /* parse(text, value, why): a value with its own rules */
} arg_kind;

typedef struct arg_option {
    const char *name;   /* the long name, without -- */
    int short_name;     /* a one-letter alias ('D'), or 0 */
    arg_kind kind;
    void *value;
    int *count;         /* list kinds: how many values were stored */
    int max;            /* list kinds: room for values */
    long long lo, hi;   /* bounds of numbers, sizes and exponents */
    /* names of ARG_CHOICE(S): a NULL-terminated list, or name_of(0 .. name_count - 1) */
    const char *const *names;
    const char *(*name_of)(int index);
    int name_count;
    /* ARG_PARSE: reads text into value; ARG_TEXT(S): checks text (value NULL).
     * False with a reason ("takes ..."), printed after the option's name. */
    bool (*parse)(const char *text, void *value, char *why, size_t why_size);
} arg_option;

/* Options shared by many commands, chosen per command. */
enum {
    ARGS_DEVICE = 1,    /* --device N */
    ARGS_TABLES = 2,    /* --csv, --json (the table to standard output, or FILE) and --md FILE: report files */
    ARGS_SVG = 4,       /* --svg FILE: the command draws a chart */
    ARGS_JSON_ONLY = 8  /* --json [FILE] alone: a command that writes its own JSON document */
};

typedef struct arg_spec {
    const char *command;        /* "bench copy" */
    const char *usage;          /* the synopsis: "usage: ptxkit bench copy [...]\n" (and its continuation lines) */
    const char *help;           /* what --help prints after the synopsis */
    void (*more_help)(FILE *out); /* help that depends on the build (a list of families), or NULL */
    unsigned common;            /* ARGS_* */
    const arg_option *options;  /* ended by an entry of name NULL; may be NULL */
    const char *operands;       /* their names for messages ("FAMILY"); NULL: none taken */
    int min_operands, max_operands;
    const char *const *exclusive; /* NULL-terminated groups "a,b": at most one option of each group */
} arg_spec;

/* Parses argv[1 .. argc) (argv[0] is the command's name). Returns -1 when the
 * command should run; otherwise the exit status, its output printed: 0 after
 * --help or --version, 2 after a usage error. The common options go to
 * *common (and the report files to report.c); the operands, in order, to
 * *operands (pointers into argv) when operands is not NULL. */
int args_parse(const arg_spec *spec, int argc, char **argv, cli_common *common, char ***operands, int *operand_count);

/* A usage error found after parsing (values that depend on each other):
 * "ptxkit COMMAND: message", the usage lines; returns 2. */
int args_error(const arg_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Shared checkers for ARG_PARSE / ARG_TEXT options. */
bool args_block_size(const char *text, void *value, char *why, size_t why_size);   /* int: 0 or 2^k in [32, 1024] */
bool args_vector_bytes(const char *text, void *value, char *why, size_t why_size); /* int: 0, 4, 8 or 16 */
bool args_load_op(const char *text, void *value, char *why, size_t why_size);      /* ptxkit_load_op by name */
bool args_path(const char *text, void *value, char *why, size_t why_size);         /* ptxkit_path: auto, jit, ptx */

#endif
