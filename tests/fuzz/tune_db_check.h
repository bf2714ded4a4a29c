/* The round trip both tuning-database harnesses check: a parsed database,
 * formatted and parsed again, holds exactly the same entries (every field,
 * the doubles bit for bit), and formats to the same bytes; and every time
 * it holds is one localtime_r represents (issue 16: --show crashed). */
#ifndef PTXKIT_FUZZ_TUNE_DB_CHECK_H
#define PTXKIT_FUZZ_TUNE_DB_CHECK_H

#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "tuned/db.h"

static void check_round_trip(const tune_db *db) {
    size_t size;
    char *text = tune_db_format(db, &size);
    FUZZ_CHECK(text != NULL, "format failed");
    tune_db back;
    tune_db_init(&back);
    char msg[512];
    ptxkit_status st = tune_db_parse(text, size, &back, msg, sizeof msg);
    FUZZ_CHECK(st == PTXKIT_SUCCESS, "the writer's output is refused: %s\n%s", msg, text);
    FUZZ_CHECK(back.count == db->count, "%zu entries came back of %zu", back.count, db->count);
    for (size_t i = 0; i < db->count; i++) {
        const tune_db_entry *e = &db->entries[i];
        time_t t = (time_t)e->when;
        struct tm tm;
        FUZZ_CHECK(localtime_r(&t, &tm) != NULL, "when=%lld is accepted but `ptxkit tune --show` cannot show it", e->when);
        const tune_db_entry *g = tune_db_find(&back, &e->key, e->family, e->variant, e->bucket, 0);
        FUZZ_CHECK(g != NULL, "entry %zu lost", i);
        FUZZ_CHECK(memcmp(&g->gbs, &e->gbs, sizeof e->gbs) == 0 && memcmp(&g->default_gbs, &e->default_gbs, sizeof e->gbs) == 0,
                   "gbs %.17g -> %.17g, default %.17g -> %.17g", e->gbs, g->gbs, e->default_gbs, g->default_gbs);
        FUZZ_CHECK(g->when == e->when && memcmp(&g->config, &e->config, sizeof e->config) == 0 &&
                       strcmp(g->key.device, e->key.device) == 0 && strcmp(g->key.library, e->key.library) == 0,
                   "entry %zu changed", i);
    }
    size_t size2;
    char *text2 = tune_db_format(&back, &size2);
    FUZZ_CHECK(text2 && size2 == size && memcmp(text, text2, size) == 0, "formatting is not deterministic");
    free(text);
    free(text2);
    tune_db_clear(&back);
}

/* Parses exactly `size` bytes; on success checks the round trip. */
static void parse_and_check(const char *text, size_t size) {
    tune_db db;
    tune_db_init(&db);
    char msg[512] = "";
    ptxkit_status st = tune_db_parse(text, size, &db, msg, sizeof msg);
    if (st == PTXKIT_SUCCESS)
        check_round_trip(&db);
    else
        FUZZ_CHECK(db.count == 0 && msg[0] != 0, "a refusal must say why and leave no entries");
    tune_db_clear(&db);
}

#endif
