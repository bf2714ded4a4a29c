/* The tuning database and record through the public API:
 * ptxkit_tune_db_path_get, _read, _merge (the calls `ptxkit tune
 * --export/--import` use), ptxkit_tune_record_path_get, _read (--show, info). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxkit_tune.h"
#include "test_util.h"
#include "tune/record.h"

static char db_path[128];

/* A parameter of a configuration read back (fails when absent). */
static long long value_of(const ptxkit_config *c, const char *name) {
    long long v = 0;
    if (ptxkit_config_get(c, name, &v) != PTXKIT_SUCCESS) fail_msg("no parameter %s", name);
    return v;
}

static ptxkit_tune_entry family_entry(void) {
    ptxkit_tune_entry e = {.cc = 90, .sm_count = 132, .driver = 13000, .nvrtc_major = 13, .nvrtc_minor = 0,
                           .log2n = 24, .gbs = 2650.25, .default_gbs = 2500.5, .when = 1763850000};
    /* a launch-option family's five fields, by their database names */
    ptxkit_config_set(&e.config, "block", 256);
    ptxkit_config_set(&e.config, "items", 4);
    ptxkit_config_set(&e.config, "vec", 16);
    ptxkit_config_set(&e.config, "bpsm", 0);
    ptxkit_config_set(&e.config, "load", PTXKIT_LOAD_NC);
    snprintf(e.device, sizeof e.device, "GPU A");
    snprintf(e.library, sizeof e.library, "0.2.0");
    snprintf(e.family, sizeof e.family, "reduce");
    snprintf(e.variant, sizeof e.variant, "sum.float32");
    return e;
}

static ptxkit_tune_entry tunable_entry(void) {
    ptxkit_tune_entry e = family_entry();
    snprintf(e.family, sizeof e.family, "myapp.stencil");
    snprintf(e.variant, sizeof e.variant, "-");
    e.config = (ptxkit_config){0};
    ptxkit_config_set(&e.config, "TILE", 32);
    ptxkit_config_set(&e.config, "BIG", 9007199254740993LL); /* beyond a double's integers */
    e.when = 1763850001;
    return e;
}

static void path_read_merge(void **state) {
    (void)state;
    char path[4096];
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_db_path_get(path, sizeof path));
    assert_string_equal(path, db_path);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_db_path_get(path, 4));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_db_path_get(NULL, 10));

    ptxkit_tune_entry *got = NULL;
    size_t count = 99, total = 0;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_db_read(NULL, &got, &count));   /* no file yet */
    assert_int_equal(count, 0);
    assert_null(got);

    ptxkit_tune_entry both[2] = {family_entry(), tunable_entry()};
    int rewritten = -1;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_db_merge(NULL, both, 2, &total, &rewritten));
    assert_int_equal(total, 2);
    assert_int_equal(rewritten, 0);
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_db_read(db_path, &got, &count));
    assert_int_equal(count, 2);
    for (size_t i = 0; i < 2; i++) {
        const ptxkit_tune_entry *want = strcmp(got[i].family, "reduce") == 0 ? &both[0] : &both[1];
        assert_string_equal(got[i].device, want->device);
        assert_string_equal(got[i].variant, want->variant);
        assert_int_equal(got[i].cc, 90);
        assert_int_equal(got[i].log2n, 24);
        assert_int_equal(got[i].config.count, want->config.count); /* the same names, in the same order */
        for (int p = 0; p < want->config.count; p++) {
            assert_string_equal(got[i].config.params[p].name, want->config.params[p].name);
            assert_true(got[i].config.params[p].value == want->config.params[p].value);
        }
        assert_true(got[i].gbs == want->gbs && got[i].when == want->when);
    }
    ptxkit_tune_entries_free(got);

    /* the same key again replaces, a new bucket adds */
    both[0].gbs = 2700;
    both[1].log2n = 20;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_db_merge(NULL, both, 2, &total, NULL));
    assert_int_equal(total, 3);

    /* all or nothing: one entry the database cannot hold stores none */
    ptxkit_tune_entry bad[2] = {family_entry(), family_entry()};
    bad[0].log2n = 30;
    /* 4 on: fields the file's writer once clamped, merged with success and
     * read back altered */
    const char *broken[] = {"empty family", "control character", "reserved", "parameters", "load_op 99",
                            "when -5", "default_gbs 5e9", "gbs -1", "gbs NaN", "when beyond 9999", "block 100",
                            "log2n 64", "cc -1"};
    for (int b = 0; b < (int)(sizeof broken / sizeof broken[0]); b++) {
        bad[1] = family_entry();
        if (b == 0) bad[1].family[0] = 0;
        if (b == 1) snprintf(bad[1].variant, sizeof bad[1].variant, "a\tb");
        if (b == 2) bad[1].reserved[3] = 1;
        if (b == 3) bad[1].config.count = PTXKIT_TUNE_MAX_PARAMS + 1;
        if (b == 4) ptxkit_config_set(&bad[1].config, "load", 99);
        if (b == 5) bad[1].when = -5;
        if (b == 6) bad[1].default_gbs = 5e9;
        if (b == 7) bad[1].gbs = -1;
        if (b == 8) bad[1].gbs = NAN;
        if (b == 9) bad[1].when = 253402300800LL;
        if (b == 10) ptxkit_config_set(&bad[1].config, "block", 100);
        if (b == 11) bad[1].log2n = 64;
        if (b == 12) bad[1].cc = -1;
        if (ptxkit_tune_db_merge(NULL, bad, 2, &total, NULL) != PTXKIT_ERROR_INVALID_ARGUMENT)
            fail_msg("%s: not refused", broken[b]);
        assert_non_null(strstr(ptxkit_last_error(), "tuning entry 1"));
    }
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_db_read(NULL, &got, &count));
    assert_int_equal(count, 3);
    ptxkit_tune_entries_free(got);

    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_db_read(NULL, NULL, &count));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_db_merge(NULL, NULL, 1, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_db_read("", &got, &count));

    /* a damaged file: read says so; a merge keeps it aside and rewrites */
    FILE *f = fopen(db_path, "w");
    assert_non_null(f);
    fputs("this is not a tuning database\n", f);
    fclose(f);
    assert_int_not_equal(ptxkit_tune_db_read(NULL, &got, &count), PTXKIT_SUCCESS);
    assert_int_equal(count, 0);
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_db_merge(NULL, both, 1, &total, &rewritten));
    assert_int_equal(total, 1);
    assert_int_equal(rewritten, 1);
    char kept_path[4200];
    snprintf(kept_path, sizeof kept_path, "%s.bad", db_path);
    FILE *kept = fopen(kept_path, "r");
    assert_non_null(kept); /* the damaged file, kept aside */
    fclose(kept);
}

