/* ptxkit compile FAMILY -D NAME=VALUE: each define checked before NVRTC runs.
 * A name the family's source (and the headers it may include) never
 * mentions does nothing; a value outside the parameter space the family's
 * descriptor declares (families/<family>/<family>.c) is one ptxkit never builds.
 * Both are warnings, so an experiment can still try them; --strict makes
 * them usage errors. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "compile_space.h"
#include "ptxkit.h"

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

/* A built-in device header: every program may include one. */
static bool is_header(const char *name) {
    size_t len = strlen(name);
    return (len > 4 && strcmp(name + len - 4, ".cuh") == 0) || (len > 2 && strcmp(name + len - 2, ".h") == 0);
}

/* The family's .cu and every built-in header (a family may include any). */
static bool family_reads(const char *family, const char *name) {
    char source[128];
    snprintf(source, sizeof source, "%s.cu", family);
    const char *file;
    for (int i = 0; (file = ptxkit_program_builtin_source_name_get(i)); i++) {
        const char *text;
        size_t size;
        if ((is_header(file) || strcmp(file, source) == 0) &&
            ptxkit_program_builtin_source_get(file, &text, &size) == PTXKIT_SUCCESS && mentions(text, size, name))
            return true;
    }
    return false;
}

/* Whether value is one of list's comma-separated values ("32, 64, ..."). */
static bool listed(const char *list, const char *value) {
    size_t len = strlen(value);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && memcmp(p, value, len) == 0) return true;
        if (!end) break;
        p = end + 1;
        while (*p == ' ') p++;
    }
    return false;
}

bool compile_check_defines(const char *family, const char *const *defines, int count, bool strict) {
    bool ok = true;
    for (int i = 0; i < count; i++) {
        char name[80], problem[512] = "";
        const char *eq = strchr(defines[i], '=');
        size_t len = eq ? (size_t)(eq - defines[i]) : strlen(defines[i]);
        snprintf(name, sizeof name, "%.*s", (int)len, defines[i]);
        if (!family_reads(family, name)) {
            snprintf(problem, sizeof problem, "-D %s: family %s never reads %s (not in %s.cu or the headers it may include)",
                     defines[i], family, name, family);
        } else if (eq) {
            char list[256];
            if (ptxkit_program_family_define_values_get(family, name, list, sizeof list) == PTXKIT_SUCCESS && !listed(list, eq + 1))
                snprintf(problem, sizeof problem, "-D %s: outside the parameter space %s declares (%s: %s)", defines[i],
                         family, name, list);
        }
        if (!problem[0]) continue;
        fprintf(stderr, "ptxkit compile: %s%s\n", strict ? "" : "warning: ", problem);
        ok = false;
    }
    if (!ok && !strict) fprintf(stderr, "ptxkit compile: warning: compiling as asked (--strict makes these errors)\n");
    return ok || !strict;
}
