/* The nvrtc-identity record (identity_record.c): what lets a warm process
 * know NVRTC's identity without loading it. */
#ifndef PTXKIT_RUNTIME_IDENTITY_RECORD_H
#define PTXKIT_RUNTIME_IDENTITY_RECORD_H

#include <stdbool.h>
#include <stddef.h>

/* The size of the record's first line, the environment's signature
 * (nvrtc_environment_signature, cache_key.h), its NUL included. */
#define NVRTC_SIGNATURE_SIZE 64

/* The nvrtc-identity record (identity_record.c): its text is the signature
 * line, the shared object's path, and "size mtime major minor", each line
 * ending in a newline, nothing after. True when `text` is exactly that for
 * `signature`; the outputs are then set. */
bool identity_record_parse(const char *text, size_t size, const char *signature, char *path, size_t path_size,
                           long long *lib_size, long long *mtime, int *major, int *minor);
/* Reads and parses the record file; false when it is missing, not a
 * regular file, too large or not a record for `signature`. */
bool identity_record_read(const char *record_path, const char *signature, char *path, size_t path_size,
                          long long *lib_size, long long *mtime, int *major, int *minor);

#endif
