/* CPU tests of the tuning record (src/tune/record.c): round trips of odd
 * names and notes, every damaged or torn line ignored and counted, a writer
 * that starts a new line after a torn one, concurrent appends from several
 * processes, the filter by key, family, variant and code, the lookup of a
 * configuration, and the record's path beside the database. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/files.h"
#include "test_util.h"
#include "tune/record.h"

static char tmp_root[256];

static void fresh_path(char *buf, size_t size, const char *name) {
    static int counter;
    if (!tmp_root[0]) {
        snprintf(tmp_root, sizeof tmp_root, "/tmp/ptxkit-record-test-XXXXXX");
        if (!mkdtemp(tmp_root)) fail_msg("mkdtemp failed");
    }
    snprintf(buf, size, "%s/d%d/sub/%s", tmp_root, counter++, name); /* the directories do not exist yet */
}

static tune_record_line sample_line(uint64_t *rng) {
    tune_record_line l;
    memset(&l, 0, sizeof l);
    tune_db_key_make(&l.key, "NVIDIA H100 80GB HBM3", 90, 132, 13000, 13, 0, "0.1.0");
    snprintf(l.family, sizeof l.family, "reduce");
    snprintf(l.variant, sizeof l.variant, "sum.float32");
    l.code = test_rand(rng);
    l.n = (size_t)1 << (10 + test_rand(rng) % 20);
    l.param_count = 5;
    static const char *const names[] = {"block", "items", "vec", "bpsm", "load"};
    for (int i = 0; i < 5; i++) {
        snprintf(l.names[i], sizeof l.names[i], "%s", names[i]);
        l.values[i] = (long long)(test_rand(rng) % 1025);
    }
    l.outcome = TUNE_RECORD_OK;
    l.ms = 0.001 + (double)(test_rand(rng) % 100000) / 997.0;
    l.gbs = (double)(test_rand(rng) % 300000) / 100.0;
    l.samples = 5;
    l.when = 1763850000 + (long long)(test_rand(rng) % 1000);
    return l;
}

static void assert_same_line(const tune_record_line *a, const tune_record_line *b) {
    assert_true(tune_db_key_equal(&a->key, &b->key));
    assert_string_equal(a->family, b->family);
    assert_string_equal(a->variant, b->variant);
    assert_true(a->code == b->code);
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->param_count, b->param_count);
    for (int i = 0; i < a->param_count; i++) {
        assert_string_equal(a->names[i], b->names[i]);
        assert_true(a->values[i] == b->values[i]);
    }
    assert_int_equal(a->outcome, b->outcome);
    /* ms to 9 significant digits, GB/s to two decimals: the writer's precision */
    assert_true(a->ms == 0 ? b->ms == 0 : (b->ms / a->ms > 1 - 1e-8 && b->ms / a->ms < 1 + 1e-8));
    assert_true(b->gbs > a->gbs - 0.006 && b->gbs < a->gbs + 0.006);
    assert_int_equal(a->samples, b->samples);
    assert_true(a->when == b->when);
    assert_string_equal(a->note, b->note);
}

static void round_trip(void **state) {
    (void)state;
    uint64_t rng = test_seed();
    char text[TUNE_RECORD_MAX_LINE];
    for (int i = 0; i < 200; i++) {
        tune_record_line l = sample_line(&rng), back;
        if (i % 3 == 1) {
            l.outcome = TUNE_RECORD_FAILED;
            l.ms = l.gbs = 0;
            l.samples = 0;
            snprintf(l.note, sizeof l.note, "NVRTC: \"x.cu\"(3): error\n\ttab \\ back \x01 end");
        } else if (i % 3 == 2) {
            l.outcome = TUNE_RECORD_WRONG;
            l.ms = l.gbs = 0;
        }
        if (i == 7) { /* an application's tunable: its own names, a negative and a large value */
            snprintf(l.family, sizeof l.family, "myapp.stencil-2d_v1");
            snprintf(l.variant, sizeof l.variant, "-");
            l.param_count = 2;
            snprintf(l.names[0], sizeof l.names[0], "TILE");
            snprintf(l.names[1], sizeof l.names[1], "OFFSET");
            l.values[0] = 9007199254740993LL;
            l.values[1] = -7;
        }
        if (i == 9) snprintf(l.key.device, sizeof l.key.device, "GPU \"quoted\" \\ name");
        size_t len = tune_record_format(&l, text, sizeof text);
        assert_true(len > 0 && text[len - 1] == '\n' && strlen(text) == len);
        assert_null(memchr(text, '\n', len - 1)); /* one line, whatever the note holds */
        memset(&back, 0x5a, sizeof back);
        if (!tune_record_parse(text, len - 1, &back)) fail_msg("line %d not read back:\n%s", i, text);
        assert_same_line(&l, &back);
    }
    /* a buffer too small: nothing, never half a line */
    tune_record_line l = sample_line(&rng);
    assert_int_equal(tune_record_format(&l, text, 40), 0);
    /* not-finite figures are written as 0 (JSON has no inf or nan) */
    l.ms = 1.0 / 0.0;
    size_t len = tune_record_format(&l, text, sizeof text);
    assert_non_null(strstr(text, "\"ms\":0,"));
    assert_null(strstr(text, "inf"));
    (void)len;
}