/* Lines the tuner appended come back whole; damaged ones are counted. */
static void record_read(void **state) {
    (void)state;
    char record[160], path[4096];
    snprintf(record, sizeof record, "%s.record.jsonl", db_path);
    remove(record);
    setenv("PTXKIT_TUNE_RECORD", record, 1);
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_record_path_get(path, sizeof path));
    assert_string_equal(path, record);
    ptxkit_tune_record_line *lines = NULL;
    size_t count = 9, ignored = 9;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_record_read(NULL, &lines, &count, &ignored));
    assert_true(count == 0 && ignored == 0 && lines == NULL);

    tune_record_line a = {.n = 1u << 20, .code = 0x0123456789abcdefULL, .param_count = 2, .outcome = TUNE_RECORD_OK,
                          .ms = 0.025, .gbs = 2642.5, .samples = 5, .when = 1763850000};
    tune_db_key_make(&a.key, "GPU A", 90, 132, 13000, 13, 0, "0.2.0");
    snprintf(a.family, sizeof a.family, "reduce");
    snprintf(a.variant, sizeof a.variant, "sum.float32");
    snprintf(a.names[0], sizeof a.names[0], "block");
    a.values[0] = 256;
    snprintf(a.names[1], sizeof a.names[1], "items");
    a.values[1] = 4;
    tune_record_line b = a;
    b.outcome = TUNE_RECORD_FAILED;
    b.ms = b.gbs = 0;
    snprintf(b.note, sizeof b.note, "too many resources requested");
    char msg[640];
    assert_status(PTXKIT_SUCCESS, tune_record_append(record, &a, msg, sizeof msg));
    FILE *f = fopen(record, "a");
    assert_non_null(f);
    fputs("{\"format\":1,\"damaged\":true}\n", f);
    fclose(f);
    assert_status(PTXKIT_SUCCESS, tune_record_append(record, &b, msg, sizeof msg));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_record_read(record, &lines, &count, &ignored));
    assert_int_equal(count, 2);
    assert_int_equal(ignored, 1);
    assert_string_equal(lines[0].key.device, "GPU A");
    assert_string_equal(lines[0].key.family, "reduce");
    assert_string_equal(lines[0].key.variant, "sum.float32");
    assert_int_equal(lines[0].key.cc, 90);
    assert_true(lines[0].code == a.code && lines[0].n == a.n);
    assert_int_equal(lines[0].config.count, 2);
    assert_string_equal(lines[0].config.params[1].name, "items");
    assert_true(value_of(&lines[0].config, "block") == 256);
    assert_int_equal(lines[0].outcome, PTXKIT_TUNE_OK);
    assert_string_equal(ptxkit_tune_outcome_name(lines[0].outcome), "ok");
    assert_int_equal(lines[1].outcome, PTXKIT_TUNE_FAILED);
    assert_string_equal(lines[1].note, "too many resources requested");
    assert_string_equal(ptxkit_tune_outcome_name((ptxkit_tune_outcome)9), "?");
    ptxkit_tune_record_free(lines);

    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_record_read(NULL, NULL, &count, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_record_path_get(NULL, 4));
    setenv("PTXKIT_TUNE_RECORD", "off", 1);
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_record_path_get(path, sizeof path));
    assert_string_equal(path, "");
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_record_read(NULL, &lines, &count, NULL));
    unsetenv("PTXKIT_TUNE_RECORD");
    remove(record);
    snprintf(path, sizeof path, "%s.lock", record);
    remove(path);
    ptxkit_tune_entry key;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_key_get(NULL, &key));
}

