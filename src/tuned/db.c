/* The tuning database file: parse, format, locked atomic rewrite. See db.h
 * for the format. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/cache_dir.h"
#include "runtime/files.h"
#include "tuned/db.h"

#define DB_MAGIC "ptxkit-tune-db "
#define DB_MAX_LINE 2048
#define DB_MAX_FILE (64u << 20)

void tune_db_init(tune_db *db) { memset(db, 0, sizeof *db); }

void tune_db_clear(tune_db *db) {
    free(db->entries);
    free(db->slots);
    memset(db, 0, sizeof *db);
}

static void sanitize(char *dst, size_t size, const char *src) {
    size_t i = 0;
    for (; src && src[i] && i + 1 < size; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = c < 0x20 || c == 0x7f ? '_' : (char)c;
    }
    dst[i] = 0;
}

void tune_db_key_make(tune_db_key *key, const char *device, int cc, int sm_count, int driver, int nvrtc_major,
                      int nvrtc_minor, const char *library) {
    memset(key, 0, sizeof *key);
    sanitize(key->device, sizeof key->device, device ? device : "unknown");
    if (!key->device[0]) snprintf(key->device, sizeof key->device, "unknown");
    key->cc = cc;
    key->sm_count = sm_count;
    key->driver = driver;
    key->nvrtc_major = nvrtc_major;
    key->nvrtc_minor = nvrtc_minor;
    sanitize(key->library, sizeof key->library, library ? library : "");
}

bool tune_db_key_equal(const tune_db_key *a, const tune_db_key *b) {
    return strcmp(a->device, b->device) == 0 && a->cc == b->cc && a->sm_count == b->sm_count && a->driver == b->driver &&
           a->nvrtc_major == b->nvrtc_major && a->nvrtc_minor == b->nvrtc_minor && strcmp(a->library, b->library) == 0;
}

static bool same_slot(const tune_db_entry *a, const tune_db_entry *b) {
    return a->bucket == b->bucket && strcmp(a->family, b->family) == 0 && strcmp(a->variant, b->variant) == 0 &&
           tune_db_key_equal(&a->key, &b->key);
}

/* ---- the index by slot ------------------------------------------------- */

/* A linear scan per put made loading n entries O(n^2): seconds at the
 * 20,000-entry cap, under the process-wide lock. */

static uint64_t slot_hash(const tune_db_entry *e) {
    int numbers[6] = {e->key.cc, e->key.sm_count, e->key.driver, e->key.nvrtc_major, e->key.nvrtc_minor, e->bucket};
    uint64_t h = XXH3_64bits(numbers, sizeof numbers);
    h = XXH3_64bits_withSeed(e->key.device, strlen(e->key.device), h);
    h = XXH3_64bits_withSeed(e->key.library, strlen(e->key.library), h);
    h = XXH3_64bits_withSeed(e->family, strlen(e->family), h);
    return XXH3_64bits_withSeed(e->variant, strlen(e->variant), h);
}

/* The index cell holding e's slot, or the empty cell where it would go. */
static size_t *index_cell(const tune_db *db, const tune_db_entry *e) {
    size_t mask = db->slot_count - 1;
    for (size_t i = (size_t)slot_hash(e) & mask;; i = (i + 1) & mask) {
        size_t *cell = &db->slots[i];
        if (*cell == 0 || same_slot(&db->entries[*cell - 1], e)) return cell;
    }
}

/* Rebuilds the index with room for `room` entries at most half full. */
static bool index_rebuild(tune_db *db, size_t room) {
    size_t n = 64;
    while (n / 2 < room) n *= 2;
    size_t *slots = calloc(n, sizeof *slots);
    if (!slots) return false;
    free(db->slots);
    db->slots = slots;
    db->slot_count = n;
    for (size_t i = 0; i < db->count; i++) {
        size_t *cell = index_cell(db, &db->entries[i]);
        if (*cell == 0) *cell = i + 1; /* a duplicate slot keeps its first entry, as a scan would */
    }
    return true;
}

/* After entries were reordered or cut in place. */
static void index_drop(tune_db *db) {
    free(db->slots);
    db->slots = NULL;
    db->slot_count = 0;
}

static bool reserve(tune_db *db, size_t count) {
    if (count > db->capacity) {
        tune_db_entry *grown = realloc(db->entries, count * sizeof *grown);
        if (!grown) return false;
        db->entries = grown;
        db->capacity = count;
    }
    return db->slots && db->slot_count / 2 >= count ? true : index_rebuild(db, count);
}