/* Any changed, dropped or added byte makes a line unreadable. */
static void damaged_lines(void **state) {
    (void)state;
    uint64_t rng = test_seed();
    tune_record_line l = sample_line(&rng), back;
    char text[TUNE_RECORD_MAX_LINE], bad[TUNE_RECORD_MAX_LINE + 2];
    size_t len = tune_record_format(&l, text, sizeof text) - 1;
    for (size_t cut = 0; cut < len; cut++)
        if (tune_record_parse(text, cut, &back)) fail_msg("a line cut at %zu read", cut);
    for (size_t i = 0; i < len; i++) {
        memcpy(bad, text, len);
        bad[i] ^= (char)(1 + test_rand(&rng) % 0x7f);
        if (tune_record_parse(bad, len, &back)) fail_msg("byte %zu changed, line read:\n%.*s", i, (int)len, bad);
        memcpy(bad, text, i);
        memcpy(bad + i, text + i + 1, len - i - 1);
        if (tune_record_parse(bad, len - 1, &back)) fail_msg("byte %zu dropped, line read", i);
    }
    /* well-formed lines, sealed with a right checksum, that the writer would
     * never write: another format version, a repeated key, an unknown key */
    char body[TUNE_RECORD_MAX_LINE], line[TUNE_RECORD_MAX_LINE + 64];
    size_t checksum_at = (size_t)(strstr(text, ",\"xxh3\":\"") - text);
    const char *rest = text + strlen("{\"format\":1,");
    int rest_len = (int)(checksum_at - (size_t)(rest - text));
    static const char *const heads[] = {"{\"format\":1,", "{\"format\":2,", "{\"format\":1,\"format\":1,",
                                        "{\"extra\":1,\"format\":1,"};
    for (size_t f = 0; f < sizeof heads / sizeof heads[0]; f++) {
        snprintf(body, sizeof body, "%s%.*s", heads[f], rest_len, rest);
        int m = snprintf(line, sizeof line, "%s,\"xxh3\":\"%016llx\"}", body,
                         (unsigned long long)XXH3_64bits(body, strlen(body)));
        bool read = tune_record_parse(line, (size_t)m, &back);
        if (read != (f == 0)) fail_msg("%s: read %d", line, read); /* the first is the original */
    }
}

/* A line sealed with its right checksum: body is everything before it. */
static size_t seal(const char *body, size_t body_len, char *line, size_t size) {
    int m = snprintf(line, size, "%.*s,\"xxh3\":\"%016llx\"}", (int)body_len, body,
                     (unsigned long long)XXH3_64bits(body, body_len));
    return (size_t)m;
}

/* The writer's line with its first `from` replaced by `to`, sealed. */
static size_t edited(const char *text, const char *from, const char *to, size_t to_len, char *line, size_t size) {
    char body[TUNE_RECORD_MAX_LINE + 64];
    const char *at = strstr(text, from), *end = strstr(text, ",\"xxh3\":\"");
    assert_non_null(at);
    size_t n = (size_t)(at - text);
    memcpy(body, text, n);
    memcpy(body + n, to, to_len);
    size_t tail = (size_t)(end - at) - strlen(from);
    memcpy(body + n + to_len, at + strlen(from), tail);
    return seal(body, n + to_len + tail, line, size);
}

