/* The nvrtc-identity record of the cache directory (see cache_key.c): which
 * NVRTC shared object was loaded, so a later process can key its kernels by
 * NVRTC's build without loading NVRTC. Written by cache_key.c as
 *
 *   <environment signature>\n<path of the shared object>\n<size> <mtime> <major> <minor>\n
 *
 * Read here: never blocking (a FIFO in its place is refused), bounded in
 * size, parsed strictly; anything else is "no record" and NVRTC is loaded
 * to identify it, which rewrites the record. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/files.h"
#include "runtime/identity_record.h"

/* The writer's buffer: a longer file is not one it wrote. */
#define RECORD_MAX (NVRTC_SIGNATURE_SIZE + PATH_MAX + 96)

/* The next line of [*p, end) without its newline; false when none ends. */
static bool next_line(const char **p, const char *end, const char **line, size_t *len) {
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl) return false;
    *line = *p;
    *len = (size_t)(nl - *p);
    *p = nl + 1;
    return true;
}

/* A decimal integer as printf writes it (optional '-', no leading zeros)
 * in [lo, hi], then one space and more text, or (last) the end; moves *p
 * past it and its space. */
static bool next_number(const char **p, const char *end, bool last, long long lo, long long hi, long long *out) {
    char digits[24];
    size_t n = 0;
    const char *q = *p;
    if (q < end && *q == '-') digits[n++] = *q++;
    while (q < end && *q >= '0' && *q <= '9' && n < sizeof digits - 1) digits[n++] = *q++;
    if (n == 0 || digits[n - 1] == '-' || (last ? q != end : q + 1 >= end || *q != ' ')) return false;
    digits[n] = 0;
    /* the writer's %lld / %d: no leading zeros, no "-0" (found by fuzz_identity_record) */
    const char *first = digits[0] == '-' ? digits + 1 : digits;
    if (first[0] == '0' && (first[1] || first != digits)) return false;
    errno = 0;
    char *stop;
    long long v = strtoll(digits, &stop, 10);
    if (errno || *stop || v < lo || v > hi) return false;
    *out = v;
    *p = q < end ? q + 1 : q;
    return true;
}

bool identity_record_parse(const char *text, size_t size, const char *signature, char *path, size_t path_size,
                           long long *lib_size, long long *mtime, int *major, int *minor) {
    const char *p = text, *end = text + size, *line;
    size_t len;
    if (!path_size || !next_line(&p, end, &line, &len) || len != strlen(signature) ||
        memcmp(line, signature, len) != 0)
        return false;
    if (!next_line(&p, end, &line, &len) || len == 0 || len >= path_size || memchr(line, 0, len)) return false;
    memcpy(path, line, len);
    path[len] = 0;
    long long numbers[4];
    const char *numbers_end;
    if (!next_line(&p, end, &line, &len) || p != end) return false;
    numbers_end = line + len;
    const char *q = line;
    if (!next_number(&q, numbers_end, false, 0, LLONG_MAX, &numbers[0]) ||
        !next_number(&q, numbers_end, false, LLONG_MIN, LLONG_MAX, &numbers[1]) ||
        !next_number(&q, numbers_end, false, 0, INT_MAX, &numbers[2]) ||
        !next_number(&q, numbers_end, true, 0, INT_MAX, &numbers[3])) {
        path[0] = 0;
        return false;
    }
    *lib_size = numbers[0];
    *mtime = numbers[1];
    *major = (int)numbers[2];
    *minor = (int)numbers[3];
    return true;
}

bool identity_record_read(const char *record_path, const char *signature, char *path, size_t path_size,
                          long long *lib_size, long long *mtime, int *major, int *minor) {
    char *text;
    size_t size;
    if (files_read_regular(record_path, true, RECORD_MAX, &text, &size, NULL) != FILES_READ_OK) return false;
    bool ok = identity_record_parse(text, size, signature, path, path_size, lib_size, mtime, major, minor);
    free(text);
    return ok;
}
