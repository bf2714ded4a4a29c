/* `ptxkit report compare A.json B.json`: two --json reports of the same
 * kind, row by row, in the manner of nvbench's nvbench_compare.py. Rows
 * match by table id and key columns (each table names them: the columns
 * before its metric); a row's verdict compares the ratio B/A of the metric
 * (a time: lower is better) with the noise both reports carry. A row's
 * noise is its spread, (max - min) / (max + min) of its min and max
 * columns: a relative half-range, unit-free. A difference within the
 * larger of --threshold and the smaller of the two noises is "same" (as
 * nvbench takes the smaller noise); beyond it "slower" or "faster".
 * Exit status for CI: 0 no row slower, 1 some row slower, 2 a usage or
 * input error (a file that is no report, reports of different kinds, no
 * row in common). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "report.h"

#define DEFAULT_THRESHOLD_PCT 5.0

static cJSON *load_report(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ptxkit report compare: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    for (size_t n; text && (n = fread(text + len, 1, cap - len - 1, f)) > 0;) {
        len += n;
        if (len + 1 == cap) {
            char *grown = realloc(text, cap * 2);
            if (!grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (!text) {
        fprintf(stderr, "ptxkit report compare: out of memory reading %s\n", path);
        return NULL;
    }
    text[len] = 0;
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *schema = doc ? cJSON_GetObjectItemCaseSensitive(doc, "schema") : NULL;
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "ptxkit-report/2") != 0 ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "tables")) ||
        !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc, "kind"))) {
        fprintf(stderr, "ptxkit report compare: %s is no ptxkit-report/2 document (a --json FILE report)\n", path);
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

/* A row's identity: the table's id and its key values, as text
 * ("op=sum type=int32 n=4096"); the k-th repeat of an identity gets "#k". */
static void row_key(const cJSON *table, const cJSON *row, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = 0;
    const cJSON *key;
    cJSON_ArrayForEach(key, cJSON_GetObjectItemCaseSensitive(table, "keys")) {
        if (!cJSON_IsString(key)) continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key->valuestring);
        char *text = cJSON_IsString(v) ? NULL : v ? cJSON_PrintUnformatted(v) : NULL;
        int n = snprintf(buf + used, size - used, "%s%s=%s", used ? " " : "", key->valuestring,
                         cJSON_IsString(v) ? v->valuestring : text ? text : "-");
        free(text);
        if (n < 0 || (size_t)n >= size - used) break;
        used += (size_t)n;
    }
}

/* The first column whose name starts with prefix ("min_", "max_"), NULL when none. */
static const char *column_with_prefix(const cJSON *table, const char *prefix) {
    const cJSON *col;
    cJSON_ArrayForEach(col, cJSON_GetObjectItemCaseSensitive(table, "columns")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(col, "name");
        if (cJSON_IsString(name) && strncmp(name->valuestring, prefix, strlen(prefix)) == 0) return name->valuestring;
    }
    return NULL;
}

static double number_of(const cJSON *row, const char *name) {
    const cJSON *v = name ? cJSON_GetObjectItemCaseSensitive(row, name) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double row_noise(const cJSON *table, const cJSON *row) {
    double lo = number_of(row, column_with_prefix(table, "min_")), hi = number_of(row, column_with_prefix(table, "max_"));
    if (!(lo >= 0) || !(hi >= lo) || hi + lo <= 0) return 0;
    return (hi - lo) / (hi + lo);
}

typedef struct timed_row {
    char id[64], key[512];
    const cJSON *table, *row;
    int repeat;
} timed_row;

/* Every row of a timed table (metric not null) with its identity. */
static timed_row *timed_rows(const cJSON *doc, int *count) {
    int cap = 64, n = 0;
    timed_row *rows = malloc((size_t)cap * sizeof *rows);
    const cJSON *table;
    cJSON_ArrayForEach(table, cJSON_GetObjectItemCaseSensitive(doc, "tables")) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(table, "id");
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(table, "metric")) || !cJSON_IsString(id)) continue;
        const cJSON *row;
        cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(table, "rows")) {
            if (!rows) break;
            if (n == cap) {
                timed_row *grown = realloc(rows, (size_t)cap * 2 * sizeof *rows);
                if (!grown) break;
                rows = grown;
                cap *= 2;
            }
            timed_row *r = &rows[n];
            snprintf(r->id, sizeof r->id, "%s", id->valuestring);
            row_key(table, row, r->key, sizeof r->key);
            r->table = table;
            r->row = row;
            r->repeat = 0;
            for (int i = 0; i < n; i++)
                if (strcmp(rows[i].id, r->id) == 0 && strcmp(rows[i].key, r->key) == 0) r->repeat++;
            n++;
        }
    }
    *count = n;
    return rows;
}