/* Sealed lines the writer never writes are not read: more digits than its
 * %.9g or %.2f, GB/s beyond the database's bound (1e200 was kept, then
 * written back with 201 digits the reader refused), \u0000 (it cut the
 * string short), a \u escape with a non-hex digit, a NUL inside a number,
 * other escapes and number spellings. What the writer writes for such
 * values reads back as itself. */
static void writer_subset_only(void **state) {
    (void)state;
    uint64_t rng = test_seed();
    tune_record_line l = sample_line(&rng), back;
    l.outcome = TUNE_RECORD_OK;
    l.ms = 0.0254;
    l.gbs = 2642.51;
    snprintf(l.key.device, sizeof l.key.device, "GPU");
    l.key.nvrtc_major = 13, l.key.nvrtc_minor = 0;
    l.samples = 5;
    char text[TUNE_RECORD_MAX_LINE], line[TUNE_RECORD_MAX_LINE + 64];
    size_t len = tune_record_format(&l, text, sizeof text) - 1;
    assert_true(tune_record_parse(text, len, &back));
    static const struct {
        const char *from, *to;
        size_t to_len; /* 0: strlen(to) */
    } edits[] = {
        {"\"gbs\":2642.51", "\"gbs\":1e200", 0},
        {"\"gbs\":2642.51", "\"gbs\":1000000000.00", 0},
        {"\"gbs\":2642.51", "\"gbs\":2642.510", 0},
        {"\"gbs\":2642.51", "\"gbs\":2642.5", 0},
        {"\"gbs\":2642.51", "\"gbs\":-0.00", 0},
        {"\"ms\":0.0254", "\"ms\":0.02540000001", 0},
        {"\"ms\":0.0254", "\"ms\":2.54e-2", 0},
        {"\"ms\":0.0254", "\"ms\":0.0254\0", 13},
        {"\"ms\":0.0254", "\"ms\":+0.0254", 0},
        {"\"samples\":5", "\"samples\":05", 0},
        {"\"samples\":5", "\"samples\":5\0", 12},
        {"\"samples\":5", "\"samples\":+5", 0},
        {"\"device\":\"GPU\"", "\"device\":\"G\\u0000PU\"", 0},
        {"\"device\":\"GPU\"", "\"device\":\"G\\u00g1PU\"", 0},
        {"\"device\":\"GPU\"", "\"device\":\"G\\u0041PU\"", 0},
        {"\"device\":\"GPU\"", "\"device\":\"G\\u000AU\"", 0},
        {"\"device\":\"GPU\"", "\"device\":\"G\\nPU\"", 0},
        {"\"device\":\"GPU\"", "\"device\":\"G\\/PU\"", 0},
        {"\"nvrtc\":\"13.0\"", "\"nvrtc\":\"+13.0\"", 0},
        {"\"nvrtc\":\"13.0\"", "\"nvrtc\":\"13.00\"", 0},
        {"\"nvrtc\":\"13.0\"", "\"nvrtc\":\" 13.0\"", 0},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        size_t to_len = edits[i].to_len ? edits[i].to_len : strlen(edits[i].to);
        size_t m = edited(text, edits[i].from, edits[i].to, to_len, line, sizeof line);
        if (tune_record_parse(line, m, &back)) fail_msg("edit %zu read: %.*s", i, (int)m, line);
    }
    /* the same edits' values, written by the writer, read back as written */
    l.gbs = 1e200;
    snprintf(l.key.device, sizeof l.key.device, "G\nP\x7fU\"\\");
    l.ms = 0.02540000001;
    len = tune_record_format(&l, text, sizeof text) - 1;
    assert_non_null(strstr(text, "\"gbs\":999999999.99,"));
    assert_true(tune_record_parse(text, len, &back));
    assert_string_equal(back.key.device, l.key.device);
    char again[TUNE_RECORD_MAX_LINE];
    assert_int_equal(tune_record_format(&back, again, sizeof again) - 1, len);
    assert_memory_equal(again, text, len);
}

static void write_text(const char *path, const char *text, size_t size) {
    assert_true(test_write_file(path, text, size));
}

