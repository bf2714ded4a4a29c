/* Every command's report on a GPU: each table command runs small, writing
 * --json, --csv and --md at once; the JSON must match its JSON Schema
 * (schemas/<kind>.schema.json: metadata, every column's type, every row),
 * the CSV must hold the same tables, and the metadata must name the GPU.
 * `ptxkit info --json` is checked as its own document; the tuning record
 * exported as T4 against the vendored T4 schema. The tuning runs use a
 * private database. Skipped (77) without python3-jsonschema.
 * usage: test_gpu_reports PTXKIT PYTHON VALIDATOR SCHEMA_DIR */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report_validate.h"
#include "test_util.h"

static const char *exe;
static const char *schema_dir;
static char dir[128];

static char *slurp(const char *path) {
    size_t size;
    char *text = test_read_file(path, &size);
    if (!text) fail_msg("%s was not written", path);
    return text;
}

static int run(const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s >%s/out.txt 2>%s/err.txt", exe, args, dir, dir);
    int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void check_command(const char *key, const char *command, const char *args) {
    char line[1024], json[256], csv[256], md[256];
    snprintf(json, sizeof json, "%s/r.json", dir);
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    snprintf(md, sizeof md, "%s/r.md", dir);
    snprintf(line, sizeof line, "%s %s --json %s --csv %s --md %s", command, args, json, csv, md);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = run(line);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != 0) {
        char err[300];
        snprintf(err, sizeof err, "%s/err.txt", dir);
        char *text = slurp(err);
        fail_msg("ptxkit %s: exit %d\n%s", line, rc, text);
    }
    char *json_text = slurp(json), *csv_text = slurp(csv), *md_text = slurp(md);
    cJSON *doc = cJSON_Parse(json_text);
    if (!doc) fail_msg("ptxkit %s: the report is not JSON", line);
    if (strcmp(cJSON_GetObjectItemCaseSensitive(doc, "kind")->valuestring, key) != 0) fail_msg("ptxkit %s: kind is not %s", line, key);
    if (report_validate_file(json, NULL, NULL, csv) != 0) fail_msg("ptxkit %s: the report does not match its schema", line);
    if (!strstr(md_text, "## ")) fail_msg("ptxkit %s: the Markdown report has no table", line);
    const cJSON *device = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "device");
    /* bench compile times NVRTC on the host: it needs no GPU and names none */
    if (!cJSON_IsObject(device) && strcmp(key, "bench compile") != 0) fail_msg("ptxkit %s: the metadata names no device", line);
    int rows = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "tables")) rows += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "rows"));
    print_message("ptxkit %s: %d tables, %d rows, %.1f s\n", command, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "tables")),
                  rows, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    if (rows == 0) fail_msg("ptxkit %s: no rows", line);
    cJSON_Delete(doc);
    free(json_text);
    free(csv_text);
    free(md_text);
    remove(json);
    remove(csv);
    remove(md);
}

