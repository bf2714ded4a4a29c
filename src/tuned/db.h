/* The tuning database: a versioned text file of tuned configurations, keyed
 * by device, driver, NVRTC and library versions, family, variant and size
 * bucket. Pure file handling (no GPU), so its failure modes are tested on any
 * machine.
 *
 * Format (version 1), one record per line, fields separated by tabs:
 *
 *   ptxkit-tune-db 1
 *   # comment lines
 *   entry <TAB> device=NAME <TAB> cc=90 <TAB> sms=132 <TAB> driver=13000 <TAB>
 *         nvrtc=13.0 <TAB> lib=0.1.0 <TAB> family=reduce <TAB>
 *         variant=sum.float32 <TAB> log2n=24 <TAB> block=512 <TAB> items=8 <TAB>
 *         vec=16 <TAB> bpsm=0 <TAB> load=default <TAB> gbs=2650.1 <TAB>
 *         default_gbs=2500.3 <TAB> when=1763850000 [<TAB> p.NAME=VALUE ...]
 *   end <TAB> entries=N <TAB> xxh3_64=<16 hex digits of XXH3_64bits of every byte before this line>
 *
 * gbs and default_gbs are read to two decimals (the writer's precision), in
 * [0, 1e9); when is in [0, TUNE_DB_MAX_WHEN]. Whatever the parser accepts,
 * the writer writes back exactly, and the writer never writes a file its
 * parser refuses (an entry it could not represent is left out).
 *
 * An application's tunable is an entry whose family is its key, variant "-",
 * the five built-in fields 0, and its parameters as p.NAME=VALUE fields.
 *
 * A file whose checksum, counts or fields do not verify is corrupt; a file of
 * another format version is foreign. Either is ignored as a whole (with a
 * message), kept aside as <path>.bad, and replaced on the next write.
 * Writers lock <path>.lock with flock, re-read and merge, then write a
 * temporary file and rename it over the database, so readers see a whole
 * file and concurrent writers lose nothing. */
#ifndef PTXKIT_TUNE_DB_H
#define PTXKIT_TUNE_DB_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "tuned/tuned.h"

#define TUNE_DB_FORMAT 1
#define TUNE_DB_MAX_ENTRIES 20000
/* 9999-12-31 23:59:59 UTC: localtime_r represents every accepted time. */
#define TUNE_DB_MAX_WHEN 253402300799LL

typedef struct tune_db_key {
    char device[128];    /* tabs and control characters become '_' */
    int cc;              /* 90 for 9.0 */
    int sm_count;
    int driver;          /* cuDriverGetVersion, 13000 */
    int nvrtc_major, nvrtc_minor;
    char library[16];    /* "0.1.0" */
} tune_db_key;

#define TUNE_DB_MAX_PARAMS 8
#define TUNE_DB_PARAM_NAME 32

typedef struct tune_db_entry {
    tune_db_key key;
    char family[64];     /* a built-in family, or an application tunable's key */
    char variant[40];
    int bucket;          /* floor(log2 n) */
    tune_config config;  /* built-in families: 0 fields are the op's built-in default */
    /* application tunables: their named parameters ("p.NAME=VALUE" fields) */
    int param_count;
    char param_names[TUNE_DB_MAX_PARAMS][TUNE_DB_PARAM_NAME];
    long long param_values[TUNE_DB_MAX_PARAMS];
    double gbs;          /* the choice, when it was tuned */
    double default_gbs;  /* the built-in defaults, same run */
    long long when;      /* seconds since the epoch */
} tune_db_entry;

/* entries[0..count) may be read directly; change them only through
 * tune_db_put, which keeps the index by slot (key, family, variant, bucket)
 * that makes put and find O(1). */
typedef struct tune_db {
    tune_db_entry *entries;
    size_t count, capacity;
    size_t *slots;       /* open addressing: entry index + 1, 0 empty; NULL: not built */
    size_t slot_count;   /* a power of two, at least twice count */
} tune_db;

void tune_db_init(tune_db *db);
void tune_db_clear(tune_db *db);

/* Builds a key, sanitizing the device name. */
void tune_db_key_make(tune_db_key *key, const char *device, int cc, int sm_count, int driver, int nvrtc_major,
                      int nvrtc_minor, const char *library);
bool tune_db_key_equal(const tune_db_key *a, const tune_db_key *b);

/* Adds e, replacing an entry with the same key, family, variant and bucket.
 * False when out of memory. */
bool tune_db_put(tune_db *db, const tune_db_entry *e);

/* The entry for (key, family, variant) whose bucket is `bucket`, else the
 * nearest within max_distance buckets (the larger on a tie); NULL if none. */
const tune_db_entry *tune_db_find(const tune_db *db, const tune_db_key *key, const char *family, const char *variant,
                                  int bucket, int max_distance);

/* Serializes db (malloc'd, NUL-terminated; *size without the NUL). Values
 * out of the file's range are clamped (gbs to [0, 1e9), NaN to 0, when to
 * [0, TUNE_DB_MAX_WHEN]); an entry the parser would still refuse (a name
 * holding a tab or newline, a field out of range) is left out. */
char *tune_db_format(const tune_db *db, size_t *size);

/* Whether back (given, formatted and parsed back) is given as the database
 * keeps it: every field equal, gbs and default_gbs to two decimals; else
 * why names the first field that differs. */
bool tune_db_entry_kept(const tune_db_entry *given, const tune_db_entry *back, char *why, size_t why_size);

/* Parses a whole file's text into db (cleared first) in O(n): a file of more
 * than TUNE_DB_MAX_ENTRIES entries is corrupt. On failure db is
 * empty, the status is PTXKIT_ERROR_CORRUPT (damaged or not a database) or
 * PTXKIT_ERROR_UNSUPPORTED (another format version), and msg says why. */
ptxkit_status tune_db_parse(const char *text, size_t size, tune_db *db, char *msg, size_t msg_size);

/* Reads the file at path. A missing file is an empty database (SUCCESS,
 * msg says so). Other failures as tune_db_parse, or PTXKIT_ERROR_IO. */
ptxkit_status tune_db_load(const char *path, tune_db *db, char *msg, size_t msg_size);

/* Merges `count` entries into the file at path under its lock (creating
 * directories as needed) and rewrites it atomically. When `merged` is not
 * NULL it receives the file's new content. A corrupt or foreign file is
 * moved to <path>.bad and replaced; msg says so. */
ptxkit_status tune_db_store(const char *path, const tune_db_entry *entries, size_t count, tune_db *merged, char *msg,
                            size_t msg_size);

/* Reads a whole regular file (at most max_bytes) into a malloc'd,
 * NUL-terminated buffer, never blocking on a FIFO. A missing file is
 * SUCCESS with *missing set; anything not a regular file is
 * PTXKIT_ERROR_IO, a larger file PTXKIT_ERROR_CORRUPT; msg says why. Shared
 * by the database and the tuning record. */
ptxkit_status tune_read_file(const char *path, size_t max_bytes, char **text, size_t *size, bool *missing, char *msg,
                             size_t msg_size);

/* The database's path: PTXKIT_TUNE_DB, else <state dir>/tune.db
 * (runtime/cache_dir.h; the first call of a process moves 0.2's files from
 * the cache directory there). False (and an empty path) when neither is
 * available. */
bool tune_db_default_path(char *buf, size_t size);

#endif
