/* Time to load a tuning database at its entry cap (BENCHMARKS.md).
 * usage: bench_tune_db [ENTRIES [REPS]]   (default 20000, 21)
 * Writes the database to a temporary file with tune_db_store, then times
 * tune_db_load (read + parse + index) REPS times and prints the median. The
 * entries differ only in their last-compared key field (the driver), the
 * worst case of the former linear scan by slot. CPU only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tuned/db.h"

static double now_ms_here(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    long entries = argc > 1 ? strtol(argv[1], NULL, 10) : TUNE_DB_MAX_ENTRIES;
    long reps = argc > 2 ? strtol(argv[2], NULL, 10) : 21;
    if (entries < 1 || entries > TUNE_DB_MAX_ENTRIES || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: bench_tune_db [ENTRIES (1..%d) [REPS (1..1000)]]\n", TUNE_DB_MAX_ENTRIES);
        return 2;
    }
    tune_db_entry *all = calloc((size_t)entries, sizeof *all);
    if (!all) return 1;
    for (long i = 0; i < entries; i++) {
        tune_db_entry *e = &all[i];
        tune_db_key_make(&e->key, "NVIDIA H100 80GB HBM3", 90, 132, 13000 + (int)i, 13, 0, "0.1.0");
        snprintf(e->family, sizeof e->family, "reduce");
        snprintf(e->variant, sizeof e->variant, "sum.float32");
        e->bucket = 24;
        e->config = (tune_config){.block_size = 512, .items_per_thread = 8, .vector_bytes = 16};
        e->gbs = 2650.1;
        e->default_gbs = 2500.3;
        e->when = 1763850000 + i;
    }
    char path[] = "/tmp/ptxkit-bench-tune-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    unlink(path);
    char msg[640];
    double t0 = now_ms_here();
    if (tune_db_store(path, all, (size_t)entries, NULL, msg, sizeof msg) != PTXKIT_SUCCESS) {
        fprintf(stderr, "store failed: %s\n", msg);
        return 1;
    }
    double store_ms = now_ms_here() - t0;
    double *times = calloc((size_t)reps, sizeof *times);
    tune_db db;
    tune_db_init(&db);
    for (long r = 0; r < reps; r++) {
        t0 = now_ms_here();
        ptxkit_status st = tune_db_load(path, &db, msg, sizeof msg);
        times[r] = now_ms_here() - t0;
        if (st != PTXKIT_SUCCESS || db.count != (size_t)entries) {
            fprintf(stderr, "load failed: %s\n", msg);
            return 1;
        }
    }
    t0 = now_ms_here();
    for (long i = 0; i < entries; i++)
        if (!tune_db_find(&db, &all[i].key, all[i].family, all[i].variant, all[i].bucket, 2)) return 1;
    double find_ms = now_ms_here() - t0;
    qsort(times, (size_t)reps, sizeof *times, compare_double);
    printf("tune_db_load of %ld entries: median %.2f ms, min %.2f ms (%ld runs); store %.1f ms; %ld lookups %.2f ms\n",
           entries, times[reps / 2], times[0], reps, store_ms, entries, find_ms);
    tune_db_clear(&db);
    free(times);
    free(all);
    unlink(path);
    char lock[64];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    return 0;
}
