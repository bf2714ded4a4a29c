/* The commands' argument parser (see args.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "report.h"

#define MAX_OPTIONS 64
#define WHY_SIZE 512

/* Indices of the common options in getopt's table, after the command's. */
enum { OPT_HELP = 0, OPT_VERSION, OPT_DEVICE, OPT_JSON, OPT_CSV, OPT_MD, OPT_SVG, OPT_COMMON_COUNT };
static const char *const common_names[OPT_COMMON_COUNT] = {"help", "version", "device", "json", "csv", "md", "svg"};

static void print_usage(const arg_spec *spec, FILE *out) {
    fputs(spec->usage, out);
    fprintf(out, "ptxkit %s --help describes the options.\n", spec->command);
}

static int usage_error(const arg_spec *spec, const char *fmt, va_list ap) {
    fprintf(stderr, "ptxkit %s: ", spec->command);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    print_usage(spec, stderr);
    return 2;
}

int args_error(const arg_spec *spec, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = usage_error(spec, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- values ------------------------------------------------------------ */

static const char *choice_name(const arg_option *o, int i) { return o->names ? o->names[i] : o->name_of(i); }

static int choice_count(const arg_option *o) {
    if (!o->names) return o->name_count;
    int n = 0;
    while (o->names[n]) n++;
    return n;
}

static void list_choices(const arg_option *o, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < choice_count(o) && used < size; i++) {
        const char *name = choice_name(o, i);
        if (!name) continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
        if (n < 0) break;
        used += (size_t)n;
    }
}

static int find_choice(const arg_option *o, const char *text) {
    for (int i = 0; i < choice_count(o); i++)
        if (choice_name(o, i) && strcmp(choice_name(o, i), text) == 0) return i;
    return -1;
}

/* Splits a comma-separated list into out (at most max items of the text); false on an empty item. */
static int split_list(const char *text, char *copy, size_t copy_size, char **items, int max) {
    if (snprintf(copy, copy_size, "%s", text) >= (int)copy_size) return -1;
    int count = 0;
    char *p = copy;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        if (!*p || count == max) return -1;
        items[count++] = p;
        if (!comma) return count;
        p = comma + 1;
    }
}

/* Reads one option's value; false with the reason in why. */
static bool read_value(const arg_option *o, const char *text, char *why, size_t why_size) {
    char copy[1024], *items[256];
    switch (o->kind) {
    case ARG_FLAG: *(bool *)o->value = true; return true;
    case ARG_INT: {
        long v;
        if (cli_parse_long(text, (long)o->lo, (long)o->hi, &v)) {
            *(int *)o->value = (int)v;
            return true;
        }
        snprintf(why, why_size, "takes a whole number in [%lld, %lld]", o->lo, o->hi);
        return false;
    }
    case ARG_SECONDS: {
        char *end;
        errno = 0;
        double v = text[0] && !strchr(" \t\n", text[0]) ? strtod(text, &end) : NAN;
        if (!isnan(v) && !errno && !*end && isfinite(v) && v > (double)o->lo && v <= (double)o->hi) {
            *(double *)o->value = v;
            return true;
        }
        snprintf(why, why_size, "takes seconds in (%lld, %lld]", o->lo, o->hi);
        return false;
    }
    case ARG_SIZE: {
        size_t v;
        if (o->count && *o->count >= o->max) {
            snprintf(why, why_size, "is given at most %d times", o->max);
            return false;
        }
        if (cli_parse_size(text, &v) && v >= (size_t)o->lo && v <= (size_t)o->hi) {
            if (o->count) ((size_t *)o->value)[(*o->count)++] = v;
            else *(size_t *)o->value = v;
            return true;
        }
        snprintf(why, why_size, "takes a size in [%lld, %lld]: N, 2^K, or N with a K, M or G suffix", o->lo, o->hi);
        return false;
    }
    case ARG_SIZES:
    case ARG_LOG2S:
    case ARG_INTS: {
        int n = split_list(text, copy, sizeof copy, items, o->max);
        for (int i = 0; i < n; i++) {
            long k;
            size_t v = 0;
            bool ok = o->kind == ARG_SIZES ? cli_parse_size(items[i], &v) && v >= (size_t)o->lo && v <= (size_t)o->hi
                                           : cli_parse_long(items[i], (long)o->lo, (long)o->hi, &k);
            if (!ok) {
                n = -1;
                break;
            }
            if (o->kind == ARG_SIZES) ((size_t *)o->value)[i] = v;
            else if (o->kind == ARG_LOG2S) ((size_t *)o->value)[i] = (size_t)1 << k;
            else ((int *)o->value)[i] = (int)k;
        }
        if (n > 0) {
            *o->count = n;
            return true;
        }
        snprintf(why, why_size, "takes a comma-separated list of up to %d %s in [%lld, %lld]%s", o->max,
                 o->kind == ARG_SIZES ? "sizes" : o->kind == ARG_LOG2S ? "exponents of two" : "whole numbers", o->lo,
                 o->hi, o->kind == ARG_SIZES ? " (N, 2^K, or N with a K, M or G suffix)" : "");
        return false;
    }
    case ARG_CHOICE: {
        int k = find_choice(o, text);
        if (k >= 0) {
            *(int *)o->value = k;
            return true;
        }
        char list[400];
        list_choices(o, list, sizeof list);
        snprintf(why, why_size, "takes one of %s", list);
        return false;
    }
    case ARG_CHOICES: {
        bool *flags = o->value;
        int total = choice_count(o), n = strcmp(text, "all") == 0 ? total : split_list(text, copy, sizeof copy, items, 256);
        bool chosen[256] = {false};
        for (int i = 0; n > 0 && i < n && total <= 256; i++) {
            int k = strcmp(text, "all") == 0 ? i : find_choice(o, items[i]);
            if (k < 0) n = -1;
            else chosen[k] = true;
        }
        if (n > 0 && total <= 256) {
            for (int i = 0; i < total; i++) flags[i] = chosen[i];
            return true;
        }
        char list[400];
        list_choices(o, list, sizeof list);
        snprintf(why, why_size, "takes a comma-separated list of %s, or all", list);
        return false;
    }
    case ARG_TEXT:
    case ARG_TEXTS:
        if (!text[0]) {
            snprintf(why, why_size, "takes a value");
            return false;
        }
        if (o->parse && !o->parse(text, NULL, why, why_size)) return false;
        if (o->kind == ARG_TEXT) {
            *(const char **)o->value = text;
        } else if (*o->count < o->max) {
            ((const char **)o->value)[(*o->count)++] = text;
        } else {
            snprintf(why, why_size, "is given at most %d times", o->max);
            return false;
        }
        return true;
    case ARG_PARSE: return o->parse(text, o->value, why, why_size);
    }
    return false;
}

