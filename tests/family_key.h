/* Cache keys for the CPU tests, made as the library makes them
 * (kernel_cache_key): a built-in family's module at given defines, and an
 * application program's kernel from its text hash. */
#ifndef PTXKIT_TESTS_FAMILY_KEY_H
#define PTXKIT_TESTS_FAMILY_KEY_H

#include <stdio.h>

#include "runtime/cache_key.h"
#include "runtime/kernel_cache.h"
#include "runtime/program.h"

/* A family without an embedded source ("ceiling") gets a program of its
 * name alone, so that its keys still differ from every family's. */
static inline cache_key cache_key_for(const char *family, const char *const *defines, int define_count, int arch,
                                      int driver_version) {
    char source[96];
    snprintf(source, sizeof source, "%s.cu", family);
    struct ptxkit_program other = {.name = source, .source = (char *)"", .builtin = true};
    const ptxkit_program *p = builtin_program(family);
    if (!p) {
        other.hash = text_hash_of(source, "", NULL, NULL, 0);
        p = &other;
    }
    kernel_request req = {.kind = KERNEL_FROM_PROGRAM, .program = p, .defines = defines, .define_count = define_count};
    return kernel_cache_key(&req, KEY_MODULE, arch, driver_version);
}

static inline cache_key cache_key_for_program(text_hash program, const char *const *defines, int define_count,
                                              const char *const *options, int option_count, const char *entry, int arch,
                                              int driver_version) {
    struct ptxkit_program p = {.name = (char *)"k.cu", .hash = program, .option_count = option_count};
    for (int i = 0; i < option_count && i < PROGRAM_MAX_OPTIONS; i++) p.options[i] = (char *)options[i];
    kernel_request req = {.kind = KERNEL_FROM_PROGRAM, .program = &p, .defines = defines, .define_count = define_count,
                          .entry = entry, .name_expression = true};
    return kernel_cache_key(&req, KEY_MODULE, arch, driver_version);
}

#endif
