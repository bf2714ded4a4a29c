/* The application's tunables: a parameter space, rules and callbacks made
 * into a tuning problem (problem.h), searched by the same tuner and stored
 * in the same database as the built-in families. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ptxkit_tune.h"
#include "runtime/objects.h"
#include "runtime/program.h"
#include "runtime/status.h"
#include "tuned/lookup.h"
#include "tune/problem.h"
#include "tune/tuner.h"

#define MAX_RULES 16
#define MAX_FIXED_DEFINES 16

typedef struct rule {
    ptxkit_tune_rule kind;
    int a, b; /* parameter indices; b -1: none */
    long long limit;
} rule;

struct ptxkit_tunable {
    tune_problem pr;
    rule rules[MAX_RULES];
    int rule_count;
    ptxkit_tune_valid_fn valid;
    void *valid_user;
    ptxkit_program *program;
    char *entry;
    char *fixed[MAX_FIXED_DEFINES];
    int fixed_count;
    ptxkit_tune_launch_fn launch;
    void *launch_user;
    ptxkit_tune_check_fn check;
    void *check_user;
    double (*bytes)(size_t n, void *user);
    void *bytes_user;
    size_t n;                  /* the size open for tuning */
    /* the last launched point's kernel: timed batches repeat one point, and
     * a launch should cost what the application's own would */
    bool have_last;
    tune_point last;
    ptxkit_kernel *last_kernel;
    pthread_mutex_t lock;      /* an unbound tunable's launches during the parallel prepare */
};

static void config_of(const ptxkit_tunable *t, const tune_point *p, ptxkit_config *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < t->pr.param_count; i++) ptxkit_config_set(c, t->pr.names[i], p->v[i]);
}

static int param_index(const ptxkit_tunable *t, const char *name) {
    for (int i = 0; name && i < t->pr.param_count; i++)
        if (strcmp(t->pr.names[i], name) == 0) return i;
    return -1;
}

/* ---- the problem's operations ------------------------------------------ */

static bool is_power_of_two(long long x) { return x > 0 && (x & (x - 1)) == 0; }

static bool rule_holds(const ptxkit_tunable *t, const rule *r, const tune_point *p, size_t n, char *why, size_t size) {
    long long a = p->v[r->a], b = r->b >= 0 ? p->v[r->b] : 1;
    const char *an = t->pr.names[r->a], *bn = r->b >= 0 ? t->pr.names[r->b] : NULL;
    long long product;
    bool overflow = __builtin_mul_overflow(a, b, &product);
    switch (r->kind) {
    case PTXKIT_RULE_POWER_OF_TWO:
        if (is_power_of_two(a)) return true;
        snprintf(why, size, "%s=%lld is not a power of two", an, a);
        return false;
    case PTXKIT_RULE_PRODUCT_AT_MOST:
        if (!overflow && product <= r->limit) return true;
        snprintf(why, size, "%s%s%s = %lld exceeds %lld", an, bn ? " x " : "", bn ? bn : "", product, r->limit);
        return false;
    case PTXKIT_RULE_PRODUCT_AT_MOST_N:
        if (!overflow && product >= 0 && (unsigned long long)product <= (unsigned long long)n) return true;
        snprintf(why, size, "%s%s%s = %lld exceeds the size %zu", an, bn ? " x " : "", bn ? bn : "", product, n);
        return false;
    case PTXKIT_RULE_DIVIDES: {
        long long d = bn ? b : r->limit;
        if (a != 0 && d % a == 0) return true;
        snprintf(why, size, "%s=%lld does not divide %lld", an, a, d);
        return false;
    }
    case PTXKIT_RULE_MAX_THREADS: {
        int max = t->pr.ctx->info.max_threads_per_block;
        if (a >= 1 && (max <= 0 || a <= max)) return true;
        snprintf(why, size, "%s=%lld threads exceed this GPU's %d per block", an, a, max);
        return false;
    }
    }
    return false;
}

static bool tb_legal(const tune_problem *pr, const tune_point *p, size_t n, char *why, size_t why_size) {
    const ptxkit_tunable *t = pr->impl;
    for (int i = 0; i < t->rule_count; i++)
        if (!rule_holds(t, &t->rules[i], p, n, why, why_size)) return false;
    if (t->valid) {
        ptxkit_config c;
        config_of(t, p, &c);
        if (!t->valid(&c, n, t->valid_user)) {
            snprintf(why, why_size, "the validity callback refused it");
            return false;
        }
    }
    return true;
}

