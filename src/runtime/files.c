/* The one file layer (files.h): atomic replace, bounded non-blocking reads,
 * mkdir -p, and locked read-merge-replace. libc only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/files.h"

bool files_make_dirs(const char *path) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return false;
    }
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return false;
            *p = '/';
        }
    return mkdir(tmp, 0755) == 0 || errno == EEXIST;
}

bool files_make_parent_dirs(const char *path) {
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
        errno = ENAMETOOLONG;
        return false;
    }
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return true;
    *slash = 0;
    return files_make_dirs(dir);
}

/* Opens path with flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC (0644 where
 * flags create it) and keeps the descriptor only for a regular file: -1
 * where the open or its fstat failed (errno), -2 for anything else in
 * path's place. O_NONBLOCK: a FIFO or device there does not block the open;
 * it stays set, a regular file ignoring it. */
static int open_if_regular(const char *path, int flags, struct stat *st) {
    int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    bool known = fstat(fd, st) == 0;
    if (!known || !S_ISREG(st->st_mode)) {
        int err = errno;
        close(fd);
        errno = err;
        return known ? -2 : -1;
    }
    return fd;
}

int files_open_regular(const char *path, bool follow_links, struct stat *st) {
    /* A path that may lead through a link (one the application named) is
     * stat'ed first: a device it points to is never opened (opening one can
     * have effects). Without links (the library's own directories) the
     * open is the check: O_NOFOLLOW refuses a link, and only a privileged
     * user can make a device node there. O_NONBLOCK: a FIFO does not block
     * the open, and open_if_regular's fstat refuses it. O_NONBLOCK stays
     * set: a regular file ignores it, and clearing it cost two system calls per
     * read on a warm start's path (files_read_all clears it should a read
     * answer EAGAIN all the same). */
    if (follow_links && stat(path, st) != 0) return -1;
    if (follow_links && !S_ISREG(st->st_mode)) return -2;
    int fd = open_if_regular(path, O_RDONLY | (follow_links ? 0 : O_NOFOLLOW), st);
    return fd == -1 && errno == ELOOP ? -2 : fd; /* a link O_NOFOLLOW refused */
}

/* A read of a descriptor files_open_regular returned: should a file system
 * honour O_NONBLOCK on a regular file, the descriptor is made blocking and
 * the read retried. */
static ssize_t read_some(int fd, void *buf, size_t size) {
    for (;;) {
        ssize_t r = read(fd, buf, size);
        if (r >= 0) return r;
        if (errno == EINTR) continue;
        int flags;
        if (errno != EAGAIN || (flags = fcntl(fd, F_GETFL)) < 0 || !(flags & O_NONBLOCK) ||
            fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
            return -1;
    }
}

bool files_is_regular(const char *path) {
    struct stat st;
    int fd = files_open_regular(path, true, &st);
    if (fd < 0) return false;
    close(fd);
    return true;
}

bool files_read_all(int fd, void *buf, size_t size) {
    char *p = buf;
    while (size) {
        ssize_t r = read_some(fd, p, size);
        if (r <= 0) return false;
        p += r;
        size -= (size_t)r;
    }
    return true;
}

bool files_write_all(int fd, const void *data, size_t size) {
    const char *p = data;
    while (size) {
        ssize_t w = write(fd, p, size);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        size -= (size_t)w;
    }
    return true;
}

int files_write_atomic(const char *path, const void *const *parts, const size_t *sizes, int count, bool sync) {
    static unsigned counter; /* with the pid: unique among threads and processes */
    char tmp[4400];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED)) >= (int)sizeof tmp)
        return ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    bool ok = true;
    for (int i = 0; i < count && ok; i++) ok = files_write_all(fd, parts[i], sizes[i]);
    if (ok && sync) ok = fsync(fd) == 0;
    int err = ok ? 0 : errno ? errno : EIO;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) unlink(tmp);
    return err;
}

/* files_open_regular with its failure as a read status (*err, may be
 * NULL: the errno of FILES_READ_ERROR). */
static files_read_status open_for_read(const char *path, bool follow_links, struct stat *st, int *fd, int *err) {
    *fd = files_open_regular(path, follow_links, st);
    if (*fd == -2) return FILES_READ_NOT_REGULAR;
    if (*fd >= 0) return FILES_READ_OK;
    if (errno == ENOENT) return FILES_READ_MISSING;
    if (err) *err = errno;
    return FILES_READ_ERROR;
}

/* Reads up to size bytes of fd into buf and closes it: FILES_READ_OK with
 * *got (a file that shrinks while read is what was read), or
 * FILES_READ_ERROR (*err, may be NULL, the errno). */
static files_read_status read_and_close(int fd, char *buf, size_t size, size_t *got, int *err) {
    int read_err = 0;
    *got = 0;
    while (*got < size) {
        ssize_t r = read_some(fd, buf + *got, size - *got);
        if (r < 0) read_err = errno;
        if (r <= 0) break;
        *got += (size_t)r;
    }
    close(fd);
    if (!read_err) return FILES_READ_OK;
    if (err) *err = read_err;
    return FILES_READ_ERROR;
}