static void every_report(void **state) {
    (void)state;
    static const struct { const char *key, *command, *args; } cases[] = {
        {"bench copy", "bench copy", "--size 1M --size 3M --reps 3"},
        {"bench startup", "bench startup", "--runs 2"},
        {"bench launch", "bench launch", "--launches 2000 --rounds 2 --batch 500 --round-trips 200"},
        {"bench access", "bench access", "--mib 64 --reps 2 --op default --op cg"},
        {"bench aos", "bench aos", "--points 1M --reps 2 --op default"},
        {"bench banks", "bench banks", "--reps 3 --iters 4"},
        {"bench transpose", "bench transpose", "--shape 256x320 --reps 3"},
        {"bench reduce", "bench reduce", "--log2 12,20 --ops sum --types int32,float32 --reps 3 --warmup 1"},
        {"bench scan", "bench scan", "--log2 12,20 --types int32 --reps 3 --warmup 1"},
        {"bench blocks", "bench blocks", "copy --n 1M --n 4M"},
        {"bench async", "bench async", "--size 1M --tiles 2048 --blocks 128 --stages 2 --reps 2"},
        {"bench redux", "bench redux", "--reps 64"},
        {"bench l2", "bench l2", "--reps 2"},
        {"bench stencil", "bench stencil", "--width 512 --height 64 --occupancy 1 --variants 0,2 --reps 2"},
        {"ladder reduce", "ladder reduce", "--log2 14 --reps 3 --warmup 1"},
        {"ladder scan", "ladder scan", "--log2 12,16 --reps 3 --warmup 1"},
        {"bench gemm", "bench gemm", "--shapes 256,100x30x70 --reps 3 --warmup 1 --compare --check"},
        {"bench multi", "bench multi", "--gpus 1 --log2 20 --small 256 --allreduce-bytes 1M --reps 3 --warmup 1"},
        {"ladder gemm", "ladder gemm", "--size 256 --reps 2 --warmup 1"},
        {"tune", "tune", "reduce --sizes 2^16 --budget 3"}, /* saved: --show then has an entry and a record */
        {"tune --verify-exhaustive", "tune", "transpose --sizes 2^16 --budget 2 --verify-exhaustive --no-save"},
        {"tune --show", "tune", "--show"},
        {"bench constant", "bench constant", "--mib 8 --taps 5 --reps 2"},
        {"bench graph", "bench graph", "--ops 20 --rounds 3"},
        {"bench compile", "bench compile", ""},
        {"bench streams", "bench streams", "--log2 22 --streams 1,2 --chunks 64K,1M --reps 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_command(cases[i].key, cases[i].command, cases[i].args);
}

static void info_document(void **state) {
    (void)state;
    char args[256], path[200];
    snprintf(path, sizeof path, "%s/info.json", dir);
    snprintf(args, sizeof args, "info --json %s", path);
    assert_int_equal(run(args), 0);
    char *text = slurp(path);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    if (report_validate_file(path, "info", NULL, NULL) != 0) fail_msg("%s: not the info schema", path);
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "device")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "driver"), "usable")));
    cJSON_Delete(doc);
    free(text);
    remove(path);
}

static int count_of(const char *text, const char *what) {
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

/* bench streams --svg: well-formed (xmllint), the serial run's one row and
 * the pipelined run's four, three bars (copy in, kernel, copy out) per
 * chunk; the tables hold every caveat with a verdict and checked values. */
static void streams_timeline(void **state) {
    (void)state;
    char svg[200], json[200], args[600];
    snprintf(svg, sizeof svg, "%s/streams.svg", dir);
    snprintf(json, sizeof json, "%s/streams.json", dir);
    snprintf(args, sizeof args,
             "bench streams --log2 24 --streams 1 --chunks 1M --memory pinned --kernels light --reps 1 --svg %s --json %s",
             svg, json);
    int rc = run(args);
    if (rc != 0) {
        char err[300];
        snprintf(err, sizeof err, "%s/err.txt", dir);
        char *text = slurp(err);
        fail_msg("ptxkit %s: exit %d\n%s", args, rc, text);
    }
    if (system("command -v xmllint >/dev/null 2>&1") == 0) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", svg);
        assert_int_equal(system(cmd), 0);
    } else {
        print_message("xmllint is not installed: the timeline's XML is not checked\n");
    }
    char *text = slurp(svg);
    /* 16 MiB in 1 MiB chunks (16 of them): 1 + 4 rows, 2 x 16 x 3 bars */
    assert_int_equal(count_of(text, "class=\"lane\""), 5);
    assert_int_equal(count_of(text, "class=\"lane-label\">stream 0<"), 2);
    assert_int_equal(count_of(text, "class=\"lane-label\">stream 3<"), 1);
    assert_int_equal(count_of(text, "class=\"lane-label\">stream 4<"), 0);
    assert_int_equal(count_of(text, "<title>stream "), 96);
    assert_int_equal(count_of(text, ", kernel: "), 32);
    free(text);
    text = slurp(json);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    if (report_validate_file(json, NULL, NULL, NULL) != 0) fail_msg("%s does not match its schema", json);
    int caveats = 0;
    const cJSON *t, *row;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(doc, "tables")) {
        const char *id = cJSON_GetObjectItemCaseSensitive(t, "id")->valuestring;
        cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(t, "rows")) {
            const cJSON *check = cJSON_GetObjectItemCaseSensitive(row, "check");
            if (check) assert_string_equal(check->valuestring, "ok");
            if (strcmp(id, "bench_streams_caveats") != 0) continue;
            caveats++;
            const char *holds = cJSON_GetObjectItemCaseSensitive(row, "holds")->valuestring;
            assert_true(strcmp(holds, "yes") == 0 || strcmp(holds, "no") == 0 || strncmp(holds, "unclear", 7) == 0);
            assert_true(cJSON_GetObjectItemCaseSensitive(row, "serial_ms")->valuedouble > 0);
            assert_true(cJSON_GetObjectItemCaseSensitive(row, "overlapped_ms")->valuedouble > 0);
        }
    }
    assert_int_equal(caveats, 8);
    cJSON_Delete(doc);
    remove(svg);
    remove(json);
}

