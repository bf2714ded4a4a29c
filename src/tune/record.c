/* The tuning record (see record.h): JSON lines written and read with plain
 * stdio and a reader for exactly the subset the writer produces. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/files.h"
#include "tune/record.h"

#define CHECKSUM_FIELD ",\"xxh3\":\""

void tune_record_init(tune_record *r) { memset(r, 0, sizeof *r); }

void tune_record_clear(tune_record *r) {
    free(r->lines);
    memset(r, 0, sizeof *r);
}

static const char *const outcome_names[] = {"ok", "wrong", "failed"};

const char *tune_record_outcome_name(tune_record_outcome o) {
    return (unsigned)o < sizeof outcome_names / sizeof outcome_names[0] ? outcome_names[o] : "?";
}

bool tune_record_default_path(char *buf, size_t size) {
    buf[0] = 0;
    const char *env = getenv("PTXKIT_TUNE_RECORD");
    if (env && strcmp(env, "off") == 0) return false;
    if (env && *env) return (size_t)snprintf(buf, size, "%s", env) < size || (buf[0] = 0);
    char db[4096];
    if (!tune_db_default_path(db, sizeof db)) return false;
    size_t len = strlen(db);
    if (len > 3 && strcmp(db + len - 3, ".db") == 0) db[len - 3] = 0;
    if ((size_t)snprintf(buf, size, "%s.record.jsonl", db) >= size) {
        buf[0] = 0;
        return false;
    }
    return true;
}

/* ---- writing ----------------------------------------------------------- */

typedef struct out_buf {
    char *p;
    size_t size, used;
    bool full;
} out_buf;

static void put(out_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf *b, const char *fmt, ...) {
    if (b->full) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->used, b->size - b->used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= b->size - b->used) b->full = true;
    else b->used += (size_t)n;
}

/* A JSON string: quotes, backslashes and control characters escaped;
 * bytes above 0x7e pass as they are (device names are ASCII). */
static void put_string(out_buf *b, const char *s) {
    put(b, "\"");
    for (; *s && !b->full; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') put(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) put(b, "\\u%04x", c);
        else put(b, "%c", c);
    }
    put(b, "\"");
}

/* JSON has no inf or nan: anything not finite and non-negative is 0. */
static double finite_or_zero(double v) { return isfinite(v) && v > 0 ? v : 0; }

/* GB/s as the database bounds them: below 1e9, to the two decimals written
 * (a value of 1e200 was kept by the reader, then written back with 201
 * digits, which the reader refused). */
#define RECORD_GBS_LIMIT 1e9
static double gbs_for_record(double v) {
    v = finite_or_zero(v);
    v = round(v * 100) / 100;
    return v < RECORD_GBS_LIMIT ? v : 999999999.99;
}

size_t tune_record_format(const tune_record_line *l, char *buf, size_t size) {
    if (size < 2) return 0;
    out_buf b = {buf, size - 1, 0, false}; /* room for the newline */
    put(&b, "{\"format\":%d,\"device\":", TUNE_RECORD_FORMAT);
    put_string(&b, l->key.device);
    put(&b, ",\"cc\":%d,\"sms\":%d,\"driver\":%d,\"nvrtc\":\"%d.%d\",\"lib\":", l->key.cc, l->key.sm_count,
        l->key.driver, l->key.nvrtc_major, l->key.nvrtc_minor);
    put_string(&b, l->key.library);
    put(&b, ",\"family\":");
    put_string(&b, l->family);
    put(&b, ",\"variant\":");
    put_string(&b, l->variant);
    put(&b, ",\"code\":\"%016llx\",\"n\":%zu,\"params\":{", l->code, l->n);
    for (int i = 0; i < l->param_count; i++) {
        if (i) put(&b, ",");
        put_string(&b, l->names[i]);
        put(&b, ":%lld", l->values[i]);
    }
    put(&b, "},\"outcome\":\"%s\",\"ms\":%.9g,\"gbs\":%.2f,\"samples\":%d,\"when\":%lld,\"note\":",
        tune_record_outcome_name(l->outcome), finite_or_zero(l->ms), gbs_for_record(l->gbs),
        l->samples > 0 ? l->samples : 0, l->when <= 0 ? 0 : l->when > TUNE_DB_MAX_WHEN ? TUNE_DB_MAX_WHEN : l->when);
    put_string(&b, l->note);
    if (b.full) return 0;
    unsigned long long sum = (unsigned long long)XXH3_64bits(buf, b.used);
    put(&b, CHECKSUM_FIELD "%016llx\"}", sum);
    if (b.full || b.used + 1 >= TUNE_RECORD_MAX_LINE) return 0;
    buf[b.used++] = '\n';
    buf[b.used] = 0;
    return b.used;
}