static ptxkit_status tb_open(tune_problem *pr, size_t n) {
    ptxkit_tunable *t = pr->impl;
    t->n = n;
    return PTXKIT_SUCCESS;
}

static void tb_close(tune_problem *pr) { (void)pr; }

/* The point's kernel, when the tunable is bound to a program. */
static ptxkit_status kernel_for(ptxkit_tunable *t, const ptxkit_config *c, ptxkit_kernel **k) {
    *k = NULL;
    if (!t->program) return PTXKIT_SUCCESS;
    const char *defines[MAX_FIXED_DEFINES + TUNE_MAX_PARAMS];
    ptxkit_config_defines_text text;
    const char *const *params = ptxkit_config_defines_get(c, &text);
    int count = 0;
    for (int i = 0; i < t->fixed_count; i++) defines[count++] = t->fixed[i];
    for (int i = 0; params && i < c->count && i < TUNE_MAX_PARAMS; i++) defines[count++] = params[i];
    return ptxkit_program_kernel_get(t->pr.ctx, t->program, t->entry, defines, count, k);
}

/* Launches run on one thread (the tuner's); only prepare runs on several. */
static ptxkit_status tb_launch(tune_problem *pr, const tune_point *p, ptxkit_stream *stream) {
    ptxkit_tunable *t = pr->impl;
    ptxkit_config c;
    config_of(t, p, &c);
    ptxkit_kernel *k = NULL;
    ptxkit_status st = PTXKIT_SUCCESS;
    if (t->have_last && tune_point_equal(pr, p, &t->last)) {
        k = t->last_kernel;
    } else if ((st = kernel_for(t, &c, &k)) == PTXKIT_SUCCESS) {
        t->have_last = true;
        t->last = *p;
        t->last_kernel = k;
    }
    return st == PTXKIT_SUCCESS ? t->launch(k, &c, t->n, stream, t->launch_user) : st;
}

/* Bound to a program: compile only (several threads at once). Otherwise
 * the application's launch compiles what it needs: once, synchronized. */
static ptxkit_status tb_prepare(tune_problem *pr, const tune_point *p) {
    ptxkit_tunable *t = pr->impl;
    if (t->program) {
        ptxkit_config c;
        config_of(t, p, &c);
        ptxkit_kernel *k;
        return kernel_for(t, &c, &k);
    }
    /* the application's callback need not be thread-safe: one at a time */
    pthread_mutex_lock(&t->lock);
    ptxkit_config c;
    config_of(t, p, &c);
    ptxkit_status st = t->launch(NULL, &c, t->n, NULL, t->launch_user);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(pr->ctx, NULL);
    pthread_mutex_unlock(&t->lock);
    return st;
}

static ptxkit_status tb_verify(tune_problem *pr, const tune_point *p, ptxkit_stream *stream, bool *same) {
    (void)stream;
    ptxkit_tunable *t = pr->impl;
    *same = false;
    if (!t->check) {
        *same = true; /* without a check every configuration that runs is trusted */
        return PTXKIT_SUCCESS;
    }
    ptxkit_config c;
    config_of(t, p, &c);
    ptxkit_kernel *k;
    ptxkit_status st = kernel_for(t, &c, &k);
    int ok = 0;
    if (st == PTXKIT_SUCCESS) st = t->check(k, &c, t->n, &ok, t->check_user);
    *same = ok != 0;
    return st;
}

static double tb_bytes(const tune_problem *pr, size_t n) {
    const ptxkit_tunable *t = pr->impl;
    return t->bytes ? t->bytes(n, t->bytes_user) : 0;
}

static const tune_problem_ops tunable_ops = {
    .legal = tb_legal,
    .open = tb_open,
    .close = tb_close,
    .prepare = tb_prepare,
    .launch = tb_launch,
    .verify = tb_verify,
    .bytes = tb_bytes,
};

/* ---- public interface -------------------------------------------------- */

