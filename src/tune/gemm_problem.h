/* The GEMM family as a tuning problem (gemm_problem.c says why it is not a
 * tune_family of params.c). */
#ifndef PTXKIT_TUNE_GEMM_PROBLEM_H
#define PTXKIT_TUNE_GEMM_PROBLEM_H

#include <stdbool.h>

#include "gemm/gemm.h"
#include "tune/problem.h"

#define GEMM_TUNE_FAMILY "gemm"

/* The problem of a variant "<type>.<class>" (NULL: float32.square). Free
 * with gemm_problem_free. */
ptxkit_status gemm_problem_init(tune_problem *pr, ptxkit_context *ctx, const char *variant);
void gemm_problem_free(tune_problem *pr);

/* Parses "<type>.<class>" (NULL or "": float32.square). */
bool gemm_variant_parse(const char *variant, ptxkit_dtype *type, gemm_class *cls);

/* The shape the tuner times for a class at m * n * k = volume. */
void gemm_problem_shape(gemm_class cls, size_t volume, size_t *m, size_t *n, size_t *k);

#endif