/* ---- reading: the writer's subset of JSON ------------------------------ */

typedef struct cursor {
    const char *p, *end;
} cursor;

static bool more(const cursor *c) { return c->p < c->end; }

static bool eat(cursor *c, char ch) {
    if (!more(c) || *c->p != ch) return false;
    c->p++;
    return true;
}

/* A string as put_string writes it, into out (at most size - 1 bytes):
 * bytes from 0x20 on as they are, except '"', '\\' and 0x7f; \" and \\;
 * a control character (not NUL) or 0x7f as \u00xx in lower-case hex. No
 * other escape: the reader takes no text the writer would not write. */
static bool read_string(cursor *c, char *out, size_t size) {
    if (!eat(c, '"')) return false;
    size_t used = 0;
    while (more(c) && *c->p != '"') {
        unsigned char ch = (unsigned char)*c->p++;
        if (ch < 0x20 || ch == 0x7f) return false;
        if (ch == '\\') {
            if (!more(c)) return false;
            char e = *c->p++;
            if (e == '"' || e == '\\') {
                ch = (unsigned char)e;
            } else if (e == 'u' && c->end - c->p >= 4 && memcmp(c->p, "00", 2) == 0) {
                unsigned v = 0;
                for (int i = 2; i < 4; i++) {
                    char h = c->p[i];
                    if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f'))) return false;
                    v = v * 16 + (unsigned)(h <= '9' ? h - '0' : h - 'a' + 10);
                }
                if (v == 0 || (v >= 0x20 && v != 0x7f)) return false;
                c->p += 4;
                ch = (unsigned char)v;
            } else {
                return false;
            }
        }
        if (used + 1 >= size) return false; /* longer than the field: not ours */
        out[used++] = (char)ch;
    }
    out[used] = 0;
    return eat(c, '"');
}

