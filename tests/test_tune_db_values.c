/* The tuning database's values at their limits: every value the parser
 * accepts must come back unchanged through the writer (parse -> format ->
 * parse), the writer must never write a file its own parser refuses, a `when`
 * must stay a date that localtime_r can represent, and a database at the
 * entry cap must load quickly (the load was quadratic). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "test_util.h"
#include "tuned/db.h"

#define FIELDS_BEFORE_GBS                                                                                \
    "device=GPU\tcc=90\tsms=132\tdriver=13000\tnvrtc=13.0\tlib=0.1.0\tfamily=reduce\tvariant=sum.float32" \
    "\tlog2n=24\tblock=256\titems=4\tvec=16\tbpsm=0\tload=nc"

/* Parses a one-entry file (valid checksum) with the given gbs, default_gbs
 * and when texts; SUCCESS puts the entry in *out. */
static ptxkit_status parse_values(const char *gbs, const char *default_gbs, const char *when, tune_db_entry *out) {
    char body[1024];
    int n = snprintf(body, sizeof body, "ptxkit-tune-db 1\nentry\t" FIELDS_BEFORE_GBS "\tgbs=%s\tdefault_gbs=%s\twhen=%s\n",
                     gbs, default_gbs, when);
    assert_true(n > 0 && n < (int)sizeof body - 100);
    snprintf(body + n, sizeof body - (size_t)n, "end\tentries=1\txxh3_64=%016llx\n",
             (unsigned long long)XXH3_64bits(body, (size_t)n));
    tune_db db;
    tune_db_init(&db);
    char msg[256];
    ptxkit_status st = tune_db_parse(body, strlen(body), &db, msg, sizeof msg);
    if (st == PTXKIT_SUCCESS) {
        assert_int_equal(db.count, 1);
        *out = db.entries[0];
    }
    tune_db_clear(&db);
    return st;
}

static bool same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Formats a database holding e alone and parses it back: must succeed. */
static tune_db_entry through_writer(const tune_db_entry *e) {
    tune_db db, back;
    tune_db_init(&db);
    tune_db_init(&back);
    assert_true(tune_db_put(&db, e));
    size_t size;
    char *text = tune_db_format(&db, &size);
    assert_non_null(text);
    char msg[256];
    ptxkit_status st = tune_db_parse(text, size, &back, msg, sizeof msg);
    if (st != PTXKIT_SUCCESS) fail_msg("the writer wrote a file its parser refuses (%s):\n%s", msg, text);
    assert_int_equal(back.count, 1);
    tune_db_entry out = back.entries[0];
    free(text);
    tune_db_clear(&db);
    tune_db_clear(&back);
    return out;
}

static void assert_identical(const tune_db_entry *a, const tune_db_entry *b, const char *what) {
    if (!same_double(a->gbs, b->gbs) || !same_double(a->default_gbs, b->default_gbs) || a->when != b->when ||
        !tune_db_key_equal(&a->key, &b->key) || strcmp(a->family, b->family) || strcmp(a->variant, b->variant) ||
        a->bucket != b->bucket || memcmp(&a->config, &b->config, sizeof a->config))
        fail_msg("'%s' changed through the writer: gbs %.17g -> %.17g, default %.17g -> %.17g, when %lld -> %lld", what,
                 a->gbs, b->gbs, a->default_gbs, b->default_gbs, a->when, b->when);
}

/* A value text of one of several shapes, biased to the edges. */
static void random_number_text(uint64_t *rng, char *buf, size_t size) {
    uint64_t r = test_rand(rng);
    int decimals = (int)(test_rand(rng) % 12);
    double u = (double)(test_rand(rng) >> 11) / 9007199254740992.0; /* [0, 1) */
    switch (r % 8) {
    case 0: {
        uint64_t bits = test_rand(rng);
        double d;
        memcpy(&d, &bits, sizeof d);
        snprintf(buf, size, "%.17g", d);
        break;
    }
    case 1: snprintf(buf, size, "%.*f", decimals, u * 1e9); break;
    case 2: snprintf(buf, size, "%.*f", decimals, 1e9 - u * 0.02); break; /* [999999999.98, 1e9] */
    case 3: snprintf(buf, size, "%.*g", decimals + 1, u * pow(10, (int)(test_rand(rng) % 24) - 12)); break;
    case 4: snprintf(buf, size, "%a", u * 1e9); break;
    case 5: snprintf(buf, size, "%.*f", decimals, (double)(test_rand(rng) % 100000) / 100.0 + 0.005); break;
    case 6: snprintf(buf, size, "%.*e", decimals, u * 1e9); break;
    default: snprintf(buf, size, "%llu", (unsigned long long)(test_rand(rng) % 2000000000ull)); break;
    }
}

