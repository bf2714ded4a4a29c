/* The table of kernel families, from the one list in families/meson.build
 * (family_list.h is generated from it): each family's descriptor is defined
 * in its own families/<name>/<name>.c. */
#include <stdio.h>
#include <string.h>

#include "family.h"
#include "family_list.h"
#include "ptxkit.h"
#include "runtime/launch.h"
#include "runtime/status.h"

#define DECLARE(name, ptx) extern const family_desc name##_family;
PTXKIT_FAMILIES(DECLARE)
#undef DECLARE

static const struct {
    const family_desc *desc;
    bool has_ptx;
} table[] = {
#define ENTRY(name, ptx) {&name##_family, ptx},
    PTXKIT_FAMILIES(ENTRY)
#undef ENTRY
};

int family_count(void) { return (int)(sizeof table / sizeof table[0]); }

const family_desc *family_at(int index) { return index >= 0 && index < family_count() ? table[index].desc : NULL; }

const family_desc *family_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < family_count(); i++)
        if (strcmp(table[i].desc->name, name) == 0) return table[i].desc;
    return NULL;
}

bool family_has_ptx(const family_desc *f) {
    for (int i = 0; i < family_count(); i++)
        if (table[i].desc == f) return table[i].has_ptx;
    return false;
}

int family_one_block(const tune_config *c) {
    (void)c;
    return 1;
}

int family_no_shared(const tune_variant *v, const tune_config *c) {
    (void)v;
    (void)c;
    return 0;
}

/* ---- public: the families' compile-time constants ----------------------- */

const char *ptxkit_program_family_define_name_get(const char *family, int index) {
    const family_desc *f = family ? family_find(family) : NULL;
    if (!f || !f->defines || index < 0) return NULL;
    for (int i = 0; f->defines[i].name; i++)
        if (i == index) return f->defines[i].name;
    return NULL;
}

/* The values ptxkit builds a parameter with: block sizes are powers of two
 * up to the largest any GPU allows (the tuner trims them per device); the
 * others come from the family's lists. */
ptxkit_status ptxkit_program_family_define_values_get(const char *family, const char *define, char *buf, size_t size) {
    if (!family || !define || !buf || size == 0)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_program_family_define_values_get: family, define or buf is NULL, or size is 0");
    buf[0] = 0;
    const family_desc *f = family_find(family);
    const family_define *d = f && f->defines ? f->defines : NULL;
    while (d && d->name && strcmp(d->name, define) != 0) d++;
    if (!d || !d->name)
        return record_error(NULL, PTXKIT_ERROR_NOT_FOUND, "ptxkit_program_family_define_values_get: %s %s declares no %s",
                            f ? "family" : "no family", family, define);
    int values[TUNE_MAX_VALUES + 1], count = 0;
    if (d->param == TUNE_BLOCK) {
        for (int b = 32; b <= 1024; b *= 2) values[count++] = b;
    } else {
        const int *from = d->param == TUNE_ITEMS ? f->items : d->param == TUNE_VECTOR ? f->vectors
                        : d->param == TUNE_BPSM ? f->bpsm : f->loads;
        int end = d->param == TUNE_LOAD || d->param == TUNE_BPSM ? -1 : 0;
        for (int i = 0; i < TUNE_MAX_VALUES && from[i] != end; i++) values[count++] = from[i];
    }
    size_t used = 0;
    for (int i = 0; i < count && used < size; i++) {
        char text[16];
        if (d->param == TUNE_LOAD) snprintf(text, sizeof text, "%s", ptxkit_load_op_define((ptxkit_load_op)values[i]));
        else snprintf(text, sizeof text, "%d", values[i]);
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", text);
    }
    return PTXKIT_SUCCESS;
}

/* Element types shared by the kernel families. */
static const struct {
    const char *name;
    size_t size;
} dtypes[PTXKIT_DTYPE_COUNT] = {
    [PTXKIT_INT32] = {"int32", 4},     [PTXKIT_UINT32] = {"uint32", 4},   [PTXKIT_INT64] = {"int64", 8},
    [PTXKIT_UINT64] = {"uint64", 8},   [PTXKIT_FLOAT32] = {"float32", 4}, [PTXKIT_FLOAT64] = {"float64", 8},
};

const char *ptxkit_dtype_name(ptxkit_dtype type) { return (unsigned)type < PTXKIT_DTYPE_COUNT ? dtypes[type].name : NULL; }

size_t ptxkit_dtype_size(ptxkit_dtype type) { return (unsigned)type < PTXKIT_DTYPE_COUNT ? dtypes[type].size : 0; }
