/* libFuzzer harness for ptx_rewrite_loads (tests/fuzz/meson.build runs it).
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *       -D_GNU_SOURCE -Iinclude -Isrc tests/fuzz/fuzz_ptx_rewrite.c src/runtime/ptx_rewrite.c \
 *       -o fuzz_ptx_rewrite
 *   ./fuzz_ptx_rewrite -max_len=16384 NEW_CORPUS_DIR tests/ptx_corpus ptx
 *
 * The first byte picks the operator, the rest is the text: libFuzzer hands
 * it over in a buffer of its exact size, without a NUL, so AddressSanitizer
 * sees any read past `size`. Beyond memory errors it checks what holds for
 * every input: success, a NUL after the copy, the size grown by exactly the
 * inserted operators (less any ".weak" dropped for nc), DEFAULT copying
 * byte for byte, the same classification whatever the operator, and a
 * second rewrite with the same operator changing nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ptx_rewrite.h"

#define CHECK(cond)                      \
    do {                                 \
        if (!(cond)) __builtin_trap();   \
    } while (0)

static char *rewrite(const char *text, size_t size, ptxkit_load_op op, size_t *out_size, ptx_rewrite_stats *stats) {
    char *out = NULL, why[128];
    CHECK(ptx_rewrite_loads(text, size, op, &out, out_size, stats, why, sizeof why) == PTXKIT_SUCCESS);
    CHECK(out != NULL && out[*out_size] == 0);
    CHECK(strlen(why) < sizeof why);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    ptxkit_load_op op = (ptxkit_load_op)(data[0] % PTXKIT_LOAD_OP_COUNT);
    const char *text = (const char *)data + 1;
    size_t n = size - 1;

    size_t plain_size, out_size, again_size;
    ptx_rewrite_stats plain, s, again_stats;
    char *copy = rewrite(text, n, PTXKIT_LOAD_DEFAULT, &plain_size, &plain);
    CHECK(plain_size == n && memcmp(copy, text, n) == 0 && plain.rewritten == 0);
    free(copy);

    char *out = rewrite(text, n, op, &out_size, &s);
    CHECK(s.plain == plain.plain && s.kept_operator == plain.kept_operator && s.kept_ordered == plain.kept_ordered &&
          s.unrecognized == plain.unrecognized);
    if (op != PTXKIT_LOAD_DEFAULT) {
        CHECK(s.rewritten == s.plain);
        size_t grown = n + 3 * (size_t)s.rewritten;
        if (op == PTXKIT_LOAD_NC)
            CHECK(out_size <= grown && (grown - out_size) % 5 == 0 && (grown - out_size) / 5 <= (size_t)s.rewritten);
        else
            CHECK(out_size == grown);
    }

    /* the output in an exact-size buffer too */
    char *exact = malloc(out_size ? out_size : 1);
    CHECK(exact != NULL);
    memcpy(exact, out, out_size);
    char *again = rewrite(exact, out_size, op, &again_size, &again_stats);
    CHECK(again_size == out_size && memcmp(again, out, out_size) == 0 && again_stats.rewritten == 0);
    CHECK(again_stats.kept_ordered == s.kept_ordered && again_stats.unrecognized == s.unrecognized);
    if (op != PTXKIT_LOAD_DEFAULT)
        CHECK(again_stats.plain == 0 && again_stats.kept_operator == s.kept_operator + s.rewritten);
    free(again);
    free(exact);
    free(out);
    return 0;
}