static bool repeatable(const arg_option *o) {
    return o->kind == ARG_TEXTS || (o->kind == ARG_SIZE && o->count);
}

/* ---- the common options ------------------------------------------------ */

/* The value of --json / --csv given as the next argument: - or a path
 * (holding '.' or '/'), so that `tune --json reduce` keeps meaning the
 * family. --json=FILE always works. */
static bool looks_like_path(const char *s) {
    return strcmp(s, "-") == 0 || (s[0] && s[0] != '-' && strpbrk(s, "./") != NULL);
}

typedef struct common_state {
    int stdout_users;
    bool device_seen, svg_seen, table_seen[2]; /* --json, --csv without FILE */
} common_state;

/* One of --json, --csv, --md: FILE, or the table alone on standard output. */
static int report_option(const arg_spec *spec, int which, const char *value, cli_common *c, common_state *cs) {
    const char *flag = which == OPT_JSON ? "--json" : which == OPT_CSV ? "--csv" : "--md";
    const char **path = which == OPT_JSON ? &c->json_path : which == OPT_CSV ? &c->csv_path : &c->md_path;
    if (which == OPT_MD && !value) return args_error(spec, "--md needs a FILE (- for standard output)");
    if (value && !value[0]) return args_error(spec, "%s needs a FILE (- for standard output)", flag);
    (void)cs->table_seen;
    if (!value) value = "-"; /* --json alone is --json -: one document shape per format */
    if (*path != NULL) return args_error(spec, "%s given twice", flag);
    if (strcmp(value, "-") == 0) cs->stdout_users++;
    if (cs->stdout_users > 1) return args_error(spec, "standard output can hold one of --csv, --json, --md -");
    *path = value;
    if (strcmp(value, "-") == 0) c->format = OUT_NONE;
    return -1;
}

static bool common_offered(const arg_spec *spec, int which) {
    switch (which) {
    case OPT_HELP: case OPT_VERSION: return true;
    case OPT_DEVICE: return spec->common & ARGS_DEVICE;
    case OPT_JSON: return spec->common & (ARGS_TABLES | ARGS_JSON_ONLY);
    case OPT_CSV: case OPT_MD: return spec->common & ARGS_TABLES;
    case OPT_SVG: return spec->common & ARGS_SVG;
    default: return false;
    }
}

