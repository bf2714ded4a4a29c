/* The names a module was compiled for and their names in the image: the
 * table a module object carries, and the form the disk cache keeps beside
 * the image, so that a warm start finds every kernel and variable without
 * NVRTC. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/module.h"

/* The name tables sit at the start of text: it must be aligned for them. */
_Static_assert(offsetof(struct ptxkit_module, text) % _Alignof(const char *) == 0, "text holds pointers first");

ptxkit_module *module_object_new(ptxkit_context *ctx, CUmodule module, const cache_key *key,
                                 const char *const *names, const char *const *lowered, int count) {
    size_t text = 0;
    for (int i = 0; i < count; i++) text += strlen(names[i]) + 1 + strlen(lowered[i]) + 1;
    size_t tables = (size_t)count * 2 * sizeof(const char *);
    /* the tables first, so they are aligned for pointers */
    ptxkit_module *m = calloc(1, sizeof *m + tables + text);
    if (!m) return NULL;
    m->ctx = ctx;
    m->module = module;
    m->key = *key;
    m->name_count = count;
    if (count > 0) {
        m->names = (const char **)(void *)m->text;
        m->lowered = m->names + count;
        char *at = m->text + tables;
        for (int i = 0; i < count; i++) {
            size_t n = strlen(names[i]) + 1, l = strlen(lowered[i]) + 1;
            m->names[i] = memcpy(at, names[i], n);
            at += n;
            m->lowered[i] = memcpy(at, lowered[i], l);
            at += l;
        }
    }
    return m;
}

const char *module_symbol_name(const ptxkit_module *m, const char *name) {
    for (int i = 0; i < m->name_count; i++)
        if (strcmp(m->names[i], name) == 0) return m->lowered[i];
    return name;
}

bool module_name_is_expression(const char *name) {
    /* a symbol is letters, digits, '_', and PTX's '$', '%' and '.' */
    for (const char *c = name; *c; c++)
        if (!(*c == '_' || *c == '$' || *c == '%' || *c == '.' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
              (*c >= 'A' && *c <= 'Z')))
            return true;
    return false;
}

char *lowered_names_encode(const char *const *lowered, int count) {
    size_t total = 1;
    for (int i = 0; i < count; i++) {
        if (!lowered[i][0] || strchr(lowered[i], '\n')) return NULL;
        total += strlen(lowered[i]) + 1;
    }
    char *text = malloc(total);
    if (!text) return NULL;
    size_t at = 0;
    for (int i = 0; i < count; i++) {
        size_t n = strlen(lowered[i]);
        if (i > 0) text[at++] = '\n';
        memcpy(text + at, lowered[i], n);
        at += n;
    }
    text[at] = 0;
    return text;
}

bool lowered_names_decode(char *text, int count, const char **names) {
    char *line = text;
    for (int i = 0; i < count; i++) {
        char *end = strchr(line, '\n');
        if (end == line || !*line) return false;
        names[i] = line;
        if (!end) return i == count - 1;
        *end = 0;
        line = end + 1;
    }
    return false; /* more lines than names */
}
