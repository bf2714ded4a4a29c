/* The tuning record's reader (src/tune/record.c): the input is a record
 * file's text. Every line the reader keeps must be one the writer could
 * have written: formatting it and parsing that back gives a line that
 * formats to the same text. Kept and ignored lines together never outnumber
 * the lines of the input. */
#include <string.h>

#include "fuzz.h"
#include "tune/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tune_record r;
    tune_record_init(&r);
    if (tune_record_parse_text((const char *)data, size, NULL, &r) != PTXKIT_SUCCESS) {
        FUZZ_CHECK(r.count == 0, "a refused text kept lines");
        tune_record_clear(&r);
        return 0;
    }
    size_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    FUZZ_CHECK(r.count + r.ignored <= lines, "%zu kept and %zu ignored of %zu lines", r.count, r.ignored, lines);
    static char a[2 * TUNE_RECORD_MAX_LINE], b[2 * TUNE_RECORD_MAX_LINE];
    for (size_t i = 0; i < r.count; i++) {
        size_t na = tune_record_format(&r.lines[i], a, sizeof a);
        FUZZ_CHECK(na > 0 && a[na - 1] == '\n', "a kept line does not format");
        tune_record_line again;
        FUZZ_CHECK(tune_record_parse(a, na - 1, &again), "the writer's text of a kept line does not parse");
        size_t nb = tune_record_format(&again, b, sizeof b);
        FUZZ_CHECK(nb == na && memcmp(a, b, na) == 0, "format -> parse -> format changed the line");
    }
    tune_record_clear(&r);
    return 0;
}