/* A file of good lines, a damaged one, a blank one and a torn tail. */
static void damaged_file(void **state) {
    (void)state;
    uint64_t rng = test_seed();
    char path[512], text[8 * TUNE_RECORD_MAX_LINE];
    fresh_path(path, sizeof path, "r.jsonl");
    size_t used = 0;
    tune_record_line lines[4];
    for (int i = 0; i < 4; i++) {
        lines[i] = sample_line(&rng);
        used += tune_record_format(&lines[i], text + used, sizeof text - used);
        if (i == 1) used += (size_t)snprintf(text + used, sizeof text - used, "not json at all\n\n");
    }
    size_t whole = used;
    used += tune_record_format(&lines[0], text + used, sizeof text - used) - 10; /* torn: no newline */
    assert_true(files_make_dirs(tmp_root));
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    assert_true(files_make_dirs(dir));
    write_text(path, text, used);
    tune_record r;
    tune_record_init(&r);
    char msg[512];
    assert_status(PTXKIT_SUCCESS, tune_record_load(path, NULL, &r, msg, sizeof msg));
    assert_int_equal(r.count, 4);
    assert_int_equal(r.ignored, 2);
    assert_non_null(strstr(msg, "2 damaged lines ignored"));
    for (int i = 0; i < 4; i++) assert_same_line(&lines[i], &r.lines[i]);
    /* appending after the torn tail starts a new line: the torn one stays
     * ignored, the new one is read */
    tune_record_line extra = sample_line(&rng);
    assert_status(PTXKIT_SUCCESS, tune_record_append(path, &extra, msg, sizeof msg));
    assert_status(PTXKIT_SUCCESS, tune_record_load(path, NULL, &r, msg, sizeof msg));
    assert_int_equal(r.count, 5);
    assert_int_equal(r.ignored, 2);
    assert_same_line(&extra, &r.lines[4]);
    /* the whole file again, without the torn tail: nothing torn */
    write_text(path, text, whole);
    assert_status(PTXKIT_SUCCESS, tune_record_load(path, NULL, &r, msg, sizeof msg));
    assert_int_equal(r.ignored, 1);
    tune_record_clear(&r);
}