bool tune_db_put(tune_db *db, const tune_db_entry *e) {
    if (!db->slots || db->slot_count / 2 < db->count + 1)
        if (!index_rebuild(db, db->count < 32 ? 32 : db->count * 2)) return false;
    size_t *cell = index_cell(db, e);
    if (*cell) {
        db->entries[*cell - 1] = *e;
        return true;
    }
    if (db->count == db->capacity) {
        size_t cap = db->capacity ? db->capacity * 2 : 16;
        tune_db_entry *grown = realloc(db->entries, cap * sizeof *grown);
        if (!grown) return false;
        db->entries = grown;
        db->capacity = cap;
    }
    db->entries[db->count++] = *e;
    *cell = db->count;
    return true;
}

/* Buckets are floor(log2 n) of a size_t: a search wider than this covers
 * them all. */
#define FIND_MAX_DISTANCE 64

const tune_db_entry *tune_db_find(const tune_db *db, const tune_db_key *key, const char *family, const char *variant,
                                  int bucket, int max_distance) {
    if (db->slots && max_distance >= 0 && max_distance <= FIND_MAX_DISTANCE) {
        tune_db_entry probe;
        memset(&probe, 0, sizeof probe);
        if (strlen(family) >= sizeof probe.family || strlen(variant) >= sizeof probe.variant) return NULL;
        probe.key = *key;
        strcpy(probe.family, family);
        strcpy(probe.variant, variant);
        /* nearest first; on a tie the larger bucket */
        for (int d = 0; d <= max_distance; d++)
            for (int side = 0; side < (d ? 2 : 1); side++) {
                long long b = (long long)bucket + (side ? -d : d);
                if (b < INT_MIN || b > INT_MAX) continue;
                probe.bucket = (int)b;
                size_t cell = *index_cell(db, &probe);
                if (cell) return &db->entries[cell - 1];
            }
        return NULL;
    }
    const tune_db_entry *best = NULL;
    long long best_distance = (long long)max_distance + 1;
    for (size_t i = 0; i < db->count; i++) {
        const tune_db_entry *e = &db->entries[i];
        if (strcmp(e->family, family) != 0 || strcmp(e->variant, variant) != 0 || !tune_db_key_equal(&e->key, key))
            continue;
        long long d = llabs((long long)e->bucket - bucket);
        if (d < best_distance || (d == best_distance && best && e->bucket > best->bucket)) {
            best = e;
            best_distance = d;
        }
    }
    return best;
}

/* ---- formatting -------------------------------------------------------- */

typedef struct text_buf {
    char *data;
    size_t size, capacity;
    bool failed;
} text_buf;

static void tb_printf(text_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_printf(text_buf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->data ? b->data + b->size : NULL, b->data ? b->capacity - b->size : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->data && b->size + (size_t)n < b->capacity) {
            b->size += (size_t)n;
            return;
        }
        size_t cap = b->capacity ? b->capacity * 2 : 4096;
        while (cap < b->size + (size_t)n + 1) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->capacity = cap;
    }
}

static int entry_order(const void *pa, const void *pb) {
    const tune_db_entry *a = *(const tune_db_entry *const *)pa, *b = *(const tune_db_entry *const *)pb;
    int c;
    if ((c = strcmp(a->key.device, b->key.device))) return c;
    if (a->key.cc != b->key.cc) return a->key.cc < b->key.cc ? -1 : 1;
    if (a->key.sm_count != b->key.sm_count) return a->key.sm_count < b->key.sm_count ? -1 : 1;
    if (a->key.driver != b->key.driver) return a->key.driver < b->key.driver ? -1 : 1;
    if (a->key.nvrtc_major != b->key.nvrtc_major) return a->key.nvrtc_major < b->key.nvrtc_major ? -1 : 1;
    if (a->key.nvrtc_minor != b->key.nvrtc_minor) return a->key.nvrtc_minor < b->key.nvrtc_minor ? -1 : 1;
    if ((c = strcmp(a->key.library, b->key.library))) return c;
    if ((c = strcmp(a->family, b->family))) return c;
    if ((c = strcmp(a->variant, b->variant))) return c;
    return (a->bucket > b->bucket) - (a->bucket < b->bucket);
}

static bool parse_entry(char *line, tune_db_entry *e, char *why, size_t why_size);

/* The file keeps GB/s to two decimals, below 1e9. The parser rounds what it
 * reads to the same two decimals, so parse -> format -> parse is the
 * identity (a value of more decimals, such as 999999999.995, once parsed as
 * itself and came back as 1000000000.00, which the parser refused). */
