/* Cache key material (cache_key.c): keys and text hashes, their hex form,
 * and what identifies NVRTC and the embedded headers in a compiled kernel's
 * key. */
#ifndef PTXKIT_RUNTIME_CACHE_KEY_H
#define PTXKIT_RUNTIME_CACHE_KEY_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/identity_record.h" /* NVRTC_SIGNATURE_SIZE */

typedef struct cache_key {
    unsigned char bytes[16];
} cache_key;

typedef struct text_hash {
    uint64_t lo, hi;
} text_hash;

void cache_key_hex(const cache_key *key, char out[33]);

/* A 128-bit hash of a program's name, source and headers, computed once per
 * program so that a kernel lookup hashes only its defines. */
text_hash text_hash_of(const char *name, const char *source, const char *const *header_names,
                       const char *const *header_texts, int header_count);

/* NVRTC's identity (its build: version, size and time of the shared
 * object) and every embedded header, as hashed into compiled kernels' keys. */
text_hash nvrtc_identity_hash(void);
text_hash builtin_headers_hash(void);

/* NVRTC's version as the cache keys see it: from the identity record in the
 * cache directory when it is current, so that a warm process never loads
 * NVRTC; else from the library. False when NVRTC is unavailable. */
bool nvrtc_identity_version(int *major, int *minor);
/* The identity from the cache directory's record alone, when it has one
 * for this environment (never loading NVRTC: without a record, the first
 * key computes it as before). For ptxkit_context_create, which reads it
 * while the driver opens the context. */
void nvrtc_identity_prefetch(void);
/* The first line of the nvrtc-identity record: a hash of the environment
 * that chooses the NVRTC library (PTXKIT_NVRTC_PATH, LD_LIBRARY_PATH). */
void nvrtc_environment_signature(char buf[NVRTC_SIGNATURE_SIZE]);

#endif