static bool number_char(char ch) { return (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' || ch == 'e'; }

/* A number token, as text (the conversions below check its form). */
static bool read_number(cursor *c, char *out, size_t size) {
    size_t used = 0;
    while (more(c) && number_char(*c->p)) {
        if (used + 1 >= size) return false; /* longer than anything written */
        out[used++] = *c->p++;
    }
    out[used] = 0;
    return used > 0;
}

/* An integer exactly as %lld writes it (no '+', no leading zeros, no "-0"). */
static bool to_ll(const char *s, long long lo, long long hi, long long *v) {
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    char again[32];
    if (errno || *end || end == s || x < lo || x > hi) return false;
    snprintf(again, sizeof again, "%lld", x);
    if (strcmp(again, s) != 0) return false;
    *v = x;
    return true;
}

/* A non-negative finite double exactly as the writer's format (%.9g or
 * %.2f) writes it. */
static bool to_double(const char *s, const char *format, double *v) {
    if (*s == '-') return false; /* the writer writes 0, never -0 */
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || *end || end == s || !isfinite(x) || x < 0) return false;
    char again[64];
    snprintf(again, sizeof again, format, x);
    if (strcmp(again, s) != 0) return false;
    *v = x;
    return true;
}

static bool int_field(const char *s, int lo, int hi, int *out) {
    long long v;
    if (!to_ll(s, lo, hi, &v)) return false;
    *out = (int)v;
    return true;
}

static bool read_params(cursor *c, tune_record_line *l) {
    if (!eat(c, '{')) return false;
    l->param_count = 0;
    if (eat(c, '}')) return true;
    do {
        if (l->param_count == TUNE_MAX_PARAMS) return false;
        char number[32];
        long long v;
        if (!read_string(c, l->names[l->param_count], TUNE_PARAM_NAME) || !eat(c, ':') ||
            !read_number(c, number, sizeof number) || !to_ll(number, -(1LL << 62), 1LL << 62, &v))
            return false;
        for (int i = 0; i < l->param_count; i++)
            if (strcmp(l->names[i], l->names[l->param_count]) == 0) return false;
        l->values[l->param_count++] = v;
    } while (eat(c, ','));
    return eat(c, '}');
}

enum {
    K_FORMAT, K_DEVICE, K_CC, K_SMS, K_DRIVER, K_NVRTC, K_LIB, K_FAMILY, K_VARIANT, K_CODE, K_N, K_PARAMS,
    K_OUTCOME, K_MS, K_GBS, K_SAMPLES, K_WHEN, K_NOTE, K_COUNT
};
static const char *const keys[K_COUNT] = {"format", "device", "cc", "sms", "driver", "nvrtc", "lib", "family",
                                          "variant", "code", "n", "params", "outcome", "ms", "gbs", "samples",
                                          "when", "note"};

static bool read_value(cursor *c, int k, tune_record_line *l) {
    char text[192];
    long long v;
    switch (k) {
    case K_PARAMS: return read_params(c, l);
    case K_DEVICE: return read_string(c, l->key.device, sizeof l->key.device) && l->key.device[0];
    case K_LIB: return read_string(c, l->key.library, sizeof l->key.library);
    case K_FAMILY: return read_string(c, l->family, sizeof l->family) && l->family[0];
    case K_VARIANT: return read_string(c, l->variant, sizeof l->variant) && l->variant[0];
    case K_NOTE: return read_string(c, l->note, sizeof l->note);
    case K_NVRTC: {
        char *dot;
        long long major, minor;
        if (!read_string(c, text, sizeof text) || (dot = strchr(text, '.')) == NULL) return false;
        *dot = 0;
        if (!to_ll(text, 0, INT_MAX, &major) || !to_ll(dot + 1, 0, INT_MAX, &minor)) return false;
        l->key.nvrtc_major = (int)major;
        l->key.nvrtc_minor = (int)minor;
        return true;
    }
    case K_CODE: {
        char *end;
        if (!read_string(c, text, sizeof text) || strlen(text) != 16) return false;
        errno = 0;
        l->code = strtoull(text, &end, 16);
        return !errno && !*end && strspn(text, "0123456789abcdef") == 16;
    }
    case K_OUTCOME:
        if (!read_string(c, text, sizeof text)) return false;
        for (int i = 0; i < (int)(sizeof outcome_names / sizeof outcome_names[0]); i++)
            if (strcmp(text, outcome_names[i]) == 0) {
                l->outcome = (tune_record_outcome)i;
                return true;
            }
        return false;
    default: break;
    }
    if (!read_number(c, text, sizeof text)) return false;
    switch (k) {
    case K_FORMAT: return to_ll(text, TUNE_RECORD_FORMAT, TUNE_RECORD_FORMAT, &v);
    case K_CC: return int_field(text, 0, 10000, &l->key.cc);
    case K_SMS: return int_field(text, 0, 1 << 20, &l->key.sm_count);
    case K_DRIVER: return int_field(text, 0, 1 << 30, &l->key.driver);
    case K_N: {
        if (!to_ll(text, 1, 1LL << 62, &v)) return false;
        l->n = (size_t)v;
        return true;
    }
    case K_MS: return to_double(text, "%.9g", &l->ms);
    case K_GBS: return to_double(text, "%.2f", &l->gbs) && l->gbs < RECORD_GBS_LIMIT;
    case K_SAMPLES: return int_field(text, 0, 1 << 20, &l->samples);
    case K_WHEN: return to_ll(text, 0, TUNE_DB_MAX_WHEN, &l->when);
    default: return false;
    }
}

bool tune_record_parse(const char *text, size_t len, tune_record_line *out) {
    /* the checksum first: a torn or edited line stops here */
    size_t field = strlen(CHECKSUM_FIELD);
    if (len < field + 18 || len >= TUNE_RECORD_MAX_LINE || memcmp(text + len - 2, "\"}", 2) != 0) return false;
    size_t at = len - 18 - field;
    if (memcmp(text + at, CHECKSUM_FIELD, field) != 0) return false;
    char hex[17];
    memcpy(hex, text + len - 18, 16);
    hex[16] = 0;
    if (strspn(hex, "0123456789abcdef") != 16 || strtoull(hex, NULL, 16) != (unsigned long long)XXH3_64bits(text, at))
        return false;
    tune_record_line l;
    memset(&l, 0, sizeof l);
    cursor c = {text, text + at};
    bool seen[K_COUNT] = {false};
    if (!eat(&c, '{')) return false;
    do {
        char key[32];
        if (!read_string(&c, key, sizeof key) || !eat(&c, ':')) return false;
        int k = -1;
        for (int i = 0; i < K_COUNT && k < 0; i++)
            if (strcmp(key, keys[i]) == 0) k = i;
        if (k < 0 || seen[k] || !read_value(&c, k, &l)) return false; /* the writer writes known keys only */
        seen[k] = true;
    } while (eat(&c, ','));
    if (c.p != c.end) return false; /* the checksum field closes the object */
    for (int i = 0; i < K_COUNT; i++)
        if (!seen[i]) return false;
    *out = l;
    return true;
}

static bool matches(const tune_record_line *l, const tune_record_filter *f) {
    if (!f) return true;
    return (!f->key || tune_db_key_equal(&l->key, f->key)) && (!f->family || strcmp(l->family, f->family) == 0) &&
           (!f->variant || strcmp(l->variant, f->variant) == 0) && l->code == f->code;
}

static bool push(tune_record *r, const tune_record_line *l) {
    if (r->count == r->capacity) {
        size_t cap = r->capacity ? r->capacity * 2 : 64;
        tune_record_line *grown = realloc(r->lines, cap * sizeof *grown);
        if (!grown) return false;
        r->lines = grown;
        r->capacity = cap;
    }
    r->lines[r->count++] = *l;
    return true;
}

ptxkit_status tune_record_parse_text(const char *text, size_t size, const tune_record_filter *filter, tune_record *out) {
    out->ignored = 0;
    for (const char *p = text, *end = text + size; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) { /* torn: the process writing it died, or is writing it now */
            out->ignored++;
            break;
        }
        size_t len = (size_t)(nl - p);
        tune_record_line l;
        if (len == 0) {
            /* the writer's separator after a torn line */
        } else if (!tune_record_parse(p, len, &l)) {
            out->ignored++;
        } else if (matches(&l, filter) && !push(out, &l)) {
            return PTXKIT_ERROR_OUT_OF_MEMORY;
        }
        p = nl + 1;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status tune_record_load(const char *path, const tune_record_filter *filter, tune_record *out, char *msg,
                               size_t msg_size) {
    tune_record_clear(out);
    char *text;
    size_t got;
    bool missing;
    ptxkit_status read = tune_read_file(path, TUNE_RECORD_MAX_FILE, &text, &got, &missing, msg, msg_size);
    if (read == PTXKIT_ERROR_CORRUPT) { /* only ever too large: lines are checked one by one */
        size_t used = strlen(msg);
        snprintf(msg + used, msg_size - used, ": not read (delete it to start a new record)");
    }
    if (read != PTXKIT_SUCCESS) return read;
    if (missing) {
        snprintf(msg, msg_size, "no tuning record at %s yet", path);
        return PTXKIT_SUCCESS;
    }
    ptxkit_status s = tune_record_parse_text(text, got, filter, out);
    free(text);
    if (s != PTXKIT_SUCCESS) {
        tune_record_clear(out);
        snprintf(msg, msg_size, "out of host memory reading %s", path);
        return s;
    }
    snprintf(msg, msg_size, "%s: %zu configuration%s%s, %zu damaged line%s ignored", path, out->count,
             out->count == 1 ? "" : "s", filter ? " of this problem" : "", out->ignored, out->ignored == 1 ? "" : "s");
    return PTXKIT_SUCCESS;
}

ptxkit_status tune_record_append(const char *path, const tune_record_line *line, char *msg, size_t msg_size) {
    char text[TUNE_RECORD_MAX_LINE + 1];
    size_t len = tune_record_format(line, text + 1, sizeof text - 1);
    if (!len) {
        snprintf(msg, msg_size, "a configuration of %s too long for a record line: not recorded", line->family);
        return PTXKIT_ERROR_INVALID_ARGUMENT;
    }
    if (!files_make_parent_dirs(path)) {
        snprintf(msg, msg_size, "cannot create the directory of %s: %s", path, strerror(errno));
        return PTXKIT_ERROR_IO;
    }
    /* appended, not replaced: the file is its own lock (a FIFO in its place
     * is refused without blocking the tuner) */
    int fd = files_lock_open(path, O_APPEND);
    if (fd < 0) {
        if (fd == -2) snprintf(msg, msg_size, "%s is not a regular file", path);
        else snprintf(msg, msg_size, "cannot %s %s: %s", fd == -1 ? "open" : "lock", path, strerror(errno));
        return PTXKIT_ERROR_IO;
    }
    /* After a writer died mid-line, start a fresh line: the torn one stays
     * damaged (and ignored) instead of swallowing this one. */
    const char *start = text + 1;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        char last = '\n';
        if (pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
            text[0] = '\n';
            start = text;
            len++;
        }
    }
    bool ok = files_write_all(fd, start, len);
    int err = errno;
    files_unlock_close(fd);
    if (!ok) {
        snprintf(msg, msg_size, "cannot append to %s: %s", path, strerror(err));
        return PTXKIT_ERROR_IO;
    }
    msg[0] = 0;
    return PTXKIT_SUCCESS;
}

const tune_record_line *tune_record_find(const tune_record *r, const tune_problem *pr, size_t n, const tune_point *p) {
    for (size_t i = r->count; i-- > 0;) {
        const tune_record_line *l = &r->lines[i];
        if (l->n != n || l->param_count != pr->param_count) continue;
        bool same = true;
        for (int k = 0; k < pr->param_count && same; k++)
            same = strcmp(l->names[k], pr->names[k]) == 0 && l->values[k] == p->v[k];
        if (same) return l;
    }
    return NULL;
}