#define DB_GBS_LIMIT 1e9

static double gbs_two_decimals(double v) {
    v = round(v * 100) / 100;
    return v == 0 ? 0 : v; /* no -0.00 */
}

static double gbs_for_file(double v) {
    if (!(v >= 0)) return 0; /* NaN, negative */
    v = gbs_two_decimals(v);
    return v < DB_GBS_LIMIT ? v : 999999999.99;
}

static long long when_for_file(long long when) {
    return when < 0 ? 0 : when > TUNE_DB_MAX_WHEN ? TUNE_DB_MAX_WHEN : when;
}

/* The entry's line (with its newline) in line[], when the parser reads it
 * back as the same entry; false for an entry the file cannot hold. */
static bool entry_line(const tune_db_entry *e, char *line, size_t size) {
    const char *load = ptxkit_load_op_name(e->config.load_op);
    int n = snprintf(line, size,
                     "entry\tdevice=%s\tcc=%d\tsms=%d\tdriver=%d\tnvrtc=%d.%d\tlib=%s\tfamily=%s\tvariant=%s\tlog2n=%d"
                     "\tblock=%d\titems=%d\tvec=%d\tbpsm=%d\tload=%s\tgbs=%.2f\tdefault_gbs=%.2f\twhen=%lld",
                     e->key.device, e->key.cc, e->key.sm_count, e->key.driver, e->key.nvrtc_major, e->key.nvrtc_minor,
                     e->key.library, e->family, e->variant, e->bucket, e->config.block_size, e->config.items_per_thread,
                     e->config.vector_bytes, e->config.blocks_per_sm, load ? load : "default", gbs_for_file(e->gbs),
                     gbs_for_file(e->default_gbs), when_for_file(e->when));
    /* an application tunable's named parameters */
    for (int p = 0; n > 0 && (size_t)n < size && p < e->param_count && p < TUNE_DB_MAX_PARAMS; p++)
        n += snprintf(line + n, size - (size_t)n, "\tp.%s=%lld", e->param_names[p], e->param_values[p]);
    if (n > 0 && (size_t)n < size) n += snprintf(line + n, size - (size_t)n, "\n");
    if (n <= 0 || (size_t)n >= size || (size_t)n > DB_MAX_LINE || strchr(line, '\n') != line + n - 1) return false;
    char copy[DB_MAX_LINE + 1], why[128];
    memcpy(copy, line, (size_t)n - 1);
    copy[n - 1] = 0;
    tune_db_entry back;
    return parse_entry(copy, &back, why, sizeof why) && same_slot(&back, e) && back.param_count == e->param_count;
}

char *tune_db_format(const tune_db *db, size_t *size) {
    text_buf b = {0};
    const tune_db_entry **order = malloc((db->count ? db->count : 1) * sizeof *order);
    if (!order) return NULL;
    for (size_t i = 0; i < db->count; i++) order[i] = &db->entries[i];
    qsort(order, db->count, sizeof *order, entry_order);
    tb_printf(&b, "%s%d\n", DB_MAGIC, TUNE_DB_FORMAT);
    tb_printf(&b, "# ptxkit tuning database (`ptxkit tune --show` lists it). Written by ptxkit %s;\n"
                  "# the last line's checksum covers everything above it: edits make the file ignored.\n",
              PTXKIT_VERSION_STRING);
    size_t written = 0;
    const tune_db_entry *previous = NULL;
    for (size_t i = 0; i < db->count; i++) {
        char line[DB_MAX_LINE + 2];
        /* a repeated slot would read back as one entry and fail the count */
        if ((previous && same_slot(previous, order[i])) || !entry_line(order[i], line, sizeof line)) continue;
        tb_printf(&b, "%s", line);
        previous = order[i];
        written++;
    }
    free(order);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    unsigned long long sum = (unsigned long long)XXH3_64bits(b.data, b.size);
    tb_printf(&b, "end\tentries=%zu\txxh3_64=%016llx\n", written, sum);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    *size = b.size;
    return b.data;
}

