/* The tuning database's record parser: the input becomes the body of a file
 * whose header, entry count and checksum the harness computes, so that
 * mutations reach the field parser instead of failing the checksum. NUL
 * bytes become tabs (a NUL refuses the whole file before the records). */
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tune_db_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char header[] = "ptxkit-tune-db 1\n";
    size_t head = sizeof header - 1;
    char *text = malloc(head + size + 1 + 80);
    if (!text) return 0;
    memcpy(text, header, head);
    size_t n = head, entries = 0;
    for (size_t i = 0; i < size; i++) text[n++] = data[i] ? (char)data[i] : '\t';
    if (n == head || text[n - 1] != '\n') text[n++] = '\n';
    for (size_t i = head; i < n; i++)
        if ((i == head || text[i - 1] == '\n') && n - i >= 6 && memcmp(text + i, "entry\t", 6) == 0) entries++;
    n += (size_t)snprintf(text + n, 80, "end\tentries=%zu\txxh3_64=%016llx\n", entries,
                          (unsigned long long)XXH3_64bits(text, n));
    char *exact = malloc(n); /* exactly sized: the sanitizers see any overrun */
    if (exact) {
        memcpy(exact, text, n);
        parse_and_check(exact, n);
    }
    free(exact);
    free(text);
    return 0;
}
