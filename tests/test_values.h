/* CPU references of reductions and scans: one element of any ptxkit_dtype,
 * its operators' identities and how the device combines two (test_util.c).
 * Free of cmocka, for the tests with their own harness (test_gpu_multi). */
#ifndef PTXKIT_TEST_VALUES_H
#define PTXKIT_TEST_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "ptxkit.h"
#include "ptxkit_ops.h"

/* One element of any ptxkit_dtype in an 8-byte slot, for the CPU
 * references of reductions and scans (host arrays, several GPUs). */
typedef union test_value {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    unsigned char bytes[8];
} test_value;
/* Element i of an array of type t (the slot's other bytes zero). */
test_value test_value_load(ptxkit_dtype t, const void *base, size_t i);
/* The identity of op for t: 0, all ones for AND, the extremes (infinities
 * for floats) for MIN and MAX. */
test_value test_value_identity(ptxkit_reduce_op op, ptxkit_dtype t);
/* a op b as the device combines: integer sums wrap modulo 2^w, float min
 * and max are fminf/fmaxf (fmin/fmax), float sums plain. */
test_value test_value_combine(ptxkit_reduce_op op, ptxkit_dtype t, test_value a, test_value b);

#endif