/* Missing file, a directory, a FIFO: empty or an I/O error, never a hang. */
static void odd_files(void **state) {
    (void)state;
    char path[512], msg[512];
    tune_record r;
    tune_record_init(&r);
    fresh_path(path, sizeof path, "missing.jsonl");
    assert_status(PTXKIT_SUCCESS, tune_record_load(path, NULL, &r, msg, sizeof msg));
    assert_int_equal(r.count, 0);
    assert_non_null(strstr(msg, "no tuning record"));
    uint64_t rng = 1;
    tune_record_line l = sample_line(&rng);
    assert_status(PTXKIT_SUCCESS, tune_record_append(path, &l, msg, sizeof msg)); /* creates sub/ */
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    assert_status(PTXKIT_ERROR_IO, tune_record_load(dir, NULL, &r, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_IO, tune_record_append(dir, &l, msg, sizeof msg));
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_status(PTXKIT_ERROR_IO, tune_record_load(fifo, NULL, &r, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_IO, tune_record_append(fifo, &l, msg, sizeof msg));
    unlink(fifo);
    tune_record_clear(&r);
}

/* Several processes appending at once: every line whole. */
static void concurrent_appends(void **state) {
    (void)state;
    enum { WRITERS = 6, EACH = 150 };
    char path[512], msg[512];
    fresh_path(path, sizeof path, "c.jsonl");
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            uint64_t rng = 1000 + (uint64_t)w;
            for (int i = 0; i < EACH; i++) {
                tune_record_line l = sample_line(&rng);
                l.samples = w; /* who wrote it */
                snprintf(l.note, sizeof l.note, "writer %d line %d %0*d", w, i, 60 * (i % 5), 0);
                if (tune_record_append(path, &l, msg, sizeof msg) != PTXKIT_SUCCESS) _exit(1);
            }
            _exit(0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    tune_record r;
    tune_record_init(&r);
    assert_status(PTXKIT_SUCCESS, tune_record_load(path, NULL, &r, msg, sizeof msg));
    assert_int_equal(r.ignored, 0);
    assert_int_equal(r.count, WRITERS * EACH);
    int per_writer[WRITERS] = {0};
    for (size_t i = 0; i < r.count; i++) {
        int w = r.lines[i].samples, k = -1;
        assert_true(w >= 0 && w < WRITERS);
        assert_int_equal(sscanf(r.lines[i].note, "writer %*d line %d", &k), 1);
        assert_int_equal(k, per_writer[w]++); /* each writer's lines in its order */
    }
    tune_record_clear(&r);
}

/* The tuner's view: only this problem's lines, the last one of a
 * configuration, and only with the problem's parameter names. */
static void filter_and_find(void **state) {
    (void)state;
    uint64_t rng = test_seed();
    char path[512], msg[512];
    fresh_path(path, sizeof path, "f.jsonl");
    tune_record_line base = sample_line(&rng);
    base.n = 1 << 20;
    for (int i = 0; i < 5; i++) base.values[i] = i + 1;
    tune_record_line other_gpu = base, other_driver = base, other_code = base, other_variant = base, later = base,
                     other_n = base;
    snprintf(other_gpu.key.device, sizeof other_gpu.key.device, "NVIDIA A100");
    other_driver.key.driver = 12080;
    other_code.code ^= 1;
    snprintf(other_variant.variant, sizeof other_variant.variant, "max.float32");
    later.ms = base.ms * 2;
    other_n.n = 1 << 21;
    const tune_record_line *all[] = {&base, &other_gpu, &other_driver, &other_code, &other_variant, &later, &other_n};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        assert_status(PTXKIT_SUCCESS, tune_record_append(path, all[i], msg, sizeof msg));
    tune_record r;
    tune_record_init(&r);
    tune_record_filter f = {.key = &base.key, .family = "reduce", .variant = "sum.float32", .code = base.code};
    assert_status(PTXKIT_SUCCESS, tune_record_load(path, &f, &r, msg, sizeof msg));
    assert_int_equal(r.count, 3); /* base, later, other_n */
    tune_problem pr;
    memset(&pr, 0, sizeof pr);
    pr.param_count = 5;
    for (int i = 0; i < 5; i++) snprintf(pr.names[i], sizeof pr.names[i], "%s", base.names[i]);
    tune_point p = {{1, 2, 3, 4, 5}};
    const tune_record_line *hit = tune_record_find(&r, &pr, 1 << 20, &p);
    assert_non_null(hit);
    assert_true(hit->ms > 1.5 * base.ms); /* the last measurement counts (twice the first) */
    assert_non_null(tune_record_find(&r, &pr, 1 << 21, &p));
    assert_null(tune_record_find(&r, &pr, 1 << 22, &p));
    p.v[4] = 6;
    assert_null(tune_record_find(&r, &pr, 1 << 20, &p));
    p.v[4] = 5;
    snprintf(pr.names[2], sizeof pr.names[2], "vector"); /* another space */
    assert_null(tune_record_find(&r, &pr, 1 << 20, &p));
    pr.param_count = 4;
    assert_null(tune_record_find(&r, &pr, 1 << 20, &p));
    tune_record_clear(&r);
}

static void default_path(void **state) {
    (void)state;
    char buf[512];
    setenv("PTXKIT_TUNE_DB", "/x/y/tune.db", 1);
    unsetenv("PTXKIT_TUNE_RECORD");
    assert_true(tune_record_default_path(buf, sizeof buf));
    assert_string_equal(buf, "/x/y/tune.record.jsonl");
    setenv("PTXKIT_TUNE_DB", "/x/y/tuning", 1);
    assert_true(tune_record_default_path(buf, sizeof buf));
    assert_string_equal(buf, "/x/y/tuning.record.jsonl");
    setenv("PTXKIT_TUNE_RECORD", "/elsewhere/r.jsonl", 1);
    assert_true(tune_record_default_path(buf, sizeof buf));
    assert_string_equal(buf, "/elsewhere/r.jsonl");
    setenv("PTXKIT_TUNE_RECORD", "off", 1);
    assert_false(tune_record_default_path(buf, sizeof buf));
    assert_string_equal(buf, "");
    unsetenv("PTXKIT_TUNE_RECORD");
    unsetenv("PTXKIT_TUNE_DB");
    char small[8];
    setenv("PTXKIT_TUNE_RECORD", "/a/very/long/path.jsonl", 1);
    assert_false(tune_record_default_path(small, sizeof small));
    assert_string_equal(small, "");
    unsetenv("PTXKIT_TUNE_RECORD");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),         cmocka_unit_test(damaged_lines),     cmocka_unit_test(damaged_file),
        cmocka_unit_test(odd_files),          cmocka_unit_test(concurrent_appends), cmocka_unit_test(filter_and_find),
        cmocka_unit_test(default_path),       cmocka_unit_test(writer_subset_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
