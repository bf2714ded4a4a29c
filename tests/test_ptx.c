/* The committed PTX (families/NAME/NAME.ptx) is fresh, its global loads carry no operator, each
 * operator the runtime gives them at load reaches every one of them, and
 * every family with every operator assembles for sm_75, sm_80 and sm_90.
 * usage: test_ptx FAMILIES_DIR GENPTX PTXAS */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/embedded.h"
#include "runtime/ptx_rewrite.h"
#include "test_util.h"

static const char *ptx_dir, *genptx, *ptxas;
static char fresh_dir[256];

static int qsort_strcmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Names of the .ptx files in the folders of a directory (FOLDER/NAME.ptx),
 * sorted, joined by '\n'. */
static void list_ptx(const char *dir, char *out, size_t size) {
    char *names[512];
    int n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 512) {
        if (e->d_name[0] == '.') continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *s = opendir(sub);
        if (!s) continue;
        struct dirent *f;
        while ((f = readdir(s)) != NULL && n < 512) {
            size_t len = strlen(f->d_name);
            if (len > 4 && strcmp(f->d_name + len - 4, ".ptx") == 0) {
                char name[600];
                snprintf(name, sizeof name, "%s/%s", e->d_name, f->d_name);
                names[n++] = strdup(name);
            }
        }
        closedir(s);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, qsort_strcmp);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        strncat(out, names[i], size - strlen(out) - 2);
        strcat(out, "\n");
        free(names[i]);
    }
}

static int make_scratch(void **state) {
    (void)state;
    snprintf(fresh_dir, sizeof fresh_dir, "/tmp/ptxkit-ptx-XXXXXX");
    return mkdtemp(fresh_dir) ? 0 : -1;
}

static int regenerate(void **state) {
    if (make_scratch(state) != 0) return -1;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' '%s' >/dev/null", genptx, fresh_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int cleanup(void **state) {
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fresh_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void committed_ptx_is_fresh(void **state) {
    (void)state;
    static char committed[16384], fresh[16384];
    list_ptx(ptx_dir, committed, sizeof committed);
    list_ptx(fresh_dir, fresh, sizeof fresh);
    if (strcmp(committed, fresh) != 0)
        fail_msg("families/ holds a different set of PTX files than its kernels generate; run `ninja -C build "
                 "regenerate-ptx`\n"
                 "committed:\n%s\ngenerated:\n%s", committed, fresh);
    for (char *name = strtok(fresh, "\n"); name; name = strtok(NULL, "\n")) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, "%s/%s", ptx_dir, name);
        snprintf(b, sizeof b, "%s/%s", fresh_dir, name);
        size_t na, nb;
        char *x = test_read_file(a, &na), *y = test_read_file(b, &nb);
        assert_non_null(x);
        assert_non_null(y);
        if (na != nb || memcmp(x, y, na) != 0)
            fail_msg("families/%s is stale: regenerate with `ninja -C build regenerate-ptx`", name);
        /* the library embeds the committed text */
        const embedded_file *f = embedded_find(strrchr(name, '/') + 1);
        assert_non_null(f);
        assert_int_equal(f->size, na);
        free(x);
        free(y);
    }
}

/* The committed text rewritten with op (DEFAULT: as committed), as the
 * runtime loads it; NULL-terminated, malloc'd. */
static char *loaded_text(const char *name, ptxkit_load_op op) {
    char path[1024], why[160];
    snprintf(path, sizeof path, "%s/%s", ptx_dir, name);
    size_t n, size;
    char *text = test_read_file(path, &n), *out = NULL;
    assert_non_null(text);
    ptx_rewrite_stats stats;
    assert_int_equal(ptx_rewrite_loads(text, n, op, &out, &size, &stats, why, sizeof why), PTXKIT_SUCCESS);
    /* every load of a family goes through the rewrite: none is left alone */
    assert_int_equal(stats.kept_operator, 0);
    assert_int_equal(stats.unrecognized, 0);
    assert_true(stats.plain > 0);
    free(text);
    return out;
}

/* The committed files carry no operator; rewritten with each one, every
 * global load of every family carries exactly that one. */
static void loads_carry_their_operator(void **state) {
    (void)state;
    static char files[16384];
    list_ptx(ptx_dir, files, sizeof files);
    static const char *const ops[] = {"ca", "cg", "cs", "lu", "cv", "nc"};
    int checked = 0;
    char *list_save = NULL;
    for (char *name = strtok_r(files, "\n", &list_save); name; name = strtok_r(NULL, "\n", &list_save))
        for (int op = PTXKIT_LOAD_DEFAULT; op < PTXKIT_LOAD_OP_COUNT; op++) {
            char *text = loaded_text(name, (ptxkit_load_op)op);
            int loads = 0;
            char *save = NULL;
            for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *ld = strstr(line, "ld.global");
                if (!ld) continue;
                loads++;
                for (int o = 0; o < 6; o++) {
                    char with[24];
                    snprintf(with, sizeof with, "ld.global.%s.", ops[o]);
                    bool has = strncmp(ld, with, strlen(with)) == 0;
                    if (has != (op == o + 1))
                        fail_msg("%s rewritten with %s: %s", name, op ? ops[op - 1] : "no operator", line);
                }
            }
            if (loads == 0) fail_msg("%s has no global loads", name);
            free(text);
            checked++;
        }
    assert_true(checked >= 7);
}

/* Each family with each operator, as the runtime loads it, assembles. */
static void assembles_for_each_arch(void **state) {
    (void)state;
    if (!ptxas || !*ptxas) skip();
    static char files[16384];
    list_ptx(ptx_dir, files, sizeof files);
    static const char *const archs[] = {"sm_75", "sm_80", "sm_90"};
    for (char *name = strtok(files, "\n"); name; name = strtok(NULL, "\n"))
        for (int op = PTXKIT_LOAD_DEFAULT; op < PTXKIT_LOAD_OP_COUNT; op++) {
            char *text = loaded_text(name, (ptxkit_load_op)op);
            char path[1024];
            snprintf(path, sizeof path, "%s/%s.%s", fresh_dir, ptxkit_load_op_name((ptxkit_load_op)op),
                     strrchr(name, '/') + 1);
            assert_true(test_write_file(path, text, strlen(text)));
            free(text);
            for (int a = 0; a < 3; a++) {
                char cmd[2048];
                snprintf(cmd, sizeof cmd, "'%s' -arch=%s -o /dev/null '%s'", ptxas, archs[a], path);
                if (system(cmd) != 0)
                    fail_msg("ptxas -arch=%s rejects families/%s with %s loads", archs[a], name,
                             ptxkit_load_op_name((ptxkit_load_op)op));
            }
        }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: test_ptx FAMILIES_DIR GENPTX [PTXAS]\n");
        return 2;
    }
    ptx_dir = argv[1];
    genptx = argv[2];
    ptxas = argc > 3 ? argv[3] : NULL;
    if (!ptxkit_jit_available()) {
        printf("skipped: NVRTC not available to regenerate PTX\n");
        return TEST_SKIP_EXIT;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(committed_ptx_is_fresh, regenerate, cleanup),
        cmocka_unit_test(loads_carry_their_operator),
        cmocka_unit_test_setup_teardown(assembles_for_each_arch, make_scratch, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
