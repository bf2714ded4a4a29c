/* ptx_rewrite_loads: the load cache-operator rewrite of PTX text (CPU only).
 * Inputs are copied into buffers of their exact size, without a NUL, so
 * AddressSanitizer catches any read past `size`.
 * usage: test_ptx_rewrite CORPUS_DIR FAMILIES_DIR [PTXAS]
 *   CORPUS_DIR  tests/ptx_corpus: fixtures whose lines ending in "//> CODE"
 *               must come out as CODE (OP: the operator; nc drops ".weak"),
 *               every other line unchanged, with the counts on their
 *               "// expect:" line
 *   FAMILIES_DIR  families/, holding the committed NAME/NAME.ptx
 *   PTXAS       ptxas, to check that every rewritten text assembles (empty
 *               or absent: that part is skipped) */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/driver.h"
#include "family.h"
#include "lab.h"
#include "runtime/compile.h"
#include "runtime/program.h"
#include "runtime/embedded.h"
#include "runtime/ptx_rewrite.h"
#include "test_util.h"

static const char *corpus_dir, *ptx_dir, *ptxas;

static const char *const op_names[PTXKIT_LOAD_OP_COUNT] = {"default", "ca", "cg", "cs", "lu", "cv", "nc"};

/* A malloc'd copy of exactly n bytes (no NUL after them). */
static char *exact_copy(const char *text, size_t n) {
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    if (n) memcpy(copy, text, n);
    return copy;
}

/* Properties every successful rewrite has, whatever the input: NUL after
 * the copy, the size accounted for by the edits, identity for DEFAULT, and
 * a second rewrite with the same op changes nothing (its loads now carry
 * an operator). */
static void check_invariants(const char *in, size_t n, ptxkit_load_op op, const char *out, size_t out_size,
                             const ptx_rewrite_stats *s) {
    assert_int_equal(out[out_size], 0);
    assert_true(s->rewritten >= 0 && s->plain >= 0 && s->kept_operator >= 0 && s->kept_ordered >= 0 &&
                s->unrecognized >= 0);
    if (op == PTXKIT_LOAD_DEFAULT) {
        assert_int_equal(s->rewritten, 0);
        assert_int_equal(out_size, n);
        if (n) assert_memory_equal(out, in, n);
    } else {
        assert_int_equal(s->rewritten, s->plain);
        size_t grown = n + 3 * (size_t)s->rewritten;
        if (op == PTXKIT_LOAD_NC) {
            /* each rewritten load may also have lost a ".weak" */
            assert_true(out_size <= grown && (grown - out_size) % 5 == 0 &&
                        (grown - out_size) / 5 <= (size_t)s->rewritten);
        } else {
            assert_int_equal(out_size, grown);
        }
    }
    char *again_in = exact_copy(out, out_size), *again = NULL;
    size_t again_size = 0;
    ptx_rewrite_stats s2;
    assert_int_equal(ptx_rewrite_loads(again_in, out_size, op, &again, &again_size, &s2, NULL, 0), PTXKIT_SUCCESS);
    assert_int_equal(again_size, out_size);
    if (out_size) assert_memory_equal(again, out, out_size);
    assert_int_equal(s2.rewritten, 0);
    assert_int_equal(s2.kept_ordered, s->kept_ordered);
    assert_int_equal(s2.unrecognized, s->unrecognized);
    if (op != PTXKIT_LOAD_DEFAULT) {
        assert_int_equal(s2.plain, 0);
        assert_int_equal(s2.kept_operator, s->kept_operator + s->rewritten);
    } else {
        assert_int_equal(s2.plain, s->plain);
        assert_int_equal(s2.kept_operator, s->kept_operator);
    }
    free(again);
    free(again_in);
}

/* Rewrites n bytes of text (from an exact-size copy), checks the invariants
 * and returns the output; *size and *stats receive the rest. */
