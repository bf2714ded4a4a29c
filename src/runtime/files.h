/* The one file layer: every file ptxkit persists (kernel-cache entries, the
 * nvrtc-identity record, the tuning database and record, compile-error
 * dumps) is written, read and locked through these calls. It depends on
 * libc only, so any layer may use it.
 *
 * Rules it keeps for every caller: a write is a temporary file beside the
 * target and a rename (readers see the old file or the whole new one); a
 * read opens only regular files and never blocks (a FIFO or device in a
 * file's place is refused before it is opened); a read is bounded in size;
 * writers that merge with what is on disk do it under an exclusive flock. */
#ifndef PTXKIT_FILES_H
#define PTXKIT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct stat;

/* mkdir -p; false (errno set) when a component cannot be created. */
bool files_make_dirs(const char *path);
/* mkdir -p of the directory holding path (nothing for a bare name). */
bool files_make_parent_dirs(const char *path);

/* Opens path read-only when it is a regular file, never blocking: a FIFO,
 * socket or other non-regular file is refused (so is a symbolic link unless
 * follow_links; with follow_links, before it is opened, so that a link to a
 * device never opens it). The descriptor keeps O_NONBLOCK, which a regular
 * file ignores: read it with files_read_all, which copes with a file
 * system that does not. *st describes the file. -1: an error (errno;
 * ENOENT when missing); -2: not a regular file. */
int files_open_regular(const char *path, bool follow_links, struct stat *st);
/* Whether path names a regular file (following links), checked as
 * files_open_regular does: for paths handed to code that would open them
 * blocking (dlopen). */
bool files_is_regular(const char *path);

/* read(2) / write(2) of exactly size bytes, retrying on EINTR and short
 * counts (and, for a read, on EAGAIN after clearing O_NONBLOCK); false on
 * an error or end of file (errno set for an error). */
bool files_read_all(int fd, void *buf, size_t size);
bool files_write_all(int fd, const void *data, size_t size);

/* Writes the concatenation of parts[0..count) to path through a temporary
 * file beside it and a rename: readers see the old file or the whole new
 * one, never a part. sync: fsync before the rename. 0, or an errno. */
int files_write_atomic(const char *path, const void *const *parts, const size_t *sizes, int count, bool sync);

/* Moves the regular file `from` to `to` (whose directory must exist): a
 * rename, or where the two lie on different file systems a bounded read,
 * an atomic write and an unlink. 0, or an errno (ENOENT: nothing to move;
 * EEXIST: `to` exists and is kept). */
int files_move(const char *from, const char *to, size_t max_bytes);

typedef enum files_read_status {
    FILES_READ_OK,
    FILES_READ_MISSING,     /* no such file */
    FILES_READ_NOT_REGULAR, /* a directory, FIFO, socket, device (or a link when not followed) */
    FILES_READ_TOO_LARGE,   /* larger than max_bytes */
    FILES_READ_ERROR,       /* *err holds the errno */
    FILES_READ_NO_MEMORY
} files_read_status;

/* Reads a whole regular file of at most max_bytes into a malloc'd,
 * NUL-terminated buffer (*size without the NUL), never blocking. Anything
 * but OK leaves *text NULL and *size 0; *err (may be NULL) gets the errno
 * for FILES_READ_ERROR. A file that shrinks while read is what was read. */
files_read_status files_read_regular(const char *path, bool follow_links, size_t max_bytes, char **text, size_t *size,
                                     int *err);
/* The same into the caller's buffer, for small files read on a hot path:
 * a file of fewer than capacity bytes, NUL-terminated in buf; *mtime (may
 * be NULL) its modification time. FILES_READ_TOO_LARGE at capacity bytes or
 * more. */
files_read_status files_read_regular_into(const char *path, bool follow_links, char *buf, size_t capacity, size_t *size,
                                          time_t *mtime);

/* The last bytes of a regular file (a link is refused), never blocking:
 * at most capacity into buf (not NUL-terminated), *size how many,
 * *file_size the whole file's. */
files_read_status files_read_tail(const char *path, char *buf, size_t capacity, size_t *size,
                                  unsigned long long *file_size);

/* Appends size bytes to path (created 0644 when missing) in one write, so
 * that small appends from several processes do not interleave; anything
 * but a regular file in path's place (a link, FIFO, device) is left
 * unwritten, never blocking on it. 0, or an errno. */
int files_append(const char *path, const void *data, size_t size);

/* Opens path (created 0644 when missing) with O_RDWR | extra_flags, refuses
 * anything but a regular file without blocking on it, and takes an
 * exclusive flock. The descriptor, or -1 (cannot open: errno), -2 (not a
 * regular file), -3 (cannot lock: errno). Release with files_unlock_close. */
int files_lock_open(const char *path, int extra_flags);
void files_unlock_close(int fd);

/* A merge: given what the file holds (read status, and its text when OK),
 * produce the new content in a malloc'd *out of *out_size bytes (freed by
 * the caller of files_locked_replace). Return 0 to write it; a positive
 * value writes nothing and is returned by files_locked_replace. */
typedef int (*files_merge_fn)(void *context, files_read_status read, int read_err, const char *text, size_t size,
                              char **out, size_t *out_size);

typedef enum files_replace_result {
    FILES_REPLACED = 0,
    FILES_LOCK_OPEN_FAILED = -1,  /* errno in *err */
    FILES_LOCK_NOT_REGULAR = -2,
    FILES_LOCK_FAILED = -3,       /* errno in *err */
    FILES_WRITE_FAILED = -4,      /* errno in *err */
    FILES_PATH_TOO_LONG = -5
} files_replace_result;

/* Read-merge-replace under an exclusive flock on "<path>.lock": reads path
 * (as files_read_regular, following links, at most max_bytes), calls merge,
 * and writes its output atomically (sync: fsync first), so concurrent
 * writers each see the others' results and lose nothing. Returns a
 * files_replace_result, or merge's own positive return. The lock file's
 * directory must exist (files_make_parent_dirs). */
int files_locked_replace(const char *path, size_t max_bytes, bool sync, files_merge_fn merge, void *context, int *err);

#endif
