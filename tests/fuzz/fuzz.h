/* Shared by the fuzz harnesses: each defines LLVMFuzzerTestOneInput, run by
 * libFuzzer (clang, the `fuzz` suite) or by replay.c over the committed
 * seeds and regressions (every build, the `cpu` suite). A broken property
 * aborts, which both count as a failure. */
#ifndef PTXKIT_FUZZ_H
#define PTXKIT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                    \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: property broken: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
            abort();                                                             \
        }                                                                        \
    } while (0)

#endif
