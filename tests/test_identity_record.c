/* The nvrtc-identity record: what the writer in cache_key.c writes is read
 * back; anything else (another signature, a cut or extended file, numbers
 * out of range, a FIFO, an oversized file) is "no record". */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "family_key.h"
#include "runtime/cache_key.h"
#include "runtime/identity_record.h"
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
        char signature[NVRTC_SIGNATURE_SIZE];
        nvrtc_environment_signature(signature);
        assert_true(identity_record_read(path, signature, f.path, sizeof f.path, &f.size, &f.mtime, &f.major, &f.minor));
        struct stat st;
        assert_int_equal(stat(f.path, &st), 0);
        assert_int_equal(st.st_size, f.size);
        assert_true(f.major >= 11);
        unlink(path);
    }
    rmdir(dir);
}

/* In a new process (the identity is read once per process, and a forked
 * child would inherit this one's): 1 when the cache keys see the made-up
 * NVRTC 99.77 with LD_LIBRARY_PATH = library_path and the cache in dir. */
static int version_seen(const char *dir, const char *library_path) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("PTXKIT_CACHE_DIR", dir, 1);
        setenv("LD_LIBRARY_PATH", library_path, 1);
        unsetenv("PTXKIT_NVRTC_PATH");
        execl("/proc/self/exe", "identity-version", (char *)NULL);
        _exit(2);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Two environments equal in their first 2047 bytes once shared a record:
 * the signature was "PTXKIT_NVRTC_PATH|LD_LIBRARY_PATH" cut to 2048 bytes.
 * A record for one (naming a made-up NVRTC 99.77) must not be read in the
 * other; the record of the environment itself is. */
static void long_environment(void **state) {
    (void)state;
    char dir[] = "/tmp/ptxkit-identity-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char record[128];
    snprintf(record, sizeof record, "%s/nvrtc-identity", dir);
    static char a[4096], b[4096];
    memset(a, 'a', sizeof a - 1);
    memcpy(a, "/nonexistent/", 13);
    memcpy(b, a, sizeof b);
    b[3000] = 'b';
    struct stat st;
    assert_int_equal(stat("/bin/sh", &st), 0);
    char real[PATH_MAX];
    assert_non_null(realpath("/bin/sh", real));
    /* the record as the truncating writer wrote it for a */
    FILE *f = fopen(record, "w");
    fprintf(f, "|%.2046s\n%s\n%lld %lld 99 77\n", a, real, (long long)st.st_size, (long long)st.st_mtime);
    fclose(f);
    assert_int_equal(version_seen(dir, b), 0);
    /* the library's own signature for a, in a child with a's environment */
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LD_LIBRARY_PATH", a, 1);
        unsetenv("PTXKIT_NVRTC_PATH");
        char signature[NVRTC_SIGNATURE_SIZE];
        nvrtc_environment_signature(signature);
        FILE *out = fopen(record, "w");
        fprintf(out, "%s\n%s\n%lld %lld 99 77\n", signature, real, (long long)st.st_size, (long long)st.st_mtime);
        _exit(fclose(out) == 0 ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(version_seen(dir, a), 1);
    assert_int_equal(version_seen(dir, b), 0);
    unlink(record);
    rmdir(dir);
}

int main(int argc, char **argv) {
    if (argc == 1 && strcmp(argv[0], "identity-version") == 0) { /* version_seen's process */
        int major = 0, minor = 0;
        nvrtc_identity_version(&major, &minor);
        return major == 99 && minor == 77 ? 1 : 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writer_format_reads_back),
        cmocka_unit_test(anything_else_is_no_record),
        cmocka_unit_test(files),
        cmocka_unit_test(long_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