/* ptxkit_tune_record_append: lines written as the reader reads them back;
 * one bad line writes none; ptxkit_tune_code_get and _source_get's checks. */
static void record_append(void **state) {
    (void)state;
    char record[128];
    snprintf(record, sizeof record, "/tmp/ptxkit-test-append.%d.record.jsonl", (int)getpid());
    remove(record);
    ptxkit_tune_record_line lines[2];
    memset(lines, 0, sizeof lines);
    ptxkit_tune_record_line *l = &lines[0];
    snprintf(l->key.device, sizeof l->key.device, "GPU B");
    l->key.cc = 90;
    l->key.sm_count = 132;
    l->key.driver = 13000;
    l->key.nvrtc_major = 13;
    snprintf(l->key.library, sizeof l->key.library, "0.2.1");
    snprintf(l->key.family, sizeof l->key.family, "reduce");
    snprintf(l->key.variant, sizeof l->key.variant, "sum.int32");
    l->code = 0xfedcba9876543210ULL;
    l->n = 3u << 20;
    ptxkit_config_set(&l->config, "block", 512);
    ptxkit_config_set(&l->config, "items", 8);
    l->outcome = PTXKIT_TUNE_OK;
    l->ms = 0.125;
    l->gbs = 100.25;
    l->samples = 7;
    l->when = 1763850000;
    snprintf(l->note, sizeof l->note, "a \"quoted\" note");
    lines[1] = lines[0];
    lines[1].outcome = PTXKIT_TUNE_WRONG;
    lines[1].ms = lines[1].gbs = 0;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_record_append(record, lines, 2));
    ptxkit_tune_record_line *got = NULL;
    size_t count = 0, ignored = 9;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_record_read(record, &got, &count, &ignored));
    assert_int_equal(count, 2);
    assert_int_equal(ignored, 0);
    assert_string_equal(got[0].key.device, "GPU B");
    assert_string_equal(got[0].key.variant, "sum.int32");
    assert_true(got[0].code == l->code && got[0].n == l->n && value_of(&got[0].config, "block") == 512);
    assert_true(got[0].ms == 0.125 && got[0].gbs == 100.25 && got[0].samples == 7 && got[0].when == l->when);
    assert_string_equal(got[0].note, l->note);
    assert_int_equal(got[1].outcome, PTXKIT_TUNE_WRONG);
    ptxkit_tune_record_free(got);
    /* a bad line anywhere: nothing written */
    ptxkit_tune_record_line bad[2] = {lines[0], lines[0]};
    snprintf(bad[1].config.params[0].name, sizeof bad[1].config.params[0].name, "bad name");
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_record_append(record, bad, 2));
    bad[1] = lines[0];
    bad[1].key.family[0] = 0;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_record_append(record, bad, 2));
    bad[1] = lines[0];
    bad[1].config.count = PTXKIT_TUNE_MAX_PARAMS + 1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_record_append(record, bad, 2));
    bad[1] = lines[0];
    bad[1].key.variant[0] = 0;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_record_append(record, bad, 2));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_record_append(record, NULL, 1));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_record_read(record, &got, &count, NULL));
    assert_int_equal(count, 2);
    ptxkit_tune_record_free(got);
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_record_append(record, lines, 0));
    remove(record);
    char lock[160];
    snprintf(lock, sizeof lock, "%s.lock", record);
    remove(lock);

    unsigned long long code = 1, code2 = 2;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_code_get("reduce", "sum.float32", &code));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_code_get("copy", NULL, &code2));
    assert_true(code != 0 && code == code2); /* the embedded sources' digest */
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_tune_code_get("nosuch", NULL, &code));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_code_get("reduce", NULL, NULL));
    int tuned = 7;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_source_get(NULL, "reduce", "sum.float32", 1024, NULL, &tuned));
}

int main(void) {
    snprintf(db_path, sizeof db_path, "/tmp/ptxkit-test-exchange.%d.db", (int)getpid());
    remove(db_path);
    setenv("PTXKIT_TUNE_DB", db_path, 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(path_read_merge), cmocka_unit_test(record_read),
                                       cmocka_unit_test(record_append)};
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char aside[256];
    remove(db_path);
    snprintf(aside, sizeof aside, "%s.lock", db_path);
    remove(aside);
    snprintf(aside, sizeof aside, "%s.bad", db_path);
    remove(aside);
    return failed;
}
