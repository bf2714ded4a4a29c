/* A built-in kernel family (params.h) as a tuning problem (problem.h). */
#ifndef PTXKIT_TUNE_FAMILY_PROBLEM_H
#define PTXKIT_TUNE_FAMILY_PROBLEM_H

#include "tune/params.h"
#include "tune/problem.h"

/* The problem of variant v: parameters block, items, vec, bpsm, load (the
 * tune_param order), values from tune_space_for, defaults all 0. Free with
 * family_problem_free. */
ptxkit_status family_problem_init(tune_problem *pr, ptxkit_context *ctx, const tune_variant *v);
void family_problem_free(tune_problem *pr);

tune_config family_point_config(const tune_point *p);
tune_point family_config_point(const tune_config *c);

#endif
