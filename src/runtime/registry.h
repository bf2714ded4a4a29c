/* The module registry (registry.c): per context, what the kernel cache
 * loaded and handed out, by key. */
#ifndef PTXKIT_RUNTIME_REGISTRY_H
#define PTXKIT_RUNTIME_REGISTRY_H

#include <stdbool.h>

#include "driver/driver.h"
#include "ptxkit.h"
#include "runtime/cache_key.h"

/* A context's registry (ctx->registry), opaque outside registry.c. */
typedef struct module_registry module_registry;

module_registry *module_registry_create(void);
void module_registry_destroy(ptxkit_context *ctx, module_registry *registry);
/* What is registered under key: a module, an object handed out (either may
 * be NULL). False when nothing is. */
bool registry_lookup(ptxkit_context *ctx, const cache_key *key, CUmodule *module, void **object);
/* Registers a freshly loaded module under key with its load log (copied;
 * may be NULL) (the context owns it from now); when another thread
 * registered the same key first, ours is unloaded and theirs returned. */
CUmodule registry_add_module(ptxkit_context *ctx, const cache_key *key, CUmodule module, const char *log);
/* The load log registered with the module under key; "" when none. Lives
 * as long as the context. */
const char *registry_module_log(ptxkit_context *ctx, const cache_key *key);
/* Registers a malloc'd object (freed with the context) under key; returns
 * the object now registered (another thread's, ours being freed), or NULL
 * when out of memory (ours freed). */
void *registry_add_object(ptxkit_context *ctx, const cache_key *key, void *object);
/* How many modules the context has loaded so far (compiled, read from the
 * disk cache or from PTX): the GPU tests' witness that a prepared call, or
 * a call with a configuration _config_get named, loads nothing new. */
size_t registry_module_count(ptxkit_context *ctx);

#endif