/* ---- parsing ----------------------------------------------------------- */

static int option_count(const arg_spec *spec) {
    int n = 0;
    while (spec->options && spec->options[n].name) n++;
    return n;
}

static int check_exclusive(const arg_spec *spec, const int *seen, int count) {
    for (int g = 0; spec->exclusive && spec->exclusive[g]; g++) {
        const char *first = NULL, *second = NULL;
        char group[256];
        snprintf(group, sizeof group, "%s", spec->exclusive[g]);
        for (char *save = NULL, *name = strtok_r(group, ",", &save); name; name = strtok_r(NULL, ",", &save))
            for (int i = 0; i < count; i++)
                if (seen[i] && strcmp(spec->options[i].name, name) == 0) {
                    if (!first) first = spec->options[i].name;
                    else if (!second) second = spec->options[i].name;
                }
        if (second) return args_error(spec, "--%s and --%s exclude each other", first, second);
    }
    return -1;
}

int args_parse(const arg_spec *spec, int argc, char **argv, cli_common *common, char ***operands, int *operand_count) {
    cli_common local;
    cli_common *c = common ? common : &local;
    *c = (cli_common){.device = 0, .format = OUT_TABLE};
    if (operands) *operands = NULL;
    if (operand_count) *operand_count = 0;
    int count = option_count(spec);
    if (count > MAX_OPTIONS) return args_error(spec, "internal error: too many options");

    /* getopt's table: the command's options, then the common ones offered */
    struct option table[MAX_OPTIONS + OPT_COMMON_COUNT + 1];
    /* no '+': operands may come before, between and after the options */
    char shorts[2 * MAX_OPTIONS + 8];
    int n = 0, s = 0;
    shorts[s++] = ':'; /* a missing value is reported as ':' */
    shorts[s++] = 'h';
    for (int i = 0; i < count; i++) {
        const arg_option *o = &spec->options[i];
        table[n++] = (struct option){o->name, o->kind == ARG_FLAG ? no_argument : required_argument, NULL, 1000 + i};
        if (o->short_name) {
            shorts[s++] = (char)o->short_name;
            if (o->kind != ARG_FLAG) shorts[s++] = ':';
        }
    }
    for (int k = 0; k < OPT_COMMON_COUNT; k++)
        if (common_offered(spec, k)) {
            int has = k == OPT_HELP || k == OPT_VERSION ? no_argument
                      : k == OPT_JSON || k == OPT_CSV         ? optional_argument
                                                              : required_argument;
            table[n++] = (struct option){common_names[k], has, NULL, 2000 + k};
        }
    table[n] = (struct option){NULL, 0, NULL, 0};
    shorts[s] = 0;

    int seen[MAX_OPTIONS] = {0};
    common_state cs = {0};
    char why[WHY_SIZE];
    bool help = false, version = false;
    int rc = -1;
    optind = 0; /* a full reset: a process may parse more than once (tests, fuzzing) */
    opterr = 0;
    for (;;) {
        int index = -1;
        int ch = getopt_long(argc, argv, shorts, table, &index);
        if (ch == -1) break;
        const char *shown = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
        if (ch == '?') {
            if (optopt >= 1000 && optopt < 1000 + count)
                return args_error(spec, "--%s takes no value", spec->options[optopt - 1000].name);
            if (optopt >= 2000) return args_error(spec, "--%s takes no value", common_names[optopt - 2000]);
            if (optopt > ' ' && optopt < 127) return args_error(spec, "unknown option '-%c'", optopt);
            return args_error(spec, "unknown option '%s'", shown);
        }
        if (ch == ':') {
            const char *name = optopt >= 1000 && optopt < 1000 + count ? spec->options[optopt - 1000].name : NULL;
            if (optopt >= 2000) name = common_names[optopt - 2000];
            if (name) return args_error(spec, "--%s needs a value", name);
            return args_error(spec, "-%c needs a value", optopt);
        }
        if (ch == 'h' || ch == 2000 + OPT_HELP) {
            help = true;
            continue;
        }
        if (ch == 2000 + OPT_VERSION) {
            version = true;
            continue;
        }
        if (ch >= 2000) {
            int k = ch - 2000;
            const char *value = optarg;
            if (k == OPT_DEVICE) {
                if (cs.device_seen) return args_error(spec, "--device given twice");
                cs.device_seen = true;
                long d;
                if (!cli_parse_long(value, 0, 1024, &d))
                    return args_error(spec, "--device takes a GPU number in [0, 1024], not '%s'", value);
                c->device = (int)d;
            } else if (k == OPT_SVG) {
                if (cs.svg_seen) return args_error(spec, "--svg given twice");
                if (!value[0]) return args_error(spec, "--svg needs a FILE");
                cs.svg_seen = true;
                c->svg_path = value;
            } else {
                if (!value && k != OPT_MD && optind < argc && looks_like_path(argv[optind])) value = argv[optind++];
                if ((rc = report_option(spec, k, value, c, &cs)) >= 0) return rc;
            }
            continue;
        }
        int i = ch >= 1000 ? ch - 1000 : -1;
        for (int k = 0; i < 0 && k < count; k++)
            if (spec->options[k].short_name == ch) i = k;
        if (i < 0) return args_error(spec, "unknown option '%s'", shown);
        const arg_option *o = &spec->options[i];
        if (seen[i] && !repeatable(o)) return args_error(spec, "--%s given twice", o->name);
        seen[i]++;
        why[0] = 0;
        if (!read_value(o, optarg ? optarg : "", why, sizeof why)) {
            char flag[64];
            if (o->short_name && ch == o->short_name) snprintf(flag, sizeof flag, "-%c", o->short_name);
            else snprintf(flag, sizeof flag, "--%s", o->name);
            return args_error(spec, "%s %s, not '%s'", flag, why, optarg ? optarg : "");
        }
    }
    if (help) {
        fputs(spec->usage, stdout);
        fputs(spec->help ? spec->help : "", stdout);
        if (spec->more_help) spec->more_help(stdout);
        printf("--help prints this text, --version the version; a usage error exits 2.\n");
        return 0;
    }
    if (version) {
        printf("ptxkit %s\n", PTXKIT_VERSION_STRING);
        return 0;
    }
    int operand_total = argc - optind;
    if (operand_total > spec->max_operands)
        return args_error(spec, "unexpected argument '%s'", argv[optind + spec->max_operands]);
    if (operand_total < spec->min_operands) return args_error(spec, "needs %s", spec->operands ? spec->operands : "operands");
    if ((rc = check_exclusive(spec, seen, count)) >= 0) return rc;
    if (operands) *operands = argv + optind;
    if (operand_count) *operand_count = operand_total;
    /* an unwritable report path fails now, not after the benchmark */
    if (!report_path_writable(spec->command, c->json_path) || !report_path_writable(spec->command, c->csv_path) ||
        !report_path_writable(spec->command, c->md_path) || !report_path_writable(spec->command, c->svg_path))
        return 1;
    report_set_paths(c->json_path, c->csv_path, c->md_path);
    return -1;
}