files_read_status files_read_regular(const char *path, bool follow_links, size_t max_bytes, char **text, size_t *size,
                                     int *err) {
    *text = NULL;
    *size = 0;
    if (err) *err = 0;
    struct stat st;
    int fd;
    files_read_status rs = open_for_read(path, follow_links, &st, &fd, err);
    if (rs != FILES_READ_OK) return rs;
    if ((unsigned long long)st.st_size > max_bytes) {
        close(fd);
        return FILES_READ_TOO_LARGE;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return FILES_READ_NO_MEMORY;
    }
    size_t got;
    if ((rs = read_and_close(fd, buf, (size_t)st.st_size, &got, err)) != FILES_READ_OK) {
        free(buf);
        return rs;
    }
    buf[got] = 0;
    *text = buf;
    *size = got;
    return FILES_READ_OK;
}

files_read_status files_read_regular_into(const char *path, bool follow_links, char *buf, size_t capacity, size_t *size,
                                          time_t *mtime) {
    *size = 0;
    struct stat st;
    int fd;
    files_read_status rs = open_for_read(path, follow_links, &st, &fd, NULL);
    if (rs != FILES_READ_OK) return rs;
    if ((unsigned long long)st.st_size >= capacity) {
        close(fd);
        return FILES_READ_TOO_LARGE;
    }
    if ((rs = read_and_close(fd, buf, (size_t)st.st_size, size, NULL)) != FILES_READ_OK) return rs;
    buf[*size] = 0;
    if (mtime) *mtime = st.st_mtime;
    return FILES_READ_OK;
}

files_read_status files_read_tail(const char *path, char *buf, size_t capacity, size_t *size,
                                  unsigned long long *file_size) {
    *size = 0;
    *file_size = 0;
    struct stat st;
    int fd;
    files_read_status rs = open_for_read(path, false, &st, &fd, NULL);
    if (rs != FILES_READ_OK) return rs;
    *file_size = (unsigned long long)st.st_size;
    size_t want = *file_size > capacity ? capacity : (size_t)*file_size;
    ssize_t got = want ? pread(fd, buf, want, (off_t)(*file_size - want)) : 0;
    close(fd);
    if (got < 0) return FILES_READ_ERROR;
    *size = (size_t)got;
    return FILES_READ_OK;
}

int files_append(const char *path, const void *data, size_t size) {
    struct stat st;
    int fd = open_if_regular(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, &st);
    if (fd < 0) return fd == -1 ? errno : EINVAL;
    ssize_t wrote = write(fd, data, size);
    int err = wrote == (ssize_t)size ? 0 : wrote < 0 ? errno : EIO;
    close(fd);
    return err;
}

int files_lock_open(const char *path, int extra_flags) {
    struct stat st;
    int fd = open_if_regular(path, O_RDWR | O_CREAT | extra_flags, &st);
    if (fd < 0) return fd;
    /* blocking again for the lock's wait */
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        close(fd);
        return -2;
    }
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            int e = errno;
            close(fd);
            errno = e;
            return -3;
        }
    return fd;
}

void files_unlock_close(int fd) {
    if (fd < 0) return;
    flock(fd, LOCK_UN);
    close(fd);
}

int files_locked_replace(const char *path, size_t max_bytes, bool sync, files_merge_fn merge, void *context, int *err) {
    char lock_path[4200];
    if (err) *err = 0;
    if (snprintf(lock_path, sizeof lock_path, "%s.lock", path) >= (int)sizeof lock_path) return FILES_PATH_TOO_LONG;
    int lock = files_lock_open(lock_path, 0);
    if (lock < 0) {
        if (err) *err = errno;
        return lock == -1 ? FILES_LOCK_OPEN_FAILED : lock == -2 ? FILES_LOCK_NOT_REGULAR : FILES_LOCK_FAILED;
    }
    /* under the lock: what other writers stored meanwhile is merged */
    char *text, *out = NULL;
    size_t size, out_size = 0;
    int read_err;
    files_read_status read = files_read_regular(path, true, max_bytes, &text, &size, &read_err);
    int result = merge(context, read, read_err, text, size, &out, &out_size);
    free(text);
    if (result == 0) {
        const void *parts[1] = {out};
        int e = files_write_atomic(path, parts, &out_size, 1, sync);
        if (e) {
            if (err) *err = e;
            result = FILES_WRITE_FAILED;
        }
    }
    free(out);
    files_unlock_close(lock);
    return result;
}

int files_move(const char *from, const char *to, size_t max_bytes) {
    struct stat st;
    if (lstat(to, &st) == 0) return EEXIST;
    if (stat(from, &st) != 0) return errno;
    if (!S_ISREG(st.st_mode)) return EINVAL;
    if (rename(from, to) == 0) return 0;
    if (errno != EXDEV) return errno;
    char *text = NULL;
    size_t size = 0;
    int err = 0;
    switch (files_read_regular(from, true, max_bytes, &text, &size, &err)) {
    case FILES_READ_OK: break;
    case FILES_READ_MISSING: return ENOENT;
    case FILES_READ_TOO_LARGE: return EFBIG;
    case FILES_READ_NO_MEMORY: return ENOMEM;
    case FILES_READ_ERROR: return err ? err : EIO;
    default: return EINVAL;
    }
    const void *parts[1] = {text};
    err = files_write_atomic(to, parts, &size, 1, true);
    free(text);
    if (!err && unlink(from) != 0) err = errno;
    return err;
}
