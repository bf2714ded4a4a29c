/* Where NVRTC is looked for (driver/nvrtc.c): the order of the places, the
 * pip-wheel layouts found under a Python prefix, the override standing
 * alone, what ptxkit_jit_library_get reports, and the NVRTC identity
 * record's signature following the variables that choose the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/driver.h"
#include "runtime/cache_key.h"
#include "test_util.h"

static char root[256];

static int make_root(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/ptxkit-nvrtc-search-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int remove_root(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void clear_search_variables(void) {
    unsetenv("PTXKIT_NVRTC_PATH");
    unsetenv("CUDA_HOME");
    unsetenv("CUDA_PATH");
    unsetenv("VIRTUAL_ENV");
    unsetenv("CONDA_PREFIX");
}

/* The index of the first candidate equal to path found through how, -1 if none. */
static int find(const nvrtc_candidates *c, const char *path, const char *how) {
    for (int i = 0; i < c->count; i++)
        if (strcmp(c->path[i], path) == 0 && strcmp(c->how[i], how) == 0) return i;
    return -1;
}

static void make_file(const char *path) {
    char dir[600];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(dir, 0755);
            *p = '/';
        }
    assert_true(test_write_file(path, "x", 1));
}

static void order_of_places(void **state) {
    (void)state;
    clear_search_variables();
    char venv[400], wheel13[600], wheel12[600];
    snprintf(venv, sizeof venv, "%s/venv", root);
    snprintf(wheel13, sizeof wheel13, "%s/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13", venv);
    snprintf(wheel12, sizeof wheel12, "%s/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", venv);
    make_file(wheel13);
    make_file(wheel12);
    setenv("CUDA_HOME", "/opt/cuda-home", 1);
    setenv("CUDA_PATH", "/opt/cuda-path", 1);
    setenv("VIRTUAL_ENV", venv, 1);
    static nvrtc_candidates c;
    nvrtc_search_list(&c);
    int loader = find(&c, "libnvrtc.so.13", "the loader's search path");
    int loader12 = find(&c, "libnvrtc.so.12", "the loader's search path");
    int home = find(&c, "/opt/cuda-home/lib64/libnvrtc.so.13", "CUDA_HOME");
    int home12 = find(&c, "/opt/cuda-home/lib64/libnvrtc.so.12", "CUDA_HOME");
    int path = find(&c, "/opt/cuda-path/lib64/libnvrtc.so.13", "CUDA_PATH");
    int w13 = find(&c, wheel13, "VIRTUAL_ENV's pip packages");
    int w12 = find(&c, wheel12, "VIRTUAL_ENV's pip packages");
    int usr = find(&c, "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda");
    assert_int_equal(loader, 0);
    assert_true(loader < loader12 && loader12 < home && home < home12 && home12 < path);
    assert_true(path < w13 && w13 < w12 && w12 < usr);
    /* a relative CUDA_HOME names no place */
    setenv("CUDA_HOME", "relative/cuda", 1);
    nvrtc_search_list(&c);
    for (int i = 0; i < c.count; i++) assert_null(strstr(c.path[i], "relative/cuda"));
    /* the override stands alone */
    setenv("PTXKIT_NVRTC_PATH", "/somewhere/libnvrtc.so.13", 1);
    nvrtc_search_list(&c);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.path[0], "/somewhere/libnvrtc.so.13");
    assert_string_equal(c.how[0], "PTXKIT_NVRTC_PATH");
    clear_search_variables();
}

/* In a child (NVRTC is opened once a process): what is loaded, and how it
 * was found, or the places tried when nothing loads. */
static int library_child(int expect_missing) {
    char buf[4352];
    ptxkit_status st = ptxkit_jit_library_get(buf, sizeof buf);
    if (expect_missing) {
        if (st != PTXKIT_ERROR_NO_NVRTC || buf[0]) return 2;
        return strstr(ptxkit_last_error(), "/nowhere/libnvrtc.so.13") ? 0 : 3;
    }
    if (!ptxkit_jit_available()) return 0; /* no NVRTC on this machine: nothing to name */
    if (st != PTXKIT_SUCCESS) return 4;
    return strstr(buf, "libnvrtc.so.1") && strstr(buf, " (found through ") ? 0 : 5;
}

static void library_reported(void **state) {
    (void)state;
    for (int missing = 0; missing < 2; missing++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            if (missing) setenv("PTXKIT_NVRTC_PATH", "/nowhere/libnvrtc.so.13", 1);
            _exit(library_child(missing));
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    char small[4] = "xyz";
    assert_int_equal(ptxkit_jit_library_get(NULL, 8), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_jit_library_get(small, 0), PTXKIT_ERROR_INVALID_ARGUMENT);
}

/* A warm process reads the NVRTC identity from a record keyed by what
 * chooses the library: each search variable changes the key. */
static void signature_follows_search(void **state) {
    (void)state;
    clear_search_variables();
    char base[NVRTC_SIGNATURE_SIZE], other[NVRTC_SIGNATURE_SIZE];
    nvrtc_environment_signature(base);
    static const char *const variables[] = {"CUDA_HOME", "CUDA_PATH", "VIRTUAL_ENV", "CONDA_PREFIX",
                                            "PTXKIT_NVRTC_PATH"};
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++) {
        setenv(variables[i], "/opt/x", 1);
        nvrtc_environment_signature(other);
        assert_string_not_equal(base, other);
        unsetenv(variables[i]);
        nvrtc_environment_signature(other);
        assert_string_equal(base, other);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(order_of_places, make_root, remove_root),
        cmocka_unit_test(library_reported),
        cmocka_unit_test(signature_follows_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