/* ---- shared checkers --------------------------------------------------- */

bool args_block_size(const char *text, void *value, char *why, size_t why_size) {
    long v;
    if (cli_parse_long(text, 0, 1024, &v) && (v == 0 || (v >= 32 && (v & (v - 1)) == 0))) {
        *(int *)value = (int)v;
        return true;
    }
    snprintf(why, why_size, "takes 0 (the default) or a power of two in [32, 1024]");
    return false;
}

bool args_vector_bytes(const char *text, void *value, char *why, size_t why_size) {
    long v;
    if (cli_parse_long(text, 0, 16, &v) && (v == 0 || v == 4 || v == 8 || v == 16)) {
        *(int *)value = (int)v;
        return true;
    }
    snprintf(why, why_size, "takes 0 (the default), 4, 8 or 16");
    return false;
}

bool args_load_op(const char *text, void *value, char *why, size_t why_size) {
    ptxkit_load_op op;
    if (ptxkit_load_op_parse(text, &op) == PTXKIT_SUCCESS) {
        *(ptxkit_load_op *)value = op;
        return true;
    }
    size_t used = (size_t)snprintf(why, why_size, "takes one of");
    for (int i = 0; i < PTXKIT_LOAD_OP_COUNT && used < why_size; i++)
        used += (size_t)snprintf(why + used, why_size - used, "%s %s", i ? "," : "", ptxkit_load_op_name((ptxkit_load_op)i));
    return false;
}

bool args_path(const char *text, void *value, char *why, size_t why_size) {
    static const char *const names[] = {"auto", "jit", "ptx"};
    static const ptxkit_path paths[] = {PTXKIT_PATH_AUTO, PTXKIT_PATH_JIT, PTXKIT_PATH_PTX};
    for (int i = 0; i < 3; i++)
        if (strcmp(text, names[i]) == 0) {
            *(ptxkit_path *)value = paths[i];
            return true;
        }
    snprintf(why, why_size, "takes auto, jit or ptx");
    return false;
}
