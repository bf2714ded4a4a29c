/* Helpers shared by the test suites (cmocka). */
#ifndef PTXKIT_TEST_UTIL_H
#define PTXKIT_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "ptxkit.h"
#include "test_values.h"
#include "runtime/launch.h"

/* Exit code meson reads as "skipped". */
#define TEST_SKIP_EXIT 77

/* The shared GPU context of a GPU suite: opens device 0 on first use, or
 * exits 77 (skipped) when there is no driver or GPU, saying why. */
ptxkit_context *test_gpu(void);

/* Runs this test binary again as a child with one argument `flag` (a fault
 * or a fresh process must not touch the suite's own context) and fails the
 * test unless the child exits 0; its stderr says why it did not. */
void test_run_child(const char *flag);
/* A context that never reaches the driver (cc 0, 132 SMs, 1024 threads per
 * block): enough for checks that fail before any driver call and for the
 * answers that read only the device description. */
ptxkit_context *test_fake_context(void);
/* Call at the top of a GPU suite's main() so the skip happens before cmocka
 * starts counting tests. */
void test_require_gpu(void);
void test_gpu_release(void);

/* Fresh random inputs each run; the seed is printed so a failure can be
 * replayed with PTXKIT_TEST_SEED. */
/* The whole file, NUL-terminated (size without the NUL); NULL if unreadable. */
char *test_read_file(const char *path, size_t *size);
/* Writes size bytes to path (created or truncated); false on any failure. */
bool test_write_file(const char *path, const void *data, size_t size);

uint64_t test_seed(void);
uint64_t test_rand(uint64_t *state);
void test_fill_random(void *buf, size_t bytes, uint64_t *state);

/* Fails the test with the library's detailed message (the thread's last
 * error) when call fails. ctx only names, at the call site, the context
 * the call is on. */
#define assert_ok(ctx, call)                                                     \
    do {                                                                         \
        (void)(ctx);                                                             \
        ptxkit_status assert_ok_st_ = (call);                                    \
        if (assert_ok_st_ != PTXKIT_SUCCESS)                                     \
            fail_msg("%s -> %s: %s", #call, ptxkit_status_string(assert_ok_st_), \
                     ptxkit_last_error());                                       \
    } while (0)

#define assert_status(expected, call) assert_int_equal((int)(expected), (int)(call))

/* Sizes every kernel test covers: 0, 1, primes, 2^k - 1, 2^k + 1, large. */
extern const size_t test_awkward_sizes[];
extern const size_t test_awkward_size_count;

/* The GPU tests keep the fields an op resolves a configuration to
 * (launch_options, runtime/launch.h) and hand each public op the
 * ptxkit_config of the same values, under that op's names (reduce:
 * items_per_thread is "loads_in_flight", scan: "vectors_per_thread", copy:
 * "unroll"). Returns buf, filled. */
const ptxkit_config *test_reduce_config(const launch_options *o, ptxkit_config *buf);
const ptxkit_config *test_scan_config(const launch_options *o, ptxkit_config *buf);
const ptxkit_config *test_copy_config(const launch_options *o, ptxkit_config *buf);
#define REDUCE_CONFIG(o) test_reduce_config((o), &(ptxkit_config){0})
#define SCAN_CONFIG(o) test_scan_config((o), &(ptxkit_config){0})
#define COPY_CONFIG(o) test_copy_config((o), &(ptxkit_config){0})


#endif
