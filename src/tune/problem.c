/* Points of a tuning problem's space (see problem.h). */
#include <stdio.h>
#include <string.h>

#include "ptxkit.h"
#include "tune/problem.h"

void tune_point_format(const tune_problem *pr, const tune_point *p, char *buf, size_t size) {
    size_t used = 0;
    if (size) buf[0] = 0;
    for (int i = 0; i < pr->param_count && used < size; i++) {
        int n;
        /* a built-in family's load parameter reads better by name */
        const char *load = !pr->named && strcmp(pr->names[i], "load") == 0 ? ptxkit_load_op_name((ptxkit_load_op)p->v[i]) : NULL;
        if (load)
            n = snprintf(buf + used, size - used, "%s%s=%s", i ? " " : "", pr->names[i], load);
        else if (!pr->named && p->v[i] == 0)
            n = snprintf(buf + used, size - used, "%s%s=-", i ? " " : "", pr->names[i]);
        else
            n = snprintf(buf + used, size - used, "%s%s=%lld", i ? " " : "", pr->names[i], p->v[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
}

bool tune_point_equal(const tune_problem *pr, const tune_point *a, const tune_point *b) {
    for (int i = 0; i < pr->param_count; i++)
        if (a->v[i] != b->v[i]) return false;
    return true;
}

size_t tune_problem_size(const tune_problem *pr) {
    size_t total = 1;
    for (int i = 0; i < pr->param_count; i++) {
        if (pr->counts[i] <= 0) return 0;
        total *= (size_t)pr->counts[i];
    }
    return total;
}

void tune_problem_point(const tune_problem *pr, size_t index, tune_point *out) {
    memset(out, 0, sizeof *out);
    for (int i = pr->param_count - 1; i >= 0; i--) {
        size_t radix = (size_t)pr->counts[i];
        out->v[i] = pr->values[i][index % radix];
        index /= radix;
    }
}

size_t tune_problem_index(const tune_problem *pr, const tune_point *p) {
    size_t index = 0;
    for (int i = 0; i < pr->param_count; i++) {
        int digit = -1;
        for (int k = 0; k < pr->counts[i] && digit < 0; k++)
            if (pr->values[i][k] == p->v[i]) digit = k;
        if (digit < 0) return (size_t)-1;
        index = index * (size_t)pr->counts[i] + (size_t)digit;
    }
    return index;
}