bool tune_db_entry_kept(const tune_db_entry *given, const tune_db_entry *back, char *why, size_t why_size) {
    const char *field = NULL;
    if (!tune_db_key_equal(&given->key, &back->key)) field = "key (device to library)";
    else if (strcmp(given->family, back->family) != 0) field = "family";
    else if (strcmp(given->variant, back->variant) != 0) field = "variant";
    else if (given->bucket != back->bucket) field = "log2n";
    else if (given->config.block_size != back->config.block_size) field = "block_size";
    else if (given->config.items_per_thread != back->config.items_per_thread) field = "items_per_thread";
    else if (given->config.vector_bytes != back->config.vector_bytes) field = "vector_bytes";
    else if (given->config.blocks_per_sm != back->config.blocks_per_sm) field = "blocks_per_sm";
    else if (given->config.load_op != back->config.load_op) field = "load_op";
    else if (given->param_count != back->param_count) field = "param_count";
    /* GB/s are kept to two decimals (documented), nothing else is rounded */
    else if (!(gbs_two_decimals(given->gbs) == back->gbs)) field = "gbs";
    else if (!(gbs_two_decimals(given->default_gbs) == back->default_gbs)) field = "default_gbs";
    else if (given->when != back->when) field = "when";
    for (int i = 0; !field && i < given->param_count && i < TUNE_DB_MAX_PARAMS; i++)
        if (strcmp(given->param_names[i], back->param_names[i]) != 0 || given->param_values[i] != back->param_values[i])
            field = "a parameter";
    if (field) snprintf(why, why_size, "its %s is out of the database's range", field);
    return !field;
}

/* ---- parsing ----------------------------------------------------------- */

static bool parse_int(const char *s, long long lo, long long hi, int *out) {
    if (!*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

/* GB/s: read to the writer's two decimals (see gbs_for_file). */
static bool parse_gbs(const char *s, double *out) {
    if (!*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= 0 && v < DB_GBS_LIMIT)) return false;
    v = gbs_two_decimals(v);
    if (!(v < DB_GBS_LIMIT)) return false;
    *out = v;
    return true;
}

static bool name_ok(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
              *s == '_' || *s == '-'))
            return false;
    return true;
}

static bool copy_field(char *dst, size_t size, const char *value) {
    if (strlen(value) >= size) return false;
    strcpy(dst, value);
    return true;
}

/* The next tab-separated field at *cursor, NUL-terminated in place (empty
 * fields skipped, as strtok would); *eq: its first '=', or NULL. One pass
 * over the line, which the load at the entry cap notices. */
static char *next_field(char **cursor, char **eq) {
    char *p = *cursor;
    while (*p == '\t') p++;
    if (!*p) return NULL;
    char *field = p;
    *eq = NULL;
    for (; *p && *p != '\t'; p++)
        if (*p == '=' && !*eq) *eq = p;
    if (*p) *p++ = 0;
    *cursor = p;
    return field;
}

