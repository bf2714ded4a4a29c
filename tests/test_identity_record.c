/* The nvrtc-identity record: what the writer in cache_key.c writes is read
 * back; anything else (another signature, a cut or extended file, numbers
 * out of range, a FIFO, an oversized file) is "no record". */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "family_key.h"
#include "test_util.h"

typedef struct fields {
    char path[PATH_MAX];
    long long size, mtime;
    int major, minor;
} fields;

static bool parse(const char *text, const char *signature, fields *f) {
    memset(f, 0, sizeof *f);
    char *copy = malloc(strlen(text) + 1); /* exactly sized: the sanitizers see any overrun */
    memcpy(copy, text, strlen(text));
    bool ok = identity_record_parse(copy, strlen(text), signature, f->path, sizeof f->path, &f->size, &f->mtime,
                                    &f->major, &f->minor);
    free(copy);
    return ok;
}

static void writer_format_reads_back(void **state) {
    (void)state;
    char text[PATH_MAX + 2200];
    /* cache_key.c's format */
    snprintf(text, sizeof text, "%s\n%s\n%lld %lld %d %d\n", "/opt/nvrtc|/usr/lib", "/usr/local/cuda/lib64/libnvrtc.so.13.0.48",
             123456789LL, -5LL, 13, 0);
    fields f;
    assert_true(parse(text, "/opt/nvrtc|/usr/lib", &f));
    assert_string_equal(f.path, "/usr/local/cuda/lib64/libnvrtc.so.13.0.48");
    assert_int_equal(f.size, 123456789);
    assert_int_equal(f.mtime, -5);
    assert_int_equal(f.major, 13);
    assert_int_equal(f.minor, 0);
    assert_true(parse("|\n/x\n0 0 0 0\n", "|", &f)); /* the empty environment */
}

static void anything_else_is_no_record(void **state) {
    (void)state;
    static const char *const bad[] = {
        "", "|", "|\n", "|\n/x\n", "|\n/x\n1 2 3 4", "|\n/x\n1 2 3 4\nmore\n", "other|\n/x\n1 2 3 4\n",
        "|\n\n1 2 3 4\n", "|\n/x\n1 2 3\n", "|\n/x\n1 2 3 4 5\n", "|\n/x\n-1 2 3 4\n", "|\n/x\n1 2 -3 4\n",
        "|\n/x\n1 2 3 2147483648\n", "|\n/x\n99999999999999999999 2 3 4\n", "|\n/x\n1  2 3 4\n", "|\n/x\n 1 2 3 4\n",
        "|\n/x\n1 2 3 4 \n", "|\n/x\n1 - 3 4\n", "|\n/x\n1 2 3 0x4\n", "|\n/x\n+1 2 3 4\n",
        "|\n/x\n01 2 3 4\n", "|\n/x\n1 -0 3 4\n", "|\n/x\n1 2 3 00\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fields f;
        if (parse(bad[i], "|", &f)) fail_msg("record #%zu accepted", i);
    }
    /* a path that does not fit the caller's buffer */
    char text[PATH_MAX + 64];
    memset(text, 'a', sizeof text);
    memcpy(text, "|\n", 2);
    snprintf(text + 2 + PATH_MAX, sizeof text - 2 - PATH_MAX, "\n1 2 3 4\n");
    fields f;
    assert_false(parse(text, "|", &f));
}

static void files(void **state) {
    (void)state;
    char dir[] = "/tmp/ptxkit-identity-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/nvrtc-identity", dir);
    fields f;
    assert_int_equal(mkfifo(path, 0644), 0);
    alarm(20); /* a FIFO must not block */
    assert_false(identity_record_read(path, "|", f.path, sizeof f.path, &f.size, &f.mtime, &f.major, &f.minor));
    alarm(0);
    unlink(path);
    FILE *out = fopen(path, "w");
    fputs("|\n/x\n1 2 3 4\n", out);
    fclose(out);
    assert_true(identity_record_read(path, "|", f.path, sizeof f.path, &f.size, &f.mtime, &f.major, &f.minor));
    assert_int_equal(truncate(path, 1 << 20), 0); /* larger than any record */
    assert_false(identity_record_read(path, "|", f.path, sizeof f.path, &f.size, &f.mtime, &f.major, &f.minor));
    unlink(path);
    /* the record cache_key_for writes (with NVRTC present) is read back */
    if (ptxkit_jit_available()) {
        setenv("PTXKIT_CACHE_DIR", dir, 1);
        const char *d[] = {"N=1"};
        cache_key_for("copy", d, 1, 90, 13000);
        unsetenv("PTXKIT_CACHE_DIR");
        const char *a = getenv("PTXKIT_NVRTC_PATH"), *b = getenv("LD_LIBRARY_PATH");
        char signature[2048];
        snprintf(signature, sizeof signature, "%s|%s", a ? a : "", b ? b : "");
        assert_true(identity_record_read(path, signature, f.path, sizeof f.path, &f.size, &f.mtime, &f.major, &f.minor));
        struct stat st;
        assert_int_equal(stat(f.path, &st), 0);
        assert_int_equal(st.st_size, f.size);
        assert_true(f.major >= 11);
        unlink(path);
    }
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writer_format_reads_back),
        cmocka_unit_test(anything_else_is_no_record),
        cmocka_unit_test(files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