static bool parse_percent(const char *text, void *value, char *why, size_t why_size) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !(v >= 0 && v < 1000)) {
        snprintf(why, why_size, "takes a percentage in [0, 1000)");
        return false;
    }
    *(double *)value = v;
    return true;
}

static const char usage_text[] = "usage: ptxkit report compare A.json B.json [--threshold PCT] [--json FILE] [--csv FILE] [--md FILE]\n";
static const char help_text[] =
    "Compares two --json reports of the same kind (a reference A and a candidate B) row by row: rows match by\n"
    "their table's id and key columns; ratio is B/A of the table's metric (a time, lower is better); noise\n"
    "is the larger of the two rows' spreads (max - min) / (max + min). A row is 'same' when |ratio - 1| is\n"
    "within the larger of the threshold and the smaller of the two spreads, else 'slower' or 'faster'; rows\n"
    "of one report only are 'only in A' / 'only in B'.\n"
    "  --threshold PCT  the smallest difference that counts, percent (default 5)\n"
    "Exit status: 0 no row slower, 1 a row slower (a regression), 2 a usage or input error.\n";

static int compare(int argc, char **argv) {
    double threshold_pct = DEFAULT_THRESHOLD_PCT;
    const arg_option options[] = {{.name = "threshold", .kind = ARG_PARSE, .value = &threshold_pct, .parse = parse_percent},
                                  {0}};
    const arg_spec spec = {.command = "report compare", .usage = usage_text, .help = help_text,
                           .common = ARGS_TABLES, .options = options, .operands = "A.json B.json",
                           .min_operands = 2, .max_operands = 2};
    cli_common common;
    char **files = NULL;
    int file_count = 0;
    int rc = args_parse(&spec, argc, argv, &common, &files, &file_count);
    if (rc >= 0) return rc;
    cJSON *a = load_report(files[0]), *b = a ? load_report(files[1]) : NULL;
    if (!a || !b) {
        cJSON_Delete(a);
        return 2;
    }
    const char *kind_a = cJSON_GetObjectItemCaseSensitive(a, "kind")->valuestring;
    const char *kind_b = cJSON_GetObjectItemCaseSensitive(b, "kind")->valuestring;
    if (strcmp(kind_a, kind_b) != 0) {
        fprintf(stderr, "ptxkit report compare: %s is a '%s' report, %s a '%s' report\n", files[0], kind_a, files[1], kind_b);
        cJSON_Delete(a);
        cJSON_Delete(b);
        return 2;
    }
    /* the same GPU is the premise; a different one is worth a line, not a refusal */
    const cJSON *dev_a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "metadata"), "device"), "name");
    const cJSON *dev_b = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "metadata"), "device"), "name");
    if (cJSON_IsString(dev_a) && cJSON_IsString(dev_b) && strcmp(dev_a->valuestring, dev_b->valuestring) != 0)
        fprintf(stderr, "ptxkit report compare: warning: A ran on %s, B on %s\n", dev_a->valuestring, dev_b->valuestring);

    int na = 0, nb = 0;
    timed_row *ra = timed_rows(a, &na), *rb = timed_rows(b, &nb);
    const char *headers[] = {"table_id", "row", "metric", "a", "b", "ratio", "noise", "verdict"};
    cli_table *t = table_new("B against A", 8, headers);
    table_id(t, "report_compare");
    table_types(t, "sssnnnns");
    char note[1200];
    snprintf(note, sizeof note, "A %s, B %s, threshold %g%%", files[0], files[1], threshold_pct);
    table_note(t, note);
    int slower = 0, faster = 0, same = 0, matched = 0;
    bool *used = calloc((size_t)na + 1, sizeof *used);
    for (int j = 0; ra && rb && used && j < nb; j++) {
        int i = 0;
        while (i < na && (used[i] || strcmp(ra[i].id, rb[j].id) || strcmp(ra[i].key, rb[j].key) || ra[i].repeat != rb[j].repeat)) i++;
        const char *metric = cJSON_GetObjectItemCaseSensitive(rb[j].table, "metric")->valuestring;
        double vb = number_of(rb[j].row, metric);
        if (i == na) {
            table_addf(t, "%s\t%s\t%s\t-\t%.6g\t-\t-\tonly in B", rb[j].id, rb[j].key, metric, vb);
            continue;
        }
        used[i] = true;
        double va = number_of(ra[i].row, metric);
        if (!(va > 0) || !(vb > 0)) {
            table_addf(t, "%s\t%s\t%s\t%.6g\t%.6g\t-\t-\tnot timed", rb[j].id, rb[j].key, metric, va, vb);
            continue;
        }
        matched++;
        double na_noise = row_noise(ra[i].table, ra[i].row), nb_noise = row_noise(rb[j].table, rb[j].row);
        double tolerance = fmax(threshold_pct / 100, fmin(na_noise, nb_noise));
        double ratio = vb / va;
        const char *verdict = fabs(ratio - 1) <= tolerance ? "same" : ratio > 1 ? "slower" : "faster";
        if (ratio > 1 && fabs(ratio - 1) > tolerance) slower++;
        else if (fabs(ratio - 1) > tolerance) faster++;
        else same++;
        table_addf(t, "%s\t%s\t%s\t%.6g\t%.6g\t%.4f\t%.4f\t%s", rb[j].id, rb[j].key, metric, va, vb, ratio,
                   fmax(na_noise, nb_noise), verdict);
    }
    for (int i = 0; ra && used && i < na; i++)
        if (!used[i]) {
            const char *metric = cJSON_GetObjectItemCaseSensitive(ra[i].table, "metric")->valuestring;
            table_addf(t, "%s\t%s\t%s\t%.6g\t-\t-\t-\tonly in A", ra[i].id, ra[i].key, metric,
                       number_of(ra[i].row, metric));
        }
    table_print(t, common.format, stdout);
    table_free(t);
    free(used);
    free(ra);
    free(rb);
    cJSON_Delete(a);
    cJSON_Delete(b);
    if (matched == 0) {
        fprintf(stderr, "ptxkit report compare: no timed row of %s matches one of %s\n", files[1], files[0]);
        return 2;
    }
    if (common.format == OUT_TABLE)
        printf("%d rows compared: %d slower, %d faster, %d same\n", matched, slower, faster, same);
    return slower ? 1 : 0;
}

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit report compare A.json B.json [OPTIONS]\n\nsubcommands:\n"
                 "  compare   two --json reports of one kind, row by row (exit 1 on a regression)\n"
                 "\nptxkit report compare --help describes its options.\n");
}

int cmd_report(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2) fprintf(stderr, "ptxkit report: needs a subcommand (compare)\n");
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ptxkit %s\n", PTXKIT_VERSION_STRING);
        return 0;
    }
    if (strcmp(argv[1], "compare") == 0) return compare(argc - 1, argv + 1);
    fprintf(stderr, "ptxkit report: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