/* One "entry" line (without its newline, NUL-terminated and writable). */
static bool parse_entry(char *line, tune_db_entry *e, char *why, size_t why_size) {
    memset(e, 0, sizeof *e);
    enum { F_DEVICE, F_CC, F_SMS, F_DRIVER, F_NVRTC, F_LIB, F_FAMILY, F_VARIANT, F_LOG2N, F_BLOCK, F_ITEMS, F_VEC,
           F_BPSM, F_LOAD, F_GBS, F_DEFAULT_GBS, F_WHEN, F_COUNT };
    static const char *const names[F_COUNT] = {"device", "cc",    "sms",   "driver", "nvrtc", "lib",
                                               "family", "variant", "log2n", "block", "items", "vec",
                                               "bpsm",   "load",  "gbs",   "default_gbs", "when"};
    bool seen[F_COUNT] = {0};
    int expected = 0;
    char *cursor = line, *eq;
    char *field = next_field(&cursor, &eq);
    if (!field || strcmp(field, "entry") != 0) {
        snprintf(why, why_size, "a line is not an entry");
        return false;
    }
    while ((field = next_field(&cursor, &eq)) != NULL) {
        if (!eq) {
            snprintf(why, why_size, "field '%.40s' has no value", field);
            return false;
        }
        *eq = 0;
        const char *value = eq + 1;
        /* the writer's order first: one comparison per field at load */
        int f = expected < F_COUNT && strcmp(field, names[expected]) == 0 ? expected : -1;
        for (int i = 0; f < 0 && i < F_COUNT; i++)
            if (strcmp(field, names[i]) == 0) f = i;
        if (f < 0 && strncmp(field, "p.", 2) == 0) {
            /* a tunable's parameter: a C identifier and an integer */
            const char *pname = field + 2;
            bool ident = *pname && !(*pname >= '0' && *pname <= '9');
            for (const char *c = pname; ident && *c; c++)
                ident = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_';
            char *end;
            errno = 0;
            long long v = strtoll(value, &end, 10);
            bool dup = false;
            for (int i = 0; i < e->param_count; i++) dup = dup || strcmp(e->param_names[i], pname) == 0;
            if (!ident || strlen(pname) >= TUNE_DB_PARAM_NAME || !*value || *end || errno || dup ||
                e->param_count == TUNE_DB_MAX_PARAMS) {
                snprintf(why, why_size, "parameter field '%.40s' is bad, repeated or one too many", field);
                return false;
            }
            strcpy(e->param_names[e->param_count], pname);
            e->param_values[e->param_count++] = v;
            continue;
        }
        if (f < 0) continue; /* a field added later in this format version */
        expected = f + 1;
        if (seen[f]) {
            snprintf(why, why_size, "field '%s' appears twice", names[f]);
            return false;
        }
        seen[f] = true;
        bool ok = true;
        int x = 0;
        switch (f) {
        case F_DEVICE: ok = copy_field(e->key.device, sizeof e->key.device, value) && *value; break;
        case F_CC: ok = parse_int(value, 0, 10000, &e->key.cc); break;
        case F_SMS: ok = parse_int(value, 0, 1 << 20, &e->key.sm_count); break;
        case F_DRIVER: ok = parse_int(value, 0, 1 << 30, &e->key.driver); break;
        case F_NVRTC: {
            char major[16], minor[16];
            const char *dot = strchr(value, '.');
            ok = dot && (size_t)(dot - value) < sizeof major && strlen(dot + 1) < sizeof minor;
            if (ok) {
                memcpy(major, value, (size_t)(dot - value));
                major[dot - value] = 0;
                strcpy(minor, dot + 1);
                ok = parse_int(major, 0, 1000, &e->key.nvrtc_major) && parse_int(minor, 0, 1000, &e->key.nvrtc_minor);
            }
            break;
        }
        case F_LIB: ok = copy_field(e->key.library, sizeof e->key.library, value) && name_ok(value); break;
        case F_FAMILY: ok = copy_field(e->family, sizeof e->family, value) && name_ok(value); break;
        case F_VARIANT: ok = copy_field(e->variant, sizeof e->variant, value) && name_ok(value); break;
        case F_LOG2N: ok = parse_int(value, 0, 63, &e->bucket); break;
        case F_BLOCK:
            ok = parse_int(value, 0, 1024, &x) && (x == 0 || (x >= 32 && (x & (x - 1)) == 0));
            e->config.block_size = x;
            break;
        case F_ITEMS: ok = parse_int(value, 0, 64, &e->config.items_per_thread); break;
        case F_VEC:
            ok = parse_int(value, 0, 16, &x) && (x == 0 || x == 4 || x == 8 || x == 16);
            e->config.vector_bytes = x;
            break;
        case F_BPSM: ok = parse_int(value, 0, 64, &e->config.blocks_per_sm); break;
        case F_LOAD:
            ok = false;
            for (int i = 0; i < PTXKIT_LOAD_OP_COUNT && !ok; i++) {
                const char *n = ptxkit_load_op_name((ptxkit_load_op)i);
                if (n && strcmp(n, value) == 0) {
                    e->config.load_op = (ptxkit_load_op)i;
                    ok = true;
                }
            }
            break;
        case F_GBS: ok = parse_gbs(value, &e->gbs); break;
        case F_DEFAULT_GBS: ok = parse_gbs(value, &e->default_gbs); break;
        case F_WHEN: {
            /* bounded: a larger time made localtime_r return NULL in --show */
            char *end;
            errno = 0;
            e->when = strtoll(value, &end, 10);
            ok = *value && !*end && !errno && e->when >= 0 && e->when <= TUNE_DB_MAX_WHEN;
            break;
        }
        }
        if (!ok) {
            snprintf(why, why_size, "field %s has a bad value '%.40s'", names[f], value);
            return false;
        }
    }
    for (int i = 0; i < F_COUNT; i++)
        if (!seen[i]) {
            snprintf(why, why_size, "an entry lacks its %s field", names[i]);
            return false;
        }
    return true;
}