static bool key_ok(const char *key) {
    if (!key || !*key || strlen(key) >= sizeof ((tune_problem *)0)->family) return false;
    for (const char *c = key; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-'))
            return false;
    return true;
}

static bool identifier_ok(const char *s) {
    if (!s || !*s || strlen(s) >= TUNE_PARAM_NAME || (*s >= '0' && *s <= '9')) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

ptxkit_status ptxkit_tunable_create(ptxkit_context *ctx, const char *key, ptxkit_tunable **out) {
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_create: NULL argument");
    *out = NULL;
    if (!key_ok(key))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_tunable_create: the key '%.80s' must be 1 to 63 letters, digits, '.', '_' or '-'",
                            key ? key : "(null)");
    if (tune_family_find(key))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_create: '%s' is a built-in family's name", key);
    ptxkit_tunable *t = calloc(1, sizeof *t);
    if (!t) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_tunable_create: out of host memory");
    t->pr.ctx = ctx;
    t->pr.impl = t;
    t->pr.ops = &tunable_ops;
    t->pr.named = true;
    snprintf(t->pr.family, sizeof t->pr.family, "%s", key);
    snprintf(t->pr.variant, sizeof t->pr.variant, "-");
    pthread_mutex_init(&t->lock, NULL);
    *out = t;
    return PTXKIT_SUCCESS;
}

void ptxkit_tunable_destroy(ptxkit_tunable *t) {
    if (!t) return;
    free(t->entry);
    for (int i = 0; i < t->fixed_count; i++) free(t->fixed[i]);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

ptxkit_status ptxkit_tunable_add_param(ptxkit_tunable *t, const char *name, const long long *values, int count) {
    if (!t) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_param: tunable is NULL");
    ptxkit_context *ctx = t->pr.ctx;
    if (!identifier_ok(name))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_param: '%.40s' is not a C identifier of "
                            "at most %d characters", name ? name : "(null)", TUNE_PARAM_NAME - 1);
    if (param_index(t, name) >= 0)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_param: %s is declared twice", name);
    if (t->pr.param_count == TUNE_MAX_PARAMS)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_param: at most %d parameters",
                            TUNE_MAX_PARAMS);
    if (!values || count < 1 || count > TUNE_MAX_VALUES)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_param: %s needs 1 to %d values", name,
                            TUNE_MAX_VALUES);
    for (int i = 0; i < count; i++)
        for (int j = 0; j < i; j++)
            if (values[i] == values[j])
                return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_param: %s lists %lld twice",
                                    name, values[i]);
    int p = t->pr.param_count++;
    snprintf(t->pr.names[p], TUNE_PARAM_NAME, "%s", name);
    memcpy(t->pr.values[p], values, (size_t)count * sizeof *values);
    t->pr.counts[p] = count;
    t->pr.start.v[p] = values[0];
    t->pr.defaults.v[p] = values[0];
    /* the first three parameters form the search's first grid */
    t->pr.primary[p] = p < 3;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tunable_add_rule(ptxkit_tunable *t, ptxkit_tune_rule kind, const char *a, const char *b,
                                      long long limit) {
    if (!t) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_rule: tunable is NULL");
    ptxkit_context *ctx = t->pr.ctx;
    if ((unsigned)kind > PTXKIT_RULE_MAX_THREADS)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_rule: unknown rule %d", (int)kind);
    int ia = param_index(t, a), ib = b ? param_index(t, b) : -1;
    if (ia < 0 || (b && ib < 0))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_rule: no parameter named '%.40s'",
                            ia < 0 ? (a ? a : "(null)") : b);
    if (t->rule_count == MAX_RULES)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_add_rule: at most %d rules", MAX_RULES);
    t->rules[t->rule_count++] = (rule){kind, ia, ib, limit};
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tunable_valid_set(ptxkit_tunable *t, ptxkit_tune_valid_fn valid, void *user) {
    if (!t) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_valid_set: tunable is NULL");
    t->valid = valid;
    t->valid_user = user;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tunable_kernel_set(ptxkit_tunable *t, ptxkit_program *program, const char *entry,
                                        const char *const *defines, int define_count) {
    if (!t) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_kernel_set: tunable is NULL");
    ptxkit_context *ctx = t->pr.ctx;
    if (!program || !entry || !*entry || define_count < 0 || define_count > MAX_FIXED_DEFINES ||
        (define_count && !defines))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_tunable_kernel_set: a program, an entry and 0 to %d defines", MAX_FIXED_DEFINES);
    char *e = strdup(entry);
    char *copies[MAX_FIXED_DEFINES];
    int made = 0;
    for (; e && made < define_count; made++)
        if (!defines[made] || (copies[made] = strdup(defines[made])) == NULL) break;
    if (!e || made < define_count) {
        free(e);
        for (int i = 0; i < made; i++) free(copies[i]);
        return record_error(ctx, defines && made < define_count && !defines[made] ? PTXKIT_ERROR_INVALID_ARGUMENT
                                                                                    : PTXKIT_ERROR_OUT_OF_MEMORY,
                            "ptxkit_tunable_kernel_set: a NULL define or out of host memory");
    }
    free(t->entry);
    for (int i = 0; i < t->fixed_count; i++) free(t->fixed[i]);
    t->program = program;
    t->entry = e;
    memcpy(t->fixed, copies, (size_t)made * sizeof *copies);
    t->fixed_count = made;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tunable_launch_set(ptxkit_tunable *t, ptxkit_tune_launch_fn launch, void *user) {
    if (!t) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_launch_set: tunable is NULL");
    t->launch = launch;
    t->launch_user = user;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tunable_check_set(ptxkit_tunable *t, ptxkit_tune_check_fn check, void *user) {
    if (!t) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_check_set: tunable is NULL");
    t->check = check;
    t->check_user = user;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tunable_bytes_set(ptxkit_tunable *t, double (*bytes)(size_t n, void *user), void *user) {
    if (!t) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_bytes_set: tunable is NULL");
    t->bytes = bytes;
    t->bytes_user = user;
    return PTXKIT_SUCCESS;
}

/* The code the record's timings are of: the program, its entry and fixed
 * defines. Unbound (launch compiles what it needs), the tunable's key
 * alone names it: 0. */
static unsigned long long code_digest(const ptxkit_tunable *t) {
    if (!t->program) return 0;
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    unsigned long long program = program_code_digest(t->program);
    XXH3_64bits_update(&state, &program, sizeof program);
    XXH3_64bits_update(&state, t->entry, strlen(t->entry) + 1);
    for (int i = 0; i < t->fixed_count; i++) XXH3_64bits_update(&state, t->fixed[i], strlen(t->fixed[i]) + 1);
    return (unsigned long long)XXH3_64bits_digest(&state);
}

ptxkit_status ptxkit_tunable_tune(ptxkit_tunable *t, const size_t *sizes, int size_count,
                                  const ptxkit_tune_options *options, ptxkit_tune_report *report) {
    if (!t) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_tune: tunable is NULL");
    ptxkit_context *ctx = t->pr.ctx;
    if (!t->pr.param_count || !t->launch)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_tune: %s has no %s", t->pr.family,
                            t->pr.param_count ? "launch callback" : "parameters");
    t->pr.code = code_digest(t);
    return tune_problem_run(&t->pr, sizes, size_count, options, report);
}

static bool tunable_auto(ptxkit_context *ctx, const char *family, const char *variant, size_t n, double budget_s,
                         void *user) {
    (void)ctx, (void)family, (void)variant;
    ptxkit_tune_options o = {.budget_s = budget_s};
    return ptxkit_tunable_tune(user, &n, 1, &o, NULL) == PTXKIT_SUCCESS;
}

/* A stored entry serves when it names exactly this space's parameters, with
 * values the space lists and the rules accept. */
static bool entry_point(const ptxkit_tunable *t, const tune_db_entry *e, size_t n, tune_point *p) {
    if (e->param_count != t->pr.param_count) return false;
    *p = t->pr.defaults;
    for (int i = 0; i < e->param_count; i++) {
        int k = param_index(t, e->param_names[i]);
        if (k < 0) return false;
        bool listed = false;
        for (int j = 0; j < t->pr.counts[k]; j++) listed = listed || t->pr.values[k][j] == e->param_values[i];
        if (!listed) return false;
        p->v[k] = e->param_values[i];
    }
    char why[160];
    return tb_legal(&t->pr, p, n, why, sizeof why);
}

ptxkit_status ptxkit_tunable_config_get(ptxkit_tunable *t, size_t n, ptxkit_config *out, int *tuned) {
    if (!t || !out) return record_error(t ? t->pr.ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_config_get: NULL argument");
    if (!t->pr.param_count)
        return record_error(t->pr.ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tunable_config_get: %s has no parameters",
                            t->pr.family);
    tune_db_entry e;
    tune_point p = t->pr.defaults;
    bool found = tune_lookup_entry(t->pr.ctx, t->pr.family, t->pr.variant, n, t->launch ? tunable_auto : NULL, t, &e) &&
                 entry_point(t, &e, n, &p);
    if (!found) p = t->pr.defaults;
    config_of(t, &p, out);
    if (tuned) *tuned = found;
    return PTXKIT_SUCCESS;
}
