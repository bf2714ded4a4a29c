/* A module handed to the application (ptxkit_module): an image it loaded
 * (modules.c), or a program compiled for several names
 * (modules.c), whose kernels share its variables. The names a
 * program module was compiled for (C++ name expressions of kernels and
 * variables) map to their names in the image (modules.c). */
#ifndef PTXKIT_RUNTIME_MODULES_H
#define PTXKIT_RUNTIME_MODULES_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"
#include "runtime/cache_key.h"

/* The most names one module is compiled for. */
#define MODULE_MAX_NAMES PTXKIT_MAX_MODULE_NAMES

/* One allocation (the registry frees objects with free()): the strings
 * live in text. */
struct ptxkit_module {
    ptxkit_context *ctx;
    CUmodule module;
    cache_key key;
    int rewritten, kept;      /* PTX images: the load-operator rewrite's counts */
    int name_count;           /* program modules: the names compiled for */
    const char **names;       /* as the application wrote them */
    const char **lowered;     /* their names in the image */
    char text[];
};

/* A new module object (malloc'd, one block) for module under key with
 * count names and their lowered names (both may be NULL when count is 0).
 * NULL when out of memory. */
ptxkit_module *module_object_new(ptxkit_context *ctx, CUmodule module, const cache_key *key,
                                 const char *const *names, const char *const *lowered, int count);

/* The name in the image of `name`: its lowered name when the module was
 * compiled for it, else name itself (an extern "C" kernel, a variable at
 * global namespace scope, a mangled symbol). */
const char *module_symbol_name(const ptxkit_module *m, const char *name);

/* Whether name is a C++ name expression that is not a symbol by itself
 * ("&ns::v", "k<float>", "ns::k"): one the module must have been compiled
 * for. */
bool module_name_is_expression(const char *name);


#endif