ptxkit_status tune_db_parse(const char *text, size_t size, tune_db *db, char *msg, size_t msg_size) {
    tune_db_clear(db);
    char why[256] = "";
    ptxkit_status st = PTXKIT_ERROR_CORRUPT;
    size_t magic_len = strlen(DB_MAGIC);
    const char *first_nl = memchr(text, '\n', size);
    if (size < magic_len || memcmp(text, DB_MAGIC, magic_len) != 0 || !first_nl) {
        snprintf(msg, msg_size, "not a ptxkit tuning database (%s)",
                 size == 0 ? "empty file" : size < magic_len || memcmp(text, DB_MAGIC, magic_len) ? "no header line"
                                                                                                 : "truncated header");
        return PTXKIT_ERROR_CORRUPT;
    }
    char header[64];
    size_t header_len = (size_t)(first_nl - text) - magic_len;
    int version = -1;
    if (header_len < sizeof header) {
        memcpy(header, text + magic_len, header_len);
        header[header_len] = 0;
        if (!parse_int(header, 0, 1 << 20, &version)) version = -1;
    }
    if (version < 0) {
        snprintf(msg, msg_size, "unreadable format version in the header line");
        return PTXKIT_ERROR_CORRUPT;
    }
    if (version != TUNE_DB_FORMAT) {
        snprintf(msg, msg_size, "format version %d (this ptxkit %s reads version %d)", version, PTXKIT_VERSION_STRING,
                 TUNE_DB_FORMAT);
        return PTXKIT_ERROR_UNSUPPORTED;
    }
    if (memchr(text, 0, size)) {
        snprintf(msg, msg_size, "NUL bytes in a text file");
        return PTXKIT_ERROR_CORRUPT;
    }
    /* The trailer: last line, which must end with a newline. */
    if (text[size - 1] != '\n') {
        snprintf(msg, msg_size, "truncated (no final line)");
        return PTXKIT_ERROR_CORRUPT;
    }
    size_t trailer = size - 1;
    while (trailer > 0 && text[trailer - 1] != '\n') trailer--;
    char last[256];
    size_t last_len = size - 1 - trailer;
    unsigned long long sum = 0;
    size_t declared = 0;
    int used = 0;
    if (trailer <= (size_t)(first_nl - text) || last_len >= sizeof last) {
        snprintf(msg, msg_size, "truncated (no end line)");
        return PTXKIT_ERROR_CORRUPT;
    }
    memcpy(last, text + trailer, last_len);
    last[last_len] = 0;
    if (sscanf(last, "end\tentries=%zu\txxh3_64=%16llx%n", &declared, &sum, &used) != 2 || (size_t)used != last_len) {
        snprintf(msg, msg_size, "truncated or damaged (bad end line)");
        return PTXKIT_ERROR_CORRUPT;
    }
    if ((unsigned long long)XXH3_64bits(text, trailer) != sum) {
        snprintf(msg, msg_size, "checksum mismatch (damaged or edited)");
        return PTXKIT_ERROR_CORRUPT;
    }
    if (declared > TUNE_DB_MAX_ENTRIES) {
        snprintf(msg, msg_size, "declares %zu entries, more than the %d a database holds", declared, TUNE_DB_MAX_ENTRIES);
        return PTXKIT_ERROR_CORRUPT;
    }
    if (declared && !reserve(db, declared)) {
        snprintf(msg, msg_size, "out of host memory");
        return PTXKIT_ERROR_OUT_OF_MEMORY;
    }
    /* Records. */
    const char *p = first_nl + 1, *end = text + trailer;
    char line[DB_MAX_LINE];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)(nl - p); /* the trailer guarantees a newline before end */
        if (len >= sizeof line) {
            snprintf(why, sizeof why, "a line of %zu bytes is too long", len);
            goto bad;
        }
        memcpy(line, p, len);
        line[len] = 0;
        p = nl + 1;
        if (len == 0 || line[0] == '#') continue;
        tune_db_entry e;
        if (!parse_entry(line, &e, why, sizeof why)) goto bad;
        if (db->count >= declared) { /* also keeps the count within the cap */
            snprintf(why, sizeof why, "more entries than the end line declares (%zu)", declared);
            goto bad;
        }
        if (!tune_db_put(db, &e)) {
            st = PTXKIT_ERROR_OUT_OF_MEMORY;
            snprintf(why, sizeof why, "out of host memory");
            goto bad;
        }
    }
    if (db->count != declared) {
        snprintf(why, sizeof why, "%zu entries where the end line declares %zu", db->count, declared);
        goto bad;
    }
    snprintf(msg, msg_size, "%zu entr%s", db->count, db->count == 1 ? "y" : "ies");
    return PTXKIT_SUCCESS;
bad:
    tune_db_clear(db);
    snprintf(msg, msg_size, "%s", why);
    return st;
}