/* Two runs of one build compare as no regression (exit 0); the second with
 * one row's times planted 10% slower (its spread kept) as one (exit 1).
 * Large sizes, where a run's time is steady. */
static void compare_two_runs(void **state) {
    (void)state;
    char a[200], b[200], planted[220], out[220], args[1024];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(planted, sizeof planted, "%s/planted.json", dir);
    snprintf(out, sizeof out, "%s/compare.json", dir);
    const char *bench = "bench reduce --log2 26,28 --ops sum --types int32,float32 --reps 30 --warmup 3";
    snprintf(args, sizeof args, "%s --json %s", bench, a);
    assert_int_equal(run(args), 0);
    snprintf(args, sizeof args, "%s --json %s", bench, b);
    assert_int_equal(run(args), 0);
    snprintf(args, sizeof args, "report compare %s %s --json %s", a, b, out);
    int rc = run(args);
    if (rc != 0) {
        char path[256];
        snprintf(path, sizeof path, "%s/out.txt", dir);
        char *text = slurp(path);
        fail_msg("two runs of one build: exit %d\n%s", rc, text);
    }
    if (report_validate_file(out, NULL, NULL, NULL) != 0) fail_msg("%s does not match its schema", out);
    char *text = slurp(b);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "tables"), 0), "rows"), 1);
    assert_non_null(row);
    const char *fields[] = {"time_us", "min_us", "max_us"};
    for (int i = 0; i < 3; i++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(row, fields[i]);
        assert_true(cJSON_IsNumber(v));
        cJSON_SetNumberValue(v, v->valuedouble * 1.10);
    }
    char *printed = cJSON_Print(doc);
    FILE *f = fopen(planted, "w");
    assert_non_null(f);
    fputs(printed, f);
    fclose(f);
    free(printed);
    cJSON_Delete(doc);
    snprintf(args, sizeof args, "report compare %s %s", a, planted);
    assert_int_equal(run(args), 1);
    remove(a);
    remove(b);
    remove(planted);
    remove(out);
}

/* The tuning record every_report's `tune reduce` appended to, exported as T4
 * results: valid against the vendored T4 schema, one result or more. */
static void t4_export(void **state) {
    (void)state;
    char path[200], args[300], schema_file[4200];
    snprintf(path, sizeof path, "%s/t4.json", dir);
    snprintf(args, sizeof args, "tune --export-t4 %s", path);
    assert_int_equal(run(args), 0);
    snprintf(schema_file, sizeof schema_file, "%s/t4/results-schema.json", schema_dir);
    if (report_validate_file(path, NULL, schema_file, NULL) != 0) fail_msg("%s is not T4", path);
    char *text = slurp(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "results")) > 0);
    cJSON_Delete(doc);
    remove(path);
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    test_require_gpu();
    test_gpu_release(); /* the commands open the GPU in their own processes */
    exe = argv[1];
    schema_dir = argv[4];
    report_validate_setup(argv[2], argv[3], argv[4]);
    if (!report_validator_available()) {
        fprintf(stderr, "python3-jsonschema is not installed\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/ptxkit-gpu-reports-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    char db[200];
    snprintf(db, sizeof db, "%s/tune.db", dir); /* a private database and record */
    setenv("PTXKIT_TUNE_DB", db, 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(info_document), cmocka_unit_test(every_report),
                                       cmocka_unit_test(t4_export), cmocka_unit_test(compare_two_runs),
                                       cmocka_unit_test(streams_timeline)};
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return failed;
}