static char *rewrite(const char *text, size_t n, ptxkit_load_op op, size_t *size, ptx_rewrite_stats *stats) {
    char *in = exact_copy(text, n), *out = NULL, why[256];
    size_t out_size = 0;
    ptx_rewrite_stats s;
    ptxkit_status st = ptx_rewrite_loads(in, n, op, &out, &out_size, &s, why, sizeof why);
    if (st != PTXKIT_SUCCESS) fail_msg("ptx_rewrite_loads -> %s: %s", ptxkit_status_string(st), why);
    assert_non_null(out);
    check_invariants(in, n, op, out, out_size, &s);
    free(in);
    if (size) *size = out_size;
    if (stats) *stats = s;
    return out;
}

/* ---- small snippets, exact output ---- */

typedef struct snippet {
    const char *in;
    size_t in_len;
    ptxkit_load_op op;
    const char *want;
    size_t want_len;
    int rewritten, kept_operator, kept_ordered, unrecognized;
} snippet;

#define S(x) x, sizeof(x) - 1
#define SAME NULL, 0

static const snippet snippets[] = {
    /* rewritten: every layout */
    {S("ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, S("ld.global.cg.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("\tld.global.v4.u32 \t{%r1, %r2, %r3, %r4}, [%rd1+16];\n"), PTXKIT_LOAD_CS,
     S("\tld.global.cs.v4.u32 \t{%r1, %r2, %r3, %r4}, [%rd1+16];\n"), 1, 0, 0, 0},
    {S("ld.weak.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CA, S("ld.weak.global.ca.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("ld.weak.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_NC, S("ld.global.nc.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("ld.global.weak.f32 %f1, [%rd1];"), PTXKIT_LOAD_NC, S("ld.global.nc.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_NC, S("ld.global.nc.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("@%p1 ld.global.u8 %rs1, [%rd1];"), PTXKIT_LOAD_LU, S("@%p1 ld.global.lu.u8 %rs1, [%rd1];"), 1, 0, 0, 0},
    {S("@!%p1 ld.global.L2::cache_hint.L2::256B.v2.f64 {%fd1, %fd2}, [%rd1], %rd2;"), PTXKIT_LOAD_CV,
     S("@!%p1 ld.global.cv.L2::cache_hint.L2::256B.v2.f64 {%fd1, %fd2}, [%rd1], %rd2;"), 1, 0, 0, 0},
    {S("@ ! %p1 /*g*/ ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, S("@ ! %p1 /*g*/ ld.global.cg.f32 %f1, [%rd1];"), 1,
     0, 0, 0},
    {S("ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4];"), PTXKIT_LOAD_CG,
     S("ld.global.cg.f32 %f1, [%rd1]; ld.global.cg.f32 %f2, [%rd1+4];"), 2, 0, 0, 0},
    {S("$L__BB0_3: ld.global.u32 %r1, [%rd1];"), PTXKIT_LOAD_CG, S("$L__BB0_3: ld.global.cg.u32 %r1, [%rd1];"), 1, 0, 0,
     0},
    {S("ld: ld.global.u32 %r1, [%rd1];"), PTXKIT_LOAD_CG, S("ld: ld.global.cg.u32 %r1, [%rd1];"), 1, 0, 0, 0},
    {S("{ ld.global.f32 %f1, [%rd1]; }"), PTXKIT_LOAD_CA, S("{ ld.global.ca.f32 %f1, [%rd1]; }"), 1, 0, 0, 0},
    {S("@%p1 bra $L__BB0_2; ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CA,
     S("@%p1 bra $L__BB0_2; ld.global.ca.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("ld.global.f32 %f1, [%rd1];\r\nld.global.f32 %f2, [%rd1];\r\n"), PTXKIT_LOAD_CG,
     S("ld.global.cg.f32 %f1, [%rd1];\r\nld.global.cg.f32 %f2, [%rd1];\r\n"), 2, 0, 0, 0},
    {S("\t.loc\t1 5 5\n\tld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG,
     S("\t.loc\t1 5 5\n\tld.global.cg.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("\t.loc\t1 5 5 /* a comment\nover lines */ ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG,
     S("\t.loc\t1 5 5 /* a comment\nover lines */ ld.global.cg.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("ld .weak .global .f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, S("ld .weak .global.cg .f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("ld .weak .global .f32 %f1, [%rd1];"), PTXKIT_LOAD_NC, S("ld  .global.nc .f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("ld/*a*/.weak/*b*/.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_NC, S("ld/*a*//*b*/.global.nc.f32 %f1, [%rd1];"), 1,
     0, 0, 0},
    /* a NUL is an ordinary character (the driver stops reading there) */
    {S("ld.global.f32 %f1, [%rd1];\0ld.global.f32 %f2, [%rd1];\n\0\nld.global.f32 %f3, [%rd1];"), PTXKIT_LOAD_CG,
     S("ld.global.cg.f32 %f1, [%rd1];\0ld.global.f32 %f2, [%rd1];\n\0\nld.global.cg.f32 %f3, [%rd1];"), 2, 0, 0, 0},
    /* DEFAULT copies, and still counts */
    {S("ld.global.f32 %f1, [%rd1]; ld.global.cg.f32 %f2, [%rd1];"), PTXKIT_LOAD_DEFAULT, SAME, 0, 1, 0, 0},
    /* comments and strings */
    {S("// ld.global.f32 %f1, [%rd1];\n/* ld.global.f32 */ ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG,
     S("// ld.global.f32 %f1, [%rd1];\n/* ld.global.f32 */ ld.global.cg.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S("/* ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("\t.file\t1 \"a;ld.global.f32 %f1, [%rd1];\"\n"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S(".file 1 \"ld.global.f32\nld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG,
     S(".file 1 \"ld.global.f32\nld.global.cg.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    {S(".file 1 \"a\\\";ld.global.f32 %f1\"; ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG,
     S(".file 1 \"a\\\";ld.global.f32 %f1\"; ld.global.cg.f32 %f1, [%rd1];"), 1, 0, 0, 0},
    /* words that only contain ld.global, or not at an opcode's place */
    {S("xld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("%ld.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("ld_global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("ld.globalx.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("ld.global_f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("mov.u64 %rd1, ld.global.f32;"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("ldu.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("st.global.f32 [%rd1], %f1; atom.global.add.u32 %r1, [%rd1], 1; red.global.add.u32 [%rd1], 1;"),
     PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("prefetch.global.L2::evict_last [%rd1]; cp.async.ca.shared.global [s], [%rd1], 16;"), PTXKIT_LOAD_CG, SAME, 0,
     0, 0, 0},
    {S("ld.shared.f32 %f1, [s]; ld.local.f32 %f1, [l]; ld.param.u64 %rd1, [p]; ld.const.f32 %f1, [c];"),
     PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("ld.f32 %f1, [%rd1]; ld.volatile.f32 %f1, [%rd1]; ld.shared::cluster.u32 %r1, [s];"), PTXKIT_LOAD_NC, SAME, 0,
     0, 0, 0},
    /* already an operator, .nc or an eviction priority */
    {S("ld.global.cg.f32 %f1, [%rd1];"), PTXKIT_LOAD_CA, SAME, 0, 1, 0, 0},
    {S("ld.global.nc.f32 %f1, [%rd1];"), PTXKIT_LOAD_CA, SAME, 0, 1, 0, 0},
    {S("ld.global.cs.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];"), PTXKIT_LOAD_NC, SAME, 0, 1, 0, 0},
    {S("ld.global.L1::evict_last.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 1, 0, 0},
    {S("ld.global.L2::evict_first.v8.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1];"), PTXKIT_LOAD_CG, SAME,
     0, 1, 0, 0},
    /* memory-ordered */
    {S("ld.volatile.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 1, 0},
    {S("ld.relaxed.gpu.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_NC, SAME, 0, 0, 1, 0},
    {S("@%p1 ld.acquire.sys.global.u32 %r1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 1, 0},
    {S("ld.mmio.relaxed.sys.global.u32 %r1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 1, 0},
    /* not understood: left alone and counted */
    {S("ld.global.f16 %h1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.global.v4 {%r1, %r2, %r3, %r4}, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.global.f32.v4 {%f1, %f2, %f3, %f4}, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.global.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.global.shared.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.global.v2.v4.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.global.gpu.f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.weak.weak.global.f32 %f1, [%rd1];"), PTXKIT_LOAD_NC, SAME, 0, 0, 0, 1},
    {S("ld.global..f32 %f1, [%rd1];"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    /* truncated */
    {S("ld.global"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.global.f3"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 1},
    {S("ld.global.f32"), PTXKIT_LOAD_CG, S("ld.global.cg.f32"), 1, 0, 0, 0},
    {S("ld."), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("ld"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("@"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("\""), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S("/"), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
    {S(""), PTXKIT_LOAD_CG, SAME, 0, 0, 0, 0},
};

static void snippets_exact(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof snippets / sizeof snippets[0]; i++) {
        const snippet *c = &snippets[i];
        const char *want = c->want ? c->want : c->in;
        size_t want_len = c->want ? c->want_len : c->in_len;
        size_t size;
        ptx_rewrite_stats s;
        char *out = rewrite(c->in, c->in_len, c->op, &size, &s);
        if (size != want_len || memcmp(out, want, want_len) != 0)
            fail_msg("snippet %zu (op %s):\n  in:   %.*s\n  got:  %.*s\n  want: %.*s", i, op_names[c->op],
                     (int)c->in_len, c->in, (int)size, out, (int)want_len, want);
        if (s.rewritten != c->rewritten || s.kept_operator != c->kept_operator || s.kept_ordered != c->kept_ordered ||
            s.unrecognized != c->unrecognized)
            fail_msg("snippet %zu (%.*s): counts %d/%d/%d/%d, want %d/%d/%d/%d (rewritten/operator/ordered/unrecognized)",
                     i, (int)c->in_len, c->in, s.rewritten, s.kept_operator, s.kept_ordered, s.unrecognized,
                     c->rewritten, c->kept_operator, c->kept_ordered, c->unrecognized);
        free(out);
    }
}

static void why_names_the_first_unrecognized_load(void **state) {
    (void)state;
    const char text[] = "ld.global.f32 %f1, [%rd1];\n\tld.global.f16 %h1, [%rd1];\nld.global.b7 %r1, [%rd1];\n";
    char *in = exact_copy(text, sizeof text - 1), *out, why[200];
    size_t size;
    ptx_rewrite_stats s;
    assert_int_equal(ptx_rewrite_loads(in, sizeof text - 1, PTXKIT_LOAD_CG, &out, &size, &s, why, sizeof why),
                     PTXKIT_SUCCESS);
    assert_int_equal(s.unrecognized, 2);
    assert_non_null(strstr(why, "line 2"));
    assert_non_null(strstr(why, "ld.global.f16"));
    free(out);
    /* a clean text leaves why empty, a short why is cut, not overrun */
    assert_int_equal(ptx_rewrite_loads(in, 27, PTXKIT_LOAD_CG, &out, &size, &s, why, sizeof why), PTXKIT_SUCCESS);
    assert_string_equal(why, "");
    free(out);
    char tiny[4] = "xyz";
    assert_int_equal(ptx_rewrite_loads(in, sizeof text - 1, PTXKIT_LOAD_CG, &out, &size, NULL, tiny, sizeof tiny),
                     PTXKIT_SUCCESS);
    assert_string_equal(tiny, "lin");
    free(out);
    free(in);
}

static void bad_arguments(void **state) {
    (void)state;
    char *out = (char *)1, why[128];
    size_t size = 7;
    ptx_rewrite_stats s;
    const char text[] = "ld.global.f32 %f1, [%rd1];";
    assert_int_equal(ptx_rewrite_loads(text, 4, PTXKIT_LOAD_CG, NULL, &size, &s, why, sizeof why),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(why, "out"));
    assert_int_equal(size, 0);
    assert_int_equal(ptx_rewrite_loads(text, 4, PTXKIT_LOAD_CG, &out, NULL, &s, why, sizeof why),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_null(out);
    assert_int_equal(ptx_rewrite_loads(NULL, 4, PTXKIT_LOAD_CG, &out, &size, &s, why, sizeof why),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(why, "ptx is NULL"));
    assert_int_equal(ptx_rewrite_loads(text, 4, (ptxkit_load_op)-1, &out, &size, &s, why, sizeof why),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptx_rewrite_loads(text, 4, PTXKIT_LOAD_OP_COUNT, &out, &size, NULL, NULL, 0),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_null(out);
    /* the copy plus its NUL cannot fit: refused before anything is read */
    assert_int_equal(ptx_rewrite_loads(text, SIZE_MAX, PTXKIT_LOAD_CG, &out, &size, &s, why, sizeof why),
                     PTXKIT_ERROR_OVERFLOW);
    assert_null(out);
    assert_int_equal(size, 0);
    /* an empty text, even as NULL, is a valid empty copy */
    assert_int_equal(ptx_rewrite_loads(NULL, 0, PTXKIT_LOAD_CG, &out, &size, &s, why, sizeof why), PTXKIT_SUCCESS);
    assert_non_null(out);
    assert_int_equal(size, 0);
    assert_int_equal(out[0], 0);
    free(out);
}

/* ---- fixtures ---- */

static char *read_corpus(const char *name, size_t *size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", corpus_dir, name);
    char *text = test_read_file(path, size);
    if (!text) fail_msg("cannot read %s", path);
    return text;
}

/* Fixture names (*.ptx in the corpus), sorted, joined by '\n'. */
static int corpus_names(char *out, size_t size) {
    DIR *d = opendir(corpus_dir);
    assert_non_null(d);
    out[0] = 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".ptx") == 0 && strlen(out) + len + 2 < size) {
            strcat(out, e->d_name);
            strcat(out, "\n");
            n++;
        }
    }
    closedir(d);
    return n;
}

/* ptxas accepts the text for the architecture its .target names (the
 * fixtures for newer GPUs say so), sm_90 when it names none older. */
static void check_assembles(const char *text, size_t size, const char *what) {
    if (!ptxas || !*ptxas) return;
    char arch[16] = "sm_90";
    const char *target = strstr(text, ".target sm_");
    if (target && atoi(target + 11) > 90) snprintf(arch, sizeof arch, "sm_%d", atoi(target + 11));
    char path[] = "/tmp/ptxkit-rewrite-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, size), (ssize_t)size);
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s -o /dev/null '%s'", ptxas, arch, path);
    int rc = system(cmd);
    if (rc != 0) {
        char keep[1100];
        snprintf(keep, sizeof keep, "%s.ptx", path);
        rename(path, keep);
        fail_msg("ptxas -arch=%s rejects %s (kept as %s)", arch, what, keep);
    }
    unlink(path);
}

/* The counts a fixture announces on its "// expect:" line. */
static ptx_rewrite_stats fixture_expectation(const char *text, const char *name) {
    ptx_rewrite_stats want = {0};
    const char *line = strstr(text, "// expect:");
    if (!line ||
        sscanf(line, "// expect: plain=%d kept_operator=%d kept_ordered=%d unrecognized=%d", &want.plain,
               &want.kept_operator, &want.kept_ordered, &want.unrecognized) != 4)
        fail_msg("%s has no \"// expect: plain=N kept_operator=N kept_ordered=N unrecognized=N\" line", name);
    return want;
}

/* The line `in` ("\tCODE\t//> WANT") as op must print it: leading blanks,
 * WANT with OP replaced (nc: without ".weak"), then the comment as it was. */
static void expected_line(const char *in, size_t len, ptxkit_load_op op, char *out, size_t size) {
    const char *marker = NULL;
    for (size_t k = 0; k + 5 <= len; k++)
        if (memcmp(in + k, "\t//> ", 5) == 0) {
            marker = in + k;
            break;
        }
    if (!marker || op == PTXKIT_LOAD_DEFAULT) {
        snprintf(out, size, "%.*s", (int)len, in);
        return;
    }
    size_t lead = 0;
    while (lead < len && (in[lead] == '\t' || in[lead] == ' ')) lead++;
    char code[1024];
    snprintf(code, sizeof code, "%.*s", (int)(in + len - (marker + 5)), marker + 5);
    char *place = strstr(code, ".OP");
    if (!place) fail_msg("marker without .OP: %.*s", (int)len, in);
    char with_op[1100];
    snprintf(with_op, sizeof with_op, "%.*s.%s%s", (int)(place - code), code, op_names[op], place + 3);
    char *weak = op == PTXKIT_LOAD_NC ? strstr(with_op, ".weak") : NULL;
    if (weak) memmove(weak, weak + 5, strlen(weak + 5) + 1);
    snprintf(out, size, "%.*s%s%.*s", (int)lead, in, with_op, (int)(in + len - marker), marker);
}

static void fixture_lines_and_counts(void **state) {
    (void)state;
    static char names[4096];
    int fixtures = corpus_names(names, sizeof names);
    assert_true(fixtures >= 4);
    char *save = NULL;
    for (char *name = strtok_r(names, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
        size_t n;
        char *text = read_corpus(name, &n);
        ptx_rewrite_stats want = fixture_expectation(text, name);
        for (int op = 0; op < PTXKIT_LOAD_OP_COUNT; op++) {
            size_t size;
            ptx_rewrite_stats s;
            char *out = rewrite(text, n, (ptxkit_load_op)op, &size, &s);
            if (s.plain != want.plain || s.kept_operator != want.kept_operator ||
                s.kept_ordered != want.kept_ordered || s.unrecognized != want.unrecognized ||
                s.rewritten != (op ? want.plain : 0))
                fail_msg("%s, op %s: plain=%d rewritten=%d kept_operator=%d kept_ordered=%d unrecognized=%d", name,
                         op_names[op], s.plain, s.rewritten, s.kept_operator, s.kept_ordered, s.unrecognized);
            /* line by line: the rewrite never adds or removes a line */
            const char *a = text, *b = out;
            int line = 1, marked = 0;
            while (*a || *b) {
                const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
                size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
                char want_line[2048];
                expected_line(a, la, (ptxkit_load_op)op, want_line, sizeof want_line);
                marked += memmem(a, la, "\t//> ", 5) != NULL;
                if (strlen(want_line) != lb || memcmp(want_line, b, lb) != 0)
                    fail_msg("%s:%d, op %s:\n  got:  %.*s\n  want: %s", name, line, op_names[op], (int)lb, b,
                             want_line);
                if (!ea || !eb) {
                    assert_true(!ea && !eb);
                    break;
                }
                a = ea + 1;
                b = eb + 1;
                line++;
            }
            assert_int_equal(marked, want.plain);
            if (op) check_assembles(out, size, name);
            free(out);
        }
        free(text);
    }
}

/* Every prefix (a text cut anywhere: mid-word, mid-comment, mid-string)
 * and a spread of suffixes of every fixture, from exact-size buffers. */
static void truncated_fixtures(void **state) {
    (void)state;
    static char names[4096];
    corpus_names(names, sizeof names);
    char *save = NULL;
    long calls = 0;
    for (char *name = strtok_r(names, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
        size_t n;
        char *text = read_corpus(name, &n);
        for (size_t len = 0; len <= n; len++) {
            free(rewrite(text, len, (ptxkit_load_op)(len % PTXKIT_LOAD_OP_COUNT), NULL, NULL));
            calls++;
        }
        for (size_t start = 0; start < n; start += 13) {
            free(rewrite(text + start, n - start, (ptxkit_load_op)(start % PTXKIT_LOAD_OP_COUNT), NULL, NULL));
            calls++;
        }
        free(text);
    }
    assert_true(calls > 1000);
}

/* Random texts made of the pieces the lexer cares about, and random bytes. */
static void random_texts(void **state) {
    (void)state;
    static const char *const pieces[] = {
        "ld",      ".global", ".weak", ".f32",  ".v4",   ".u8",   ".nc",      ".cg",  ".L2::cache_hint", ".L2::128B",
        ".L1::evict_last",    ".volatile", ".relaxed", ".gpu",  ".shared", ".b128", ".", "::", ":", ";",  "{", "}",
        "@",       "!",       "%p1",   "%f1",   ", ",    "[%rd1]", " ",        "\t",   "\n",             "\r\n",
        "//",      "/*",      "*/",    "\"",    "\\",    "ld.global.f32 %f1, [%rd1];", "x",   "$L1",  "ldu",
        ".loc 1 2 3", "\0",  "ld.weak.global.v2.u32 {%r1, %r2}, [%rd1];", "ld .global .u8", "ld.global.cg.f32"};
    const size_t count = sizeof pieces / sizeof pieces[0];
    uint64_t rng = test_seed();
    char buf[4096];
    for (int round = 0; round < 4000; round++) {
        size_t n = 0;
        int length = (int)(test_rand(&rng) % 120);
        for (int k = 0; k < length; k++) {
            const char *p = pieces[test_rand(&rng) % count];
            size_t m = *p ? strlen(p) : 1; /* "\0" is one NUL byte */
            if (n + m > sizeof buf) break;
            memcpy(buf + n, p, m);
            n += m;
        }
        free(rewrite(buf, n, (ptxkit_load_op)(test_rand(&rng) % PTXKIT_LOAD_OP_COUNT), NULL, NULL));
    }
    for (int round = 0; round < 2000; round++) {
        size_t n = test_rand(&rng) % 300;
        test_fill_random(buf, n, &rng);
        free(rewrite(buf, n, (ptxkit_load_op)(test_rand(&rng) % PTXKIT_LOAD_OP_COUNT), NULL, NULL));
    }
}

/* ---- the committed PTX of families/ ---- */

/* The committed text of each family has plain global loads only; every
 * operator reaches each of them, a second rewrite keeps the first one's
 * operator, and the text between the loads is untouched. */
static void committed_families(void **state) {
    (void)state;
    int checked = 0;
    for (int f = 0; family_at(f); f++) {
        if (!family_has_ptx(family_at(f))) continue;
        checked++;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/%s.ptx", ptx_dir, family_at(f)->name, family_at(f)->name);
        size_t n;
        char *plain = test_read_file(path, &n);
        if (!plain) fail_msg("cannot read %s", path);
        for (int op = 1; op < PTXKIT_LOAD_OP_COUNT; op++) {
            size_t size, again_size;
            ptx_rewrite_stats s, s2;
            char *out = rewrite(plain, n, (ptxkit_load_op)op, &size, &s);
            assert_true(s.plain > 0);
            assert_int_equal(s.rewritten, s.plain);
            assert_int_equal(s.kept_operator, 0);
            assert_int_equal(s.unrecognized, 0);
            /* each load grew by ".op" (3 bytes) and nothing else changed */
            assert_int_equal(size, n + 3 * (size_t)s.plain);
            char *again = rewrite(out, size, (ptxkit_load_op)(op % 6 + 1), &again_size, &s2);
            assert_int_equal(s2.kept_operator, s.plain);
            assert_int_equal(s2.plain, 0);
            assert_int_equal(again_size, size);
            assert_memory_equal(again, out, size);
            free(again);
            free(out);
        }
        free(plain);
    }
    assert_true(checked >= 4); /* copy, reduce, transpose, scan at least */
}

/* ---- PTX from NVRTC ---- */

static int count_substring(const char *text, const char *needle) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}

/* Every family compiled with plain C loads (LOAD_OP=0): each operator is
 * given to every global load, and ptxas takes the result. */
static void nvrtc_families(void **state) {
    (void)state;
    if (!nvrtc_get(NULL, 0)) skip();
    size_t count;
    const embedded_file *files = embedded_all(&count);
    int families = 0, total = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(files[i].name);
        if (len < 4 || strcmp(files[i].name + len - 3, ".cu") != 0) continue;
        char family[96];
        snprintf(family, sizeof family, "%.*s", (int)(len - 3), files[i].name);
        const char *defines[] = {"LOAD_OP=0"};
        compile_output ptx;
        assert_ok(NULL, compile_family(NULL, family, defines, 1, 90, true, NULL, 0, &ptx));
        assert_false(ptx.is_cubin);
        int ld_global = count_substring(ptx.image, "ld.global");
        for (int op = 0; op < PTXKIT_LOAD_OP_COUNT; op++) {
            size_t size;
            ptx_rewrite_stats s;
            char *out = rewrite(ptx.image, ptx.size, (ptxkit_load_op)op, &size, &s);
            assert_int_equal(s.unrecognized, 0);
            /* nothing in NVRTC's text says ld.global but its weak loads;
             * reduce's cross-block hand-over has ld.volatile.global */
            assert_int_equal(s.plain + s.kept_operator, ld_global);
            assert_true(s.kept_ordered >= count_substring(ptx.image, "ld.volatile.global"));
            if (op) {
                char want[32];
                snprintf(want, sizeof want, "ld.global.%s", op_names[op]);
                assert_int_equal(count_substring(out, want) - count_substring(ptx.image, want), s.rewritten);
                check_assembles(out, size, family);
            }
            total += s.rewritten;
            free(out);
        }
        compile_output_free(&ptx);
        families++;
    }
    assert_true(families >= 3);
    assert_true(total > 0);
}

/* Loads that carry an L2 cache hint (LOAD_OP 7 of <ptxkit/load_hint.cuh>,
 * here in the lab's aos.cu, a user program) take an operator too; loads
 * compiled with one (LOAD_OP 2: cg) keep theirs. */
static void nvrtc_hinted_and_explicit(void **state) {
    (void)state;
    if (!nvrtc_get(NULL, 0)) skip();
    const char *hinted[] = {"LOAD_OP=7"};
    ptxkit_program *aos;
    ptxkit_compiled hinted_ptx;
    assert_ok(NULL, lab_program_create("aos.cu", &aos));
    assert_ok(NULL, ptxkit_program_compile(aos, "aos_naive", hinted, 1, 90, 1, &hinted_ptx));
    ptxkit_program_destroy(aos);
    int hints = count_substring(hinted_ptx.image, "ld.global.L2::cache_hint");
    assert_true(hints > 0);
    for (int op = 1; op < PTXKIT_LOAD_OP_COUNT; op++) {
        size_t size;
        ptx_rewrite_stats s;
        char *out = rewrite(hinted_ptx.image, hinted_ptx.size, (ptxkit_load_op)op, &size, &s);
        char want[48];
        snprintf(want, sizeof want, "ld.global.%s.L2::cache_hint", op_names[op]);
        assert_int_equal(count_substring(out, want), hints);
        check_assembles(out, size, "aos LOAD_OP=7");
        free(out);
    }
    ptxkit_program_compiled_free(&hinted_ptx);

    compile_output ptx;
    const char *explicit_cg[] = {"LOAD_OP=2"};
    assert_ok(NULL, compile_family(NULL, "copy", explicit_cg, 1, 90, true, NULL, 0, &ptx));
    size_t size;
    ptx_rewrite_stats s;
    char *out = rewrite(ptx.image, ptx.size, PTXKIT_LOAD_CS, &size, &s);
    assert_int_equal(s.rewritten, 0);
    assert_int_equal(s.kept_operator, count_substring(ptx.image, "ld.global.cg"));
    assert_int_equal(size, ptx.size);
    assert_memory_equal(out, ptx.image, size);
    free(out);
    compile_output_free(&ptx);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: test_ptx_rewrite CORPUS_DIR FAMILIES_DIR [PTXAS]\n");
        return 2;
    }
    corpus_dir = argv[1];
    ptx_dir = argv[2];
    ptxas = argc > 3 ? argv[3] : NULL;
    if (!ptxas || !*ptxas) printf("ptxas not given: the rewritten texts are not assembled\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(snippets_exact),
        cmocka_unit_test(why_names_the_first_unrecognized_load),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(fixture_lines_and_counts),
        cmocka_unit_test(truncated_fixtures),
        cmocka_unit_test(random_texts),
        cmocka_unit_test(committed_families),
        cmocka_unit_test(nvrtc_families),
        cmocka_unit_test(nvrtc_hinted_and_explicit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