static void random_when_text(uint64_t *rng, char *buf, size_t size) {
    static const long long edges[] = {0, 1, 253402300799LL, 253402300800LL, 67768036191676799LL, 67768036191676800LL,
                                      LLONG_MAX, 2147483647LL, 2147483648LL, 1763850000LL};
    uint64_t r = test_rand(rng);
    if (r % 4 == 0)
        snprintf(buf, size, "%lld", edges[test_rand(rng) % (sizeof edges / sizeof edges[0])]);
    else
        snprintf(buf, size, "%llu", (unsigned long long)(test_rand(rng) % (uint64_t)pow(10, (int)(r % 19) + 1)));
}

/* The property: whatever the parser accepts, the writer gives back exactly. */
static void test_parse_format_parse_is_identity(void **state) {
    (void)state;
    uint64_t rng = test_seed();
    int accepted = 0;
    for (int round = 0; round < 40000; round++) {
        char gbs[64], default_gbs[64], when[32];
        random_number_text(&rng, gbs, sizeof gbs);
        random_number_text(&rng, default_gbs, sizeof default_gbs);
        random_when_text(&rng, when, sizeof when);
        tune_db_entry e;
        if (parse_values(gbs, default_gbs, when, &e) != PTXKIT_SUCCESS) continue;
        accepted++;
        tune_db_entry back = through_writer(&e);
        char what[200];
        snprintf(what, sizeof what, "gbs=%s default_gbs=%s when=%s", gbs, default_gbs, when);
        assert_identical(&e, &back, what);
        /* an accepted time is one `ptxkit tune --show` can print */
        time_t tt = (time_t)e.when;
        struct tm tmv;
        if (!localtime_r(&tt, &tmv)) fail_msg("when=%s is accepted but localtime_r cannot represent it", when);
    }
    assert_true(accepted > 5000);
}

/* The exact values of the report: the rounding edge below 1e9. */
static void test_gbs_edges(void **state) {
    (void)state;
    static const char *const texts[] = {"999999999.99", "999999999.994", "999999999.995", "999999999.999",
                                        "999999999.9999999", "0.004", "0.005", "0", "-0", "0.001", "1e-300",
                                        "5e-324", "0x1.fffffffffffffp+29", "2650.1", "2650.10000000000001"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        tune_db_entry e;
        if (parse_values(texts[i], texts[i], "5", &e) != PTXKIT_SUCCESS) continue;
        tune_db_entry back = through_writer(&e);
        assert_identical(&e, &back, texts[i]);
    }
    /* values that are plainly out of range stay refused */
    tune_db_entry e;
    assert_status(PTXKIT_ERROR_CORRUPT, parse_values("1e9", "1", "5", &e));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_values("-1", "1", "5", &e));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_values("nan", "1", "5", &e));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_values("inf", "1", "5", &e));
}

/* Whatever a caller puts in an entry, the file written is one the parser
 * reads: a value out of the file's range must not cost every entry. */
static void test_writer_output_always_parses(void **state) {
    (void)state;
    static const double odd[] = {NAN, INFINITY, -INFINITY, -1, -0.0, 1e300, 1e9, 999999999.999, 999999999.995,
                                 DBL_MIN, 5e-324, 0.004999, 2650.1};
    static const long long whens[] = {-5, 0, LLONG_MAX, 67768036191676800LL, 253402300800LL, 1763850000};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        for (size_t j = 0; j < sizeof whens / sizeof whens[0]; j++) {
            tune_db_entry e;
            assert_status(PTXKIT_SUCCESS, parse_values("1", "1", "5", &e));
            e.gbs = odd[i];
            e.default_gbs = odd[(i + 3) % (sizeof odd / sizeof odd[0])];
            e.when = whens[j];
            tune_db_entry back = through_writer(&e);
            /* and what came back is itself stable */
            tune_db_entry again = through_writer(&back);
            assert_identical(&back, &again, "a clamped value");
        }
}

/* `when` is bounded: 67768036191676800 made localtime_r return NULL and
 * `ptxkit tune --show` crash. */
static void test_when_bounded(void **state) {
    (void)state;
    tune_db_entry e;
    assert_status(PTXKIT_ERROR_CORRUPT, parse_values("1", "1", "67768036191676800", &e));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_values("1", "1", "9223372036854775807", &e));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_values("1", "1", "253402300800", &e)); /* year 10000 */
    assert_status(PTXKIT_SUCCESS, parse_values("1", "1", "253402300799", &e));     /* 9999-12-31 23:59:59 UTC */
    assert_status(PTXKIT_SUCCESS, parse_values("1", "1", "0", &e));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_values("1", "1", "-1", &e));
}

/* ---- a database at the entry cap ------------------------------------- */

/* Entries that differ only in their last-compared field (the driver
 * version), the worst case of a linear scan by slot. */
