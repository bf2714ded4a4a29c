/* The table of kernel families (families/family.h) against what the build
 * embedded: each family's source is there, its precompiled PTX exactly when
 * families/meson.build says so, every <name>_defaults.h belongs to a
 * family, every embedded kernel text is one family's (its own or one of its
 * sources), the defines `ptxkit compile` checks are ones the kernel reads,
 * and a tuned family's start lies in its own space. No GPU, no NVRTC. */
#include <stdio.h>
#include <string.h>

#include "family.h"
#include "runtime/embedded.h"
#include "test_util.h"
#include "tune/params.h"

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const embedded_file *embedded_named(const char *family, const char *suffix) {
    char name[128];
    snprintf(name, sizeof name, "%s%s", family, suffix);
    return embedded_find(name);
}

static void table_lookup(void **state) {
    (void)state;
    assert_true(family_count() >= 4);
    assert_null(family_at(-1));
    assert_null(family_at(family_count()));
    assert_null(family_find("nope"));
    assert_null(family_find(NULL));
    for (int i = 0; i < family_count(); i++) {
        const family_desc *f = family_at(i);
        assert_non_null(f);
        assert_ptr_equal(family_find(f->name), f);
        assert_true(f->description && *f->description);
        assert_true(f->entries && *f->entries);
        for (int j = 0; j < i; j++) assert_string_not_equal(family_at(j)->name, f->name);
    }
}

static void sources_and_ptx_embedded(void **state) {
    (void)state;
    for (int i = 0; i < family_count(); i++) {
        const family_desc *f = family_at(i);
        if (!embedded_named(f->name, ".cu")) fail_msg("family %s: no %s.cu embedded", f->name, f->name);
        bool ptx = embedded_named(f->name, ".ptx") != NULL;
        if (ptx != family_has_ptx(f))
            fail_msg("family %s: %s.ptx %s embedded but the families list says %s", f->name, f->name,
                     ptx ? "is" : "is not", family_has_ptx(f) ? "'ptx'" : "no 'ptx'");
    }
    /* and every embedded PTX file and defaults header is a family's */
    size_t count;
    const embedded_file *files = embedded_all(&count);
    for (size_t i = 0; i < count; i++) {
        char family[128];
        const char *name = files[i].name;
        size_t len = strlen(name);
        if (ends_with(name, ".ptx")) snprintf(family, sizeof family, "%.*s", (int)(len - 4), name);
        else if (ends_with(name, "_defaults.h")) snprintf(family, sizeof family, "%.*s", (int)(len - 11), name);
        else continue;
        if (!family_find(family)) fail_msg("%s is embedded but %s is no family", name, family);
        assert_true(embedded_is_header(name) == ends_with(name, ".h"));
    }
}

/* A define the descriptor declares is one its source or a header reads. */
/* The family (NULL: none) whose host code compiles the embedded kernel
 * text <source>.cu: its own name, or one of its sources. */
static const family_desc *family_of_source(const char *source) {
    const family_desc *owner = NULL;
    for (int i = 0; i < family_count(); i++) {
        const family_desc *f = family_at(i);
        bool mine = strcmp(f->name, source) == 0;
        for (int k = 0; f->sources && f->sources[k] && !mine; k++) mine = strcmp(f->sources[k], source) == 0;
        if (mine) {
            if (owner) fail_msg("%s.cu belongs to families %s and %s", source, owner->name, f->name);
            owner = f;
        }
    }
    return owner;
}

/* gemm_dmma.cu is a second kernel text of family gemm, not a family; no
 * kernel text is left without a family, none has two. */
static void sources_belong_to_one_family(void **state) {
    (void)state;
    assert_null(family_find("gemm_dmma"));
    assert_ptr_equal(family_of_source("gemm_dmma"), family_find("gemm"));
    for (int i = 0; i < family_count(); i++) {
        const family_desc *f = family_at(i);
        for (int k = 0; f->sources && f->sources[k]; k++) {
            if (!embedded_named(f->sources[k], ".cu"))
                fail_msg("family %s: its source %s.cu is not embedded", f->name, f->sources[k]);
            if (family_find(f->sources[k])) fail_msg("family %s: its source %s is a family too", f->name, f->sources[k]);
        }
    }
    size_t count;
    const embedded_file *files = embedded_all(&count);
    for (size_t i = 0; i < count; i++) {
        const char *name = files[i].name;
        size_t len = strlen(name);
        if (!ends_with(name, ".cu") || strchr(name, '/')) continue;
        char source[128];
        snprintf(source, sizeof source, "%.*s", (int)(len - 3), name);
        if (!family_of_source(source)) fail_msg("%s is embedded but no family compiles it", name);
    }
}

static void defines_are_read(void **state) {
    (void)state;
    size_t count;
    const embedded_file *files = embedded_all(&count);
    for (int i = 0; i < family_count(); i++) {
        const family_desc *f = family_at(i);
        for (const family_define *d = f->defines; d && d->name; d++) {
            bool found = false;
            const embedded_file *src = embedded_named(f->name, ".cu");
            found = src && strstr(src->text, d->name);
            for (int k = 0; f->sources && f->sources[k] && !found; k++)
                found = (src = embedded_named(f->sources[k], ".cu")) && strstr(src->text, d->name);
            for (size_t k = 0; k < count && !found; k++)
                found = embedded_is_header(files[k].name) && strstr(files[k].text, d->name);
            if (!found) fail_msg("family %s declares -D %s, which nothing it compiles reads", f->name, d->name);
            assert_true((unsigned)d->param < TUNE_PARAM_COUNT);
        }
    }
}

static bool listed(const int *list, int value, int terminator) {
    for (int i = 0; i < TUNE_MAX_VALUES && list[i] != terminator; i++)
        if (list[i] == value) return true;
    return false;
}

static void tuned_families_start_in_space(void **state) {
    (void)state;
    int tuned = 0;
    for (int i = 0; i < family_count(); i++) {
        const family_desc *f = family_at(i);
        if (!f->parse_variant) {
            assert_null(tune_family_find(f->name));
            continue;
        }
        tuned++;
        assert_ptr_equal(tune_family_find(f->name), f);
        int b = f->start.block_size;
        assert_true(b >= 32 && b <= 1024 && (b & (b - 1)) == 0);
        if (!listed(f->items, f->start.items_per_thread, 0))
            fail_msg("%s starts at %d items per thread, not in its list", f->name, f->start.items_per_thread);
        if (!listed(f->vectors, f->start.vector_bytes, 0))
            fail_msg("%s starts at %d-byte vectors, not in its list", f->name, f->start.vector_bytes);
        tune_variant v;
        char why[256];
        assert_int_equal(tune_variant_parse(f, NULL, &v, why, sizeof why), PTXKIT_SUCCESS);
        assert_true(tune_config_legal(&v, &f->start, NULL, why, sizeof why));
    }
    assert_int_equal(tuned, tune_family_count());
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_lookup),
        cmocka_unit_test(sources_and_ptx_embedded),
        cmocka_unit_test(sources_belong_to_one_family),
        cmocka_unit_test(defines_are_read),
        cmocka_unit_test(tuned_families_start_in_space),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