/* ---- files ------------------------------------------------------------- */

/* The message and status of a read that did not return text; SUCCESS with
 * *missing for a missing file. A FIFO, socket, device or directory is an
 * I/O error, not a corrupt database, so a store leaves it where it is
 * instead of renaming it. */
static ptxkit_status read_status(const char *path, files_read_status read, int err, size_t max_bytes, bool *missing,
                                 char *msg, size_t msg_size) {
    *missing = false;
    switch (read) {
    case FILES_READ_OK: return PTXKIT_SUCCESS;
    case FILES_READ_MISSING: *missing = true; return PTXKIT_SUCCESS;
    case FILES_READ_NOT_REGULAR: snprintf(msg, msg_size, "%s is not a regular file", path); return PTXKIT_ERROR_IO;
    case FILES_READ_TOO_LARGE:
        snprintf(msg, msg_size, "%s is larger than %zu MiB", path, max_bytes >> 20);
        return PTXKIT_ERROR_CORRUPT;
    case FILES_READ_NO_MEMORY: snprintf(msg, msg_size, "out of host memory reading %s", path); return PTXKIT_ERROR_OUT_OF_MEMORY;
    case FILES_READ_ERROR: break;
    }
    snprintf(msg, msg_size, "cannot read %s: %s", path, strerror(err));
    return PTXKIT_ERROR_IO;
}

ptxkit_status tune_read_file(const char *path, size_t max_bytes, char **text, size_t *size, bool *missing, char *msg,
                             size_t msg_size) {
    int err;
    files_read_status read = files_read_regular(path, true, max_bytes, text, size, &err);
    return read_status(path, read, err, max_bytes, missing, msg, msg_size);
}

/* The database in text as read from path (read: how the read went). */
static ptxkit_status load_text(const char *path, files_read_status read, int err, const char *text, size_t size,
                               tune_db *db, char *msg, size_t msg_size) {
    tune_db_clear(db);
    bool missing;
    ptxkit_status st = read_status(path, read, err, DB_MAX_FILE, &missing, msg, msg_size);
    if (st != PTXKIT_SUCCESS) return st;
    if (missing) {
        snprintf(msg, msg_size, "no tuning database at %s yet", path);
        return PTXKIT_SUCCESS;
    }
    char why[320];
    st = tune_db_parse(text, size, db, why, sizeof why);
    if (st == PTXKIT_SUCCESS)
        snprintf(msg, msg_size, "%s: %s", path, why);
    else
        snprintf(msg, msg_size, "tuning database %s ignored: %s", path, why);
    return st;
}

ptxkit_status tune_db_load(const char *path, tune_db *db, char *msg, size_t msg_size) {
    char *text;
    size_t size;
    int err;
    files_read_status read = files_read_regular(path, true, DB_MAX_FILE, &text, &size, &err);
    ptxkit_status st = load_text(path, read, err, text, size, db, msg, msg_size);
    free(text);
    return st;
}

static int newest_first(const void *pa, const void *pb) {
    const tune_db_entry *a = pa, *b = pb;
    return (a->when < b->when) - (a->when > b->when);
}

/* tune_db_store's merge, run by files_locked_replace under the lock. */
typedef struct store_merge {
    const char *path;
    const tune_db_entry *entries;
    size_t count;
    tune_db current;
    ptxkit_status status;
    char *msg;
    size_t msg_size;
} store_merge;

static int merge_entries(void *context, files_read_status read, int read_err, const char *text, size_t size,
                         char **out, size_t *out_size) {
    store_merge *m = context;
    char load_msg[512];
    ptxkit_status st = load_text(m->path, read, read_err, text, size, &m->current, load_msg, sizeof load_msg);
    if (st == PTXKIT_ERROR_CORRUPT || st == PTXKIT_ERROR_UNSUPPORTED) {
        char bad_path[4200];
        snprintf(bad_path, sizeof bad_path, "%s.bad", m->path);
        rename(m->path, bad_path); /* keep it for a look; replaced by the write */
        snprintf(m->msg, m->msg_size, "%s; kept as %s and rewritten", load_msg, bad_path);
    } else if (st != PTXKIT_SUCCESS) {
        snprintf(m->msg, m->msg_size, "%s", load_msg);
        m->status = st;
        return 1;
    }
    for (size_t i = 0; i < m->count; i++)
        if (!tune_db_put(&m->current, &m->entries[i])) {
            m->status = PTXKIT_ERROR_OUT_OF_MEMORY;
            snprintf(m->msg, m->msg_size, "out of host memory");
            return 1;
        }
    if (m->current.count > TUNE_DB_MAX_ENTRIES) {
        qsort(m->current.entries, m->current.count, sizeof *m->current.entries, newest_first);
        m->current.count = TUNE_DB_MAX_ENTRIES;
        index_drop(&m->current);
    }
    if ((*out = tune_db_format(&m->current, out_size)) == NULL) {
        m->status = PTXKIT_ERROR_OUT_OF_MEMORY;
        snprintf(m->msg, m->msg_size, "out of host memory");
        return 1;
    }
    return 0;
}