static void build_entries(tune_db *db, size_t count) {
    tune_db_init(db);
    tune_db_entry e;
    assert_status(PTXKIT_SUCCESS, parse_values("2650.1", "2500.3", "1763850000", &e));
    tune_db_key_make(&e.key, "NVIDIA H100 80GB HBM3", 90, 132, 13000, 13, 0, "0.1.0");
    for (size_t i = 0; i < count; i++) {
        e.key.driver = 13000 + (int)i;
        e.when = 1763850000 + (long long)i;
        assert_true(tune_db_put(db, &e));
    }
    assert_int_equal(db->count, count);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The load was quadratic: 20,000 entries took seconds. Now well under a
 * second even under the sanitizers (BENCHMARKS.md has the figure). */
static void test_load_at_cap_is_fast(void **state) {
    (void)state;
    tune_db db, back;
    build_entries(&db, TUNE_DB_MAX_ENTRIES);
    size_t size;
    char *text = tune_db_format(&db, &size);
    assert_non_null(text);
    tune_db_init(&back);
    char msg[256];
    double t0 = now_s();
    assert_status(PTXKIT_SUCCESS, tune_db_parse(text, size, &back, msg, sizeof msg));
    double seconds = now_s() - t0;
    assert_int_equal(back.count, TUNE_DB_MAX_ENTRIES);
    if (seconds > 1.0) fail_msg("parsing %d entries took %.2f s", TUNE_DB_MAX_ENTRIES, seconds);
    /* every entry is found, and found quickly */
    t0 = now_s();
    for (size_t i = 0; i < db.count; i++) {
        const tune_db_entry *w = &db.entries[i];
        const tune_db_entry *g = tune_db_find(&back, &w->key, w->family, w->variant, w->bucket, 0);
        assert_non_null(g);
        assert_int_equal(g->when, w->when);
    }
    seconds = now_s() - t0;
    if (seconds > 1.0) fail_msg("%d lookups took %.2f s", TUNE_DB_MAX_ENTRIES, seconds);
    free(text);
    tune_db_clear(&db);
    tune_db_clear(&back);
}

/* A file beyond the cap is refused while parsing (the writer never writes
 * one), however much of it there is. */
static void test_cap_applied_when_parsing(void **state) {
    (void)state;
    tune_db db, back;
    build_entries(&db, TUNE_DB_MAX_ENTRIES + 1);
    size_t size;
    char *text = tune_db_format(&db, &size);
    assert_non_null(text);
    tune_db_init(&back);
    char msg[256];
    assert_status(PTXKIT_ERROR_CORRUPT, tune_db_parse(text, size, &back, msg, sizeof msg));
    assert_int_equal(back.count, 0);
    assert_non_null(strstr(msg, "20000"));
    free(text);
    tune_db_clear(&db);
}

/* Replacing by slot still works with the index: same slot replaces, any
 * differing field of the slot adds. */
static void test_put_replaces_by_slot(void **state) {
    (void)state;
    tune_db db;
    build_entries(&db, 1000);
    tune_db_entry e = db.entries[500];
    e.gbs = 7;
    assert_true(tune_db_put(&db, &e));
    assert_int_equal(db.count, 1000);
    assert_true(tune_db_find(&db, &e.key, e.family, e.variant, e.bucket, 0)->gbs == 7);
    e.key.nvrtc_minor = 1;
    assert_true(tune_db_put(&db, &e));
    assert_int_equal(db.count, 1001);
    snprintf(e.family, sizeof e.family, "copy");
    assert_true(tune_db_put(&db, &e));
    assert_int_equal(db.count, 1002);
    /* nearest bucket, the larger on a tie */
    tune_db_entry lo = db.entries[0], hi = db.entries[0];
    snprintf(lo.variant, sizeof lo.variant, "gap");
    hi = lo;
    lo.bucket = 10;
    hi.bucket = 14;
    assert_true(tune_db_put(&db, &lo));
    assert_true(tune_db_put(&db, &hi));
    assert_int_equal(tune_db_find(&db, &lo.key, lo.family, "gap", 12, 2)->bucket, 14);
    assert_int_equal(tune_db_find(&db, &lo.key, lo.family, "gap", 11, 2)->bucket, 10);
    assert_null(tune_db_find(&db, &lo.key, lo.family, "gap", 17, 2));
    assert_int_equal(tune_db_find(&db, &lo.key, lo.family, "gap", 40, 1000)->bucket, 14);
    tune_db_clear(&db);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_format_parse_is_identity),
        cmocka_unit_test(test_gbs_edges),
        cmocka_unit_test(test_writer_output_always_parses),
        cmocka_unit_test(test_when_bounded),
        cmocka_unit_test(test_load_at_cap_is_fast),
        cmocka_unit_test(test_cap_applied_when_parsing),
        cmocka_unit_test(test_put_replaces_by_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
