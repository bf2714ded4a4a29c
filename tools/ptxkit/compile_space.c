/* ptxkit compile FAMILY -D NAME=VALUE: each define checked before NVRTC runs.
 * A name the family's source (and the headers it may include) never
 * mentions does nothing; a value outside the parameter space the family's
 * descriptor declares (src/ops/<family>.c) is one ptxkit never builds.
 * Both are warnings, so an experiment can still try them; --strict makes
 * them usage errors. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "compile_space.h"
#include "runtime/runtime.h"
#include "ops/family.h"

/* Whether NAME appears as a whole word in text. */
static bool mentions(const char *text, size_t size, const char *name) {
    size_t len = strlen(name);
    for (const char *p = text, *end = text + size; p + len <= end; p++) {
        p = memchr(p, name[0], (size_t)(end - p));
        if (!p || p + len > end) return false;
        bool before = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool after = p + len == end || !(isalnum((unsigned char)p[len]) || p[len] == '_');
        if (before && after && memcmp(p, name, len) == 0) return true;
    }
    return false;
}

/* The family's .cu and every embedded header (a family may include any). */
static bool family_reads(const char *family, const char *name) {
    size_t count;
    const embedded_file *files = embedded_all(&count);
    char source[128];
    snprintf(source, sizeof source, "%s.cu", family);
    for (size_t i = 0; i < count; i++) {
        if ((embedded_is_header(files[i].name) || strcmp(files[i].name, source) == 0) &&
            mentions(files[i].text, files[i].size, name))
            return true;
    }
    return false;
}

/* The values of param the family declares, as text ("32, 64, ..."), and
 * whether value is one of them. */
static bool in_space(const family_desc *f, tune_param param, const char *value, char *list, size_t list_size) {
    int values[TUNE_MAX_VALUES + 1], count = 0;
    if (param == TUNE_BLOCK) {
        for (int b = 32; b <= 1024; b *= 2) values[count++] = b;
    } else {
        const int *from = param == TUNE_ITEMS ? f->items : param == TUNE_VECTOR ? f->vectors : f->loads;
        int end = param == TUNE_LOAD ? -1 : 0;
        for (int i = 0; i < TUNE_MAX_VALUES && from[i] != end; i++) values[count++] = from[i];
    }
    bool found = false;
    size_t used = 0;
    list[0] = 0;
    for (int i = 0; i < count; i++) {
        char text[16];
        if (param == TUNE_LOAD) snprintf(text, sizeof text, "%s", ptxkit_load_op_define((ptxkit_load_op)values[i]));
        else snprintf(text, sizeof text, "%d", values[i]);
        found = found || strcmp(text, value) == 0;
        if (used < list_size) used += (size_t)snprintf(list + used, list_size - used, "%s%s", i ? ", " : "", text);
    }
    return found;
}

bool compile_check_defines(const char *family, const char *const *defines, int count, bool strict) {
    const family_desc *f = family_find(family);
    bool ok = true;
    for (int i = 0; i < count; i++) {
        char name[80], problem[512] = "";
        const char *eq = strchr(defines[i], '=');
        size_t len = eq ? (size_t)(eq - defines[i]) : strlen(defines[i]);
        snprintf(name, sizeof name, "%.*s", (int)len, defines[i]);
        if (!family_reads(family, name)) {
            snprintf(problem, sizeof problem, "-D %s: family %s never reads %s (not in %s.cu or the headers it may include)",
                     defines[i], family, name, family);
        } else if (f && f->defines && eq) {
            for (const family_define *d = f->defines; d->name; d++) {
                char list[256];
                if (strcmp(d->name, name) != 0 || in_space(f, d->param, eq + 1, list, sizeof list)) continue;
                snprintf(problem, sizeof problem, "-D %s: outside the parameter space %s declares (%s: %s)", defines[i],
                         family, name, list);
            }
        }
        if (!problem[0]) continue;
        fprintf(stderr, "ptxkit compile: %s%s\n", strict ? "" : "warning: ", problem);
        ok = false;
    }
    if (!ok && !strict) fprintf(stderr, "ptxkit compile: warning: compiling as asked (--strict makes these errors)\n");
    return ok || !strict;
}