ptxkit_status tune_db_store(const char *path, const tune_db_entry *entries, size_t count, tune_db *merged, char *msg,
                            size_t msg_size) {
    msg[0] = 0;
    if (!path || !*path || (entries == NULL && count > 0)) {
        snprintf(msg, msg_size, "no database path");
        return PTXKIT_ERROR_INVALID_ARGUMENT;
    }
    if (!files_make_parent_dirs(path)) {
        snprintf(msg, msg_size, "cannot create the directory of %s: %s", path, strerror(errno));
        return PTXKIT_ERROR_IO;
    }
    store_merge m = {.path = path, .entries = entries, .count = count, .status = PTXKIT_SUCCESS, .msg = msg,
                     .msg_size = msg_size};
    tune_db_init(&m.current);
    int err;
    int result = files_locked_replace(path, DB_MAX_FILE, true, merge_entries, &m, &err);
    ptxkit_status st = m.status;
    switch (result) {
    case FILES_REPLACED:
        if (merged) {
            tune_db_clear(merged);
            *merged = m.current;
            tune_db_init(&m.current);
        }
        break;
    case FILES_PATH_TOO_LONG: snprintf(msg, msg_size, "database path too long"); st = PTXKIT_ERROR_INVALID_ARGUMENT; break;
    case FILES_LOCK_OPEN_FAILED: snprintf(msg, msg_size, "cannot open %s.lock: %s", path, strerror(err)); st = PTXKIT_ERROR_IO; break;
    case FILES_LOCK_NOT_REGULAR: snprintf(msg, msg_size, "%s.lock is not a regular file", path); st = PTXKIT_ERROR_IO; break;
    case FILES_LOCK_FAILED: snprintf(msg, msg_size, "cannot lock %s.lock: %s", path, strerror(err)); st = PTXKIT_ERROR_IO; break;
    case FILES_WRITE_FAILED: snprintf(msg, msg_size, "cannot write %s: %s", path, strerror(err)); st = PTXKIT_ERROR_IO; break;
    default: break; /* the merge's own failure: status and message set */
    }
    tune_db_clear(&m.current);
    return st;
}

/* Tuning data are state: 0.2 kept them in the cache directory, where a
 * purge or PTXKIT_CACHE=off took them too. The first default-path lookup of
 * a process moves the database and its record from there into the state
 * directory, where the state directory has none yet (a failed move leaves
 * the old files, and the defaults are used). */
static void move_from_cache_dir(void) {
    char from_dir[4096], to_dir[4096];
    if (!cache_dir_configured(from_dir, sizeof from_dir) || !state_dir_configured(to_dir, sizeof to_dir) ||
        strcmp(from_dir, to_dir) == 0)
        return;
    static const char *const names[] = {"tune.db", "tune.record.jsonl"};
    bool made = false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char from[4200], to[4200];
        snprintf(from, sizeof from, "%s/%s", from_dir, names[i]);
        snprintf(to, sizeof to, "%s/%s", to_dir, names[i]);
        if (!files_is_regular(from)) continue;
        if (!made && !(made = files_make_dirs(to_dir))) return;
        files_move(from, to, (size_t)256 << 20); /* the larger of the two files' read limits */
    }
}

bool tune_db_default_path(char *buf, size_t size) {
    buf[0] = 0;
    const char *env = getenv("PTXKIT_TUNE_DB");
    if (env && *env) return (size_t)snprintf(buf, size, "%s", env) < size;
    static pthread_once_t moved = PTHREAD_ONCE_INIT;
    pthread_once(&moved, move_from_cache_dir);
    char dir[4096];
    if (!state_dir_configured(dir, sizeof dir)) return false;
    if ((size_t)snprintf(buf, size, "%s/tune.db", dir) >= size) {
        buf[0] = 0;
        return false;
    }
    return true;
}
