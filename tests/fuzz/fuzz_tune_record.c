/* The tuning record's reader (src/tune/record.c). The first input byte is a
 * mode; the rest is a record file's text. Mode bit 0: the harness first
 * recomputes each line's checksum (a line ending in ,"xxh3":"<16 chars>"}
 * gets the right digits), so mutations reach the field parser instead of
 * stopping at the checksum.
 *
 * Properties: the reader keeps exactly the text its writer writes: every
 * line it reads is, byte for byte, what tune_record_format writes for the
 * values read (so parse -> format -> parse is the identity too); kept and
 * ignored lines never outnumber the input's lines; tune_record_parse_text
 * keeps the lines tune_record_parse reads, in order. */
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz.h"
#include "tune/record.h"

#define CHECKSUM_FIELD ",\"xxh3\":\""

static void reseal(char *line, size_t len) {
    size_t field = strlen(CHECKSUM_FIELD);
    if (len < field + 18 || memcmp(line + len - 2, "\"}", 2) != 0) return;
    size_t at = len - 18 - field;
    if (memcmp(line + at, CHECKSUM_FIELD, field) != 0) return;
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)XXH3_64bits(line, at));
    memcpy(line + len - 18, hex, 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    unsigned mode = data[0];
    size--;
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    memcpy(text, data + 1, size);
    if (mode & 1)
        for (char *p = text, *end = text + size; p < end;) {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) break;
            reseal(p, (size_t)(nl - p));
            p = nl + 1;
        }
    tune_record r;
    tune_record_init(&r);
    if (tune_record_parse_text(text, size, NULL, &r) != PTXKIT_SUCCESS) {
        FUZZ_CHECK(r.count == 0, "a refused text kept lines");
        tune_record_clear(&r);
        free(text);
        return 0;
    }
    size_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += text[i] == '\n';
    FUZZ_CHECK(r.count + r.ignored <= lines, "%zu kept and %zu ignored of %zu lines", r.count, r.ignored, lines);
    static char a[2 * TUNE_RECORD_MAX_LINE];
    size_t kept = 0;
    for (char *p = text, *end = text + size; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        size_t len = (size_t)(nl - p);
        tune_record_line l;
        if (len && tune_record_parse(p, len, &l)) {
            size_t na = tune_record_format(&l, a, sizeof a);
            FUZZ_CHECK(na == len + 1 && memcmp(a, p, len) == 0,
                       "a line read is not what the writer writes for its values:\n%.*s\nwriter:\n%.*s", (int)len, p,
                       (int)na, a);
            static char b[2 * TUNE_RECORD_MAX_LINE];
            FUZZ_CHECK(kept < r.count && tune_record_format(&r.lines[kept], b, sizeof b) == na && memcmp(a, b, na) == 0,
                       "parse_text and parse disagree on line %zu", kept);
            kept++;
        }
        p = nl + 1;
    }
    FUZZ_CHECK(kept == r.count, "parse_text kept %zu lines, parse reads %zu", r.count, kept);
    tune_record_clear(&r);
    free(text);
    return 0;
}
