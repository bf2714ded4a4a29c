/* The table of kernel families, from the one list in cu_sources/meson.build
 * (family_list.h is generated from it): each family's descriptor is defined
 * in its own src/ops/<name>.c. */
#include <string.h>

#include "family_list.h"
#include "ops/family.h"

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
