/* The tuner: for each size bucket, search the family's parameter space
 * through its public op, re-time the best few, save the winner.
 *
 * Search (within the budget): (A) the full grid of the family's primary
 * parameters with the others at their start values; (B) coordinate descent
 * from the three best of (A) and from the best of (A) for each value of each
 * primary parameter, one parameter at a time, until a pass changes nothing;
 * (C) the top candidates and the built-in defaults re-timed in interleaved
 * rounds. The defaults are kept unless the winner beats them by
 * more than the noise. Exhaustive mode times every legal configuration
 * instead of (A) and (B). Candidates are compiled ahead in parallel, each
 * checked against the defaults' output before it is timed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptxkit_tune.h"
#include "runtime/args.h"
#include "runtime/compile.h"
#include "runtime/status.h"
#include "tune/family_problem.h"
#include "tune/record.h"
#include "tune/rig.h"
#include "tune/gemm_problem.h"
#include "tune/tuner.h"

#define NOISE 0.01          /* relative difference below which timings tie */
#define TOP_K 5
#define SEARCH_SAMPLES 5
#define EXHAUSTIVE_SAMPLES 3
#define RETIME_ROUNDS 9
#define VERIFY_ROUNDS 21   /* small sizes are launch-bound: host noise of a few % per sample */
#define ROUND_SAMPLES 3
#define DESCENT_PASSES 4
#define DESCENT_STARTS 3
#define MAX_THREADS 32

typedef enum cand_state { C_NEW = 0, C_READY, C_FAILED, C_WRONG, C_TIMED } cand_state;

typedef struct candidate {
    tune_point cfg;
    bool legal;
    unsigned char state;
    bool recorded, reached; /* its state came from the tuning record; the search has come to it */
    double ms;              /* median time per call */
    double min_ms, max_ms;  /* over the timed batches (ms where the record gave the time) */
    int samples;            /* timed batches (0 where the record gave the time) */
} candidate;

typedef struct table {
    candidate *c;
    size_t count;
    int legal, timed, failed, wrong;
    int reused;             /* states taken from the tuning record, not measured */
    int reused_reached;     /* of those, the ones the search has come to */
    char note[192];
} table;

typedef struct session {
    ptxkit_context *ctx;
    ptxkit_tune_options opt;
    tune_problem *pr;
    double t0, budget_ms, deadline;  /* deadline of the current bucket's search */
    double unbudgeted_ms;            /* time spent verifying, outside the budget */
    int threads;
    int size_index, size_count;
    size_t n;
    double bytes_moved;
    double best_ms;                  /* fastest timed so far at this size */
    bool cut_hopeless;               /* stop timing candidates far slower than it */
    double last_progress;
    double compile_ms;
    int prepared;
    /* The tuning record (record.h): this problem's lines from earlier runs,
     * those of the size being tuned, and where this run appends. */
    bool record_on;
    char record_path[4096];
    tune_db_key key;
    tune_record record, here;
    int appended;
    char record_note[256];
} session;

/* GB/s where the problem counts its bytes; 0 where it does not (the
 * results then carry the times only). */
static double gbs_of(const session *s, double ms) { return ms > 0 && isfinite(ms) ? s->bytes_moved / (ms * 1e6) : 0; }

static void progress(session *s, const char *phase, int done, int total, bool force) {
    if (!s->opt.progress) return;
    double now = now_ms();
    if (!force && now - s->last_progress < 50) return; /* a terminal line needs no more */
    s->last_progress = now;
    ptxkit_tune_progress p = {
        .family = s->pr->family,
        .variant = s->pr->variant,
        .n = s->n,
        .size_index = s->size_index,
        .size_count = s->size_count,
        .phase = phase,
        .done = done,
        .total = total,
        .best_gbs = gbs_of(s, s->best_ms),
        .elapsed_s = (now - s->t0) / 1e3,
        .budget_s = s->opt.exhaustive ? 0 : s->budget_ms / 1e3,
    };
    s->opt.progress(&p, s->opt.progress_user);
}

/* Copies text, truncating it to the buffer. */
static void set_text(char *dst, size_t size, const char *src) {
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

static void note_failure(const session *s, table *t, const tune_point *c, const char *what, const char *detail) {
    if (t->note[0]) return;
    char cfg[160], text[512];
    tune_point_format(s->pr, c, cfg, sizeof cfg);
    snprintf(text, sizeof text, "%s: %s%s%.200s", cfg, what, detail && *detail ? ": " : "", detail ? detail : "");
    set_text(t->note, sizeof t->note, text);
}

static ptxkit_status table_init(table *t, const tune_problem *pr, size_t n) {
    memset(t, 0, sizeof *t);
    t->count = tune_problem_size(pr);
    t->c = calloc(t->count ? t->count : 1, sizeof *t->c);
    if (!t->c) return PTXKIT_ERROR_OUT_OF_MEMORY;
    char why[256];
    for (size_t i = 0; i < t->count; i++) {
        tune_problem_point(pr, i, &t->c[i].cfg);
        t->c[i].legal = pr->ops->legal(pr, &t->c[i].cfg, n, why, sizeof why);
        t->legal += t->c[i].legal;
    }
    return PTXKIT_SUCCESS;
}

static void table_free(table *t) {
    free(t->c);
    t->c = NULL;
}

/* max_variants counts what the search has come to, timed now or taken from
 * the record: a resumed run stops where the uninterrupted one would. */
static bool out_of_budget(const session *s, const table *t) {
    if (s->opt.max_variants > 0 && t->timed + t->reused_reached >= s->opt.max_variants) return true;
    return now_ms() > s->deadline;
}

/* Failures that say something about the configuration, not about the
 * moment (memory, a lost context, I/O): only these are recorded. */
static bool lasting_failure(ptxkit_status st) {
    return st == PTXKIT_ERROR_COMPILE || st == PTXKIT_ERROR_PTX_LOAD || st == PTXKIT_ERROR_UNSUPPORTED ||
           st == PTXKIT_ERROR_INVALID_ARGUMENT || st == PTXKIT_ERROR_LAUNCH;
}

/* Appends what was just learnt about c to the record, as it comes: an
 * interrupted run keeps it. A failing append costs the record, not the run. */
static void record_result(session *s, const candidate *c, tune_record_outcome outcome, int samples, const char *note) {
    if (!s->record_on) return;
    tune_record_line l;
    memset(&l, 0, sizeof l);
    l.key = s->key;
    const tune_problem *pr = s->pr;
    set_text(l.family, sizeof l.family, pr->family);
    set_text(l.variant, sizeof l.variant, pr->variant);
    l.code = pr->code;
    l.n = s->n;
    l.param_count = pr->param_count;
    for (int p = 0; p < pr->param_count; p++) {
        memcpy(l.names[p], pr->names[p], TUNE_PARAM_NAME);
        l.values[p] = c->cfg.v[p];
    }
    l.outcome = outcome;
    l.ms = outcome == TUNE_RECORD_OK ? c->ms : 0;
    l.gbs = outcome == TUNE_RECORD_OK ? gbs_of(s, c->ms) : 0;
    l.samples = samples;
    l.when = (long long)time(NULL);
    set_text(l.note, sizeof l.note, note ? note : "");
    char msg[512];
    if (tune_record_append(s->record_path, &l, msg, sizeof msg) == PTXKIT_SUCCESS) {
        s->appended++;
    } else {
        if (!s->record_note[0]) set_text(s->record_note, sizeof s->record_note, msg);
        s->record_on = false; /* one message, not one per configuration */
    }
}

/* Takes the states the record holds for this size's legal candidates:
 * those are not compiled or timed again. */
static void reuse_recorded(session *s, table *t) {
    for (size_t i = 0; i < t->count && s->here.count; i++) {
        candidate *c = &t->c[i];
        if (!c->legal) continue;
        const tune_record_line *l = tune_record_find(&s->here, s->pr, s->n, &c->cfg);
        if (!l || (l->outcome == TUNE_RECORD_OK && !(l->ms > 0))) continue;
        t->reused++;
        c->recorded = true;
        if (l->outcome == TUNE_RECORD_OK) {
            c->state = C_TIMED;
            c->ms = c->min_ms = c->max_ms = l->ms;
            if (s->best_ms <= 0 || c->ms < s->best_ms) s->best_ms = c->ms;
        } else if (l->outcome == TUNE_RECORD_WRONG) {
            c->state = C_WRONG;
            t->wrong++;
            note_failure(s, t, &c->cfg, "WRONG RESULT (the output check failed; from the tuning record)", NULL);
        } else {
            c->state = C_FAILED;
            t->failed++;
            note_failure(s, t, &c->cfg, "failed (from the tuning record)", l->note);
        }
    }
}

/* This size's lines of the problem's record. */
static void select_size(session *s, size_t n) {
    s->here.count = 0;
    for (size_t i = 0; i < s->record.count; i++) {
        if (s->record.lines[i].n != n) continue;
        if (s->here.count == s->here.capacity) {
            size_t cap = s->here.capacity ? s->here.capacity * 2 : 64;
            tune_record_line *grown = realloc(s->here.lines, cap * sizeof *grown);
            if (!grown) return; /* fewer reused: measured again */
            s->here.lines = grown;
            s->here.capacity = cap;
        }
        s->here.lines[s->here.count++] = s->record.lines[i];
    }
}

/* Verifies then times one prepared candidate. */
static void evaluate(session *s, tune_rig *r, table *t, candidate *c, int samples) {
    if (c->state != C_READY) return;
    bool same = false;
    ptxkit_status st = rig_verify(r, &c->cfg, &same);
    if (st == PTXKIT_SUCCESS && !same) {
        c->state = C_WRONG;
        t->wrong++;
        note_failure(s, t, &c->cfg, "WRONG RESULT (the output check failed)", NULL);
        record_result(s, c, TUNE_RECORD_WRONG, 0, "the output check failed");
        return;
    }
    double times[RIG_MAX_SAMPLES];
    int taken = 0;
    /* a candidate three times slower than the best so far cannot win */
    double cutoff = s->cut_hopeless && s->best_ms > 0 ? 3 * s->best_ms : 0;
    if (st == PTXKIT_SUCCESS) st = rig_time(r, &c->cfg, samples, cutoff, times, &taken);
    if (st == PTXKIT_SUCCESS && taken == 0) st = PTXKIT_ERROR_LAUNCH;
    if (st != PTXKIT_SUCCESS) {
        c->state = C_FAILED;
        t->failed++;
        note_failure(s, t, &c->cfg, ptxkit_status_string(st), ptxkit_last_error());
        if (lasting_failure(st)) record_result(s, c, TUNE_RECORD_FAILED, 0, ptxkit_last_error());
        return;
    }
    c->ms = median_of(times, taken);
    c->min_ms = c->max_ms = times[0];
    for (int i = 1; i < taken; i++) {
        if (times[i] < c->min_ms) c->min_ms = times[i];
        if (times[i] > c->max_ms) c->max_ms = times[i];
    }
    c->samples = taken;
    c->state = C_TIMED;
    t->timed++;
    record_result(s, c, TUNE_RECORD_OK, taken, NULL);
    if (s->best_ms <= 0 || c->ms < s->best_ms) s->best_ms = c->ms;
}

/* Compiles the new candidates among idx[0..count) in parallel, then times
 * them, in chunks so that the budget can stop it between chunks. Returns
 * false when the budget ran out. */
static bool evaluate_list(session *s, tune_rig *r, table *t, const size_t *idx, size_t count, int samples,
                          const char *phase, bool budgeted) {
    size_t chunk = (size_t)(s->threads * 2 > 8 ? s->threads * 2 : 8);
    tune_point *configs = malloc(chunk * sizeof *configs);
    ptxkit_status *status = malloc(chunk * sizeof *status);
    char(*messages)[160] = calloc(chunk, sizeof *messages);
    size_t *which = malloc(chunk * sizeof *which);
    bool finished = true;
    if (!configs || !status || !messages || !which) {
        finished = false;
        goto done;
    }
    for (size_t start = 0; start < count; start += chunk) {
        size_t end = start + chunk < count ? start + chunk : count;
        if (budgeted && out_of_budget(s, t)) {
            finished = false;
            break;
        }
        int fresh = 0;
        for (size_t i = start; i < end; i++) {
            candidate *c = &t->c[idx[i]];
            if (c->legal && c->state == C_NEW) {
                configs[fresh] = c->cfg;
                which[fresh++] = idx[i];
            }
        }
        if (fresh) {
            progress(s, "compile", (int)start, (int)count, true);
            rig_prepare(r, configs, fresh, s->threads, status, messages);
            for (int k = 0; k < fresh; k++) {
                candidate *c = &t->c[which[k]];
                if (status[k] == PTXKIT_SUCCESS) {
                    c->state = C_READY;
                } else {
                    c->state = C_FAILED;
                    t->failed++;
                    note_failure(s, t, &c->cfg, ptxkit_status_string(status[k]), messages[k]);
                    if (lasting_failure(status[k])) record_result(s, c, TUNE_RECORD_FAILED, 0, messages[k]);
                }
            }
        }
        for (size_t i = start; i < end; i++) {
            if (budgeted && out_of_budget(s, t)) {
                finished = false;
                break;
            }
            candidate *c = &t->c[idx[i]];
            if (c->recorded && !c->reached) {
                c->reached = true;
                t->reused_reached++;
            }
            evaluate(s, r, t, c, samples);
            progress(s, phase, (int)(i + 1), (int)count, false);
        }
        if (!finished) break;
    }
done:
    free(configs);
    free(status);
    free(messages);
    free(which);
    return finished;
}

static int by_time(const void *a, const void *b) {
    const candidate *x = *(const candidate *const *)a, *y = *(const candidate *const *)b;
    return (x->ms > y->ms) - (x->ms < y->ms);
}

/* Up to k timed candidates, fastest first; returns how many. */
static int top_candidates(const table *t, int k, const candidate **out) {
    const candidate **all = malloc((t->count ? t->count : 1) * sizeof *all);
    if (!all) return 0;
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->c[i].state == C_TIMED) all[n++] = &t->c[i];
    qsort(all, n, sizeof *all, by_time);
    int m = (int)(n < (size_t)k ? n : (size_t)k);
    memcpy(out, all, (size_t)m * sizeof *out);
    free(all);
    return m;
}


static size_t *index_buffer(const table *t) { return malloc((t->count ? t->count : 1) * sizeof(size_t)); }

/* Coordinate descent from `current`: one parameter at a time, all its
 * values with the others fixed, moving to the fastest seen, until a pass
 * changes nothing. Returns false when the budget ran out. */
static bool descend(session *s, tune_rig *r, table *t, size_t current, size_t *list) {
    bool more = true;
    for (int pass = 0; more && pass < DESCENT_PASSES; pass++) {
        size_t before = current;
        const tune_problem *pr = s->pr;
        for (int p = 0; p < pr->param_count && more; p++) {
            if (pr->counts[p] < 2) continue;
            size_t count = 0;
            for (int k = 0; k < pr->counts[p]; k++) {
                tune_point c = t->c[current].cfg;
                c.v[p] = pr->values[p][k];
                size_t i = tune_problem_index(pr, &c);
                if (i != (size_t)-1 && t->c[i].legal) list[count++] = i;
            }
            more = evaluate_list(s, r, t, list, count, SEARCH_SAMPLES, "search", true);
            size_t best = current;
            for (size_t k = 0; k < count; k++)
                if (t->c[list[k]].state == C_TIMED && t->c[list[k]].ms < t->c[best].ms) best = list[k];
            /* move only for a clear gain: ties keep the path stable */
            if (t->c[best].ms < t->c[current].ms * (1 - NOISE / 2)) current = best;
        }
        if (current == before) break;
    }
    return more;
}

/* Starts of phase B, fastest first: the grid's best few, then the best grid
 * point for each value of each primary parameter. Near-ties among the top
 * few are common, and a parameter that pays only together with another
 * (a load operator with fewer items per thread, say) is found from the
 * point where the other is already right. Returns how many. */
static int descent_starts(const session *s, const table *t, const size_t *grid, size_t count, size_t *out) {
    int n = 0;
    const candidate *top[DESCENT_STARTS];
    int k = top_candidates(t, DESCENT_STARTS, top);
    for (int i = 0; i < k; i++) out[n++] = (size_t)(top[i] - t->c);
    size_t extra[TUNE_MAX_PARAMS * TUNE_MAX_VALUES];
    int m = 0;
    const tune_problem *pr = s->pr;
    for (int p = 0; p < pr->param_count; p++) {
        if (!pr->primary[p]) continue;
        for (int v = 0; v < pr->counts[p]; v++) {
            size_t best = (size_t)-1;
            for (size_t g = 0; g < count; g++) {
                const candidate *c = &t->c[grid[g]];
                if (c->state == C_TIMED && c->cfg.v[p] == pr->values[p][v] &&
                    (best == (size_t)-1 || c->ms < t->c[best].ms))
                    best = grid[g];
            }
            bool seen = best == (size_t)-1;
            for (int j = 0; j < m && !seen; j++) seen = extra[j] == best;
            if (!seen) extra[m++] = best;
        }
    }
    for (int j = 1; j < m; j++) /* insertion sort by time: a few dozen */
        for (int i = j; i > 0 && t->c[extra[i]].ms < t->c[extra[i - 1]].ms; i--) {
            size_t x = extra[i];
            extra[i] = extra[i - 1];
            extra[i - 1] = x;
        }
    for (int j = 0; j < m; j++) {
        bool seen = false;
        for (int i = 0; i < n && !seen; i++) seen = out[i] == extra[j];
        if (!seen) out[n++] = extra[j];
    }
    return n;
}

/* Phases A and B: the primary grid, then descents from several starts
 * while the budget lasts. */
static void search(session *s, tune_rig *r, table *t) {
    size_t *grid = index_buffer(t), *list = index_buffer(t);
    size_t starts[DESCENT_STARTS + TUNE_MAX_PARAMS * TUNE_MAX_VALUES];
    if (!grid || !list) goto done;
    const tune_problem *pr = s->pr;
    size_t count = 0;
    for (size_t i = 0; i < t->count; i++) {
        bool on_grid = t->c[i].legal;
        for (int p = 0; p < pr->param_count && on_grid; p++)
            if (!pr->primary[p] && t->c[i].cfg.v[p] != pr->start.v[p]) on_grid = false;
        if (on_grid) grid[count++] = i;
    }
    bool more = evaluate_list(s, r, t, grid, count, SEARCH_SAMPLES, "search", true);
    int n_starts = more ? descent_starts(s, t, grid, count, starts) : 0;
    for (int k = 0; k < n_starts && more; k++) more = descend(s, r, t, starts[k], list);
done:
    free(grid);
    free(list);
}

static void exhaustive(session *s, tune_rig *r, table *t) {
    size_t *list = index_buffer(t);
    if (!list) return;
    size_t count = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->c[i].legal) list[count++] = i;
    evaluate_list(s, r, t, list, count, EXHAUSTIVE_SAMPLES, "exhaustive", false);
    free(list);
}

/* Times configs[0..count) in interleaved rounds (the order rotating) and
 * returns each one's median; a failure reads as +infinity. */
static void retime(session *s, tune_rig *r, const tune_point *configs, int count, int rounds, double *medians) {
    double *all = calloc((size_t)count * (size_t)rounds * ROUND_SAMPLES, sizeof *all);
    int *have = calloc((size_t)count, sizeof *have);
    bool *failed = calloc((size_t)count, sizeof *failed);
    if (!all || !have || !failed) {
        for (int i = 0; i < count; i++) medians[i] = INFINITY;
        goto done;
    }
    for (int round = 0; round < rounds; round++) {
        for (int j = 0; j < count; j++) {
            int k = (j + round) % count;
            if (failed[k]) continue;
            double times[ROUND_SAMPLES];
            int taken = 0;
            if (rig_time(r, &configs[k], ROUND_SAMPLES, 0, times, &taken) != PTXKIT_SUCCESS || taken == 0) {
                failed[k] = true;
                continue;
            }
            memcpy(all + (size_t)k * rounds * ROUND_SAMPLES + have[k], times, (size_t)taken * sizeof *times);
            have[k] += taken;
        }
        progress(s, "retime", round + 1, rounds, true);
    }
    for (int k = 0; k < count; k++)
        medians[k] = failed[k] || !have[k] ? INFINITY : median_of(all + (size_t)k * rounds * ROUND_SAMPLES, have[k]);
done:
    free(all);
    free(have);
    free(failed);
}

/* Phase C: the top candidates against the defaults (configs[0]). Returns
 * the winner's index in configs; the defaults win ties. */
static int pick_among(session *s, tune_rig *r, const table *t, tune_point *configs, double *medians, int *count) {
    const candidate *top[TOP_K];
    int k = top_candidates(t, TOP_K, top);
    configs[0] = s->pr->defaults;
    for (int i = 0; i < k; i++) configs[i + 1] = top[i]->cfg;
    *count = k + 1;
    retime(s, r, configs, *count, RETIME_ROUNDS, medians);
    int best = 0;
    for (int i = 1; i < *count; i++)
        if (medians[i] < medians[best]) best = i;
    if (best != 0 && medians[0] <= medians[best] * (1 + NOISE)) best = 0;
    return best;
}

static void save_result(session *s, const tune_point *choice, double gbs, double default_gbs, int bucket,
                        ptxkit_tune_report *report) {
    if (s->opt.no_save) return;
    char path[4096];
    if (!tune_db_default_path(path, sizeof path)) {
        if (report)
            snprintf(report->database_note, sizeof report->database_note,
                     "not saved: no state directory and no PTXKIT_TUNE_DB");
        return;
    }
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_for(s->ctx, &e.key);
    const tune_problem *pr = s->pr;
    snprintf(e.family, sizeof e.family, "%s", pr->family);
    snprintf(e.variant, sizeof e.variant, "%s", pr->variant);
    e.bucket = bucket;
    if (pr->named) {
        e.param_count = pr->param_count;
        for (int p = 0; p < pr->param_count; p++) {
            snprintf(e.param_names[p], sizeof e.param_names[p], "%s", pr->names[p]);
            e.param_values[p] = choice->v[p];
        }
    } else {
        e.config = family_point_config(choice);
    }
    e.gbs = gbs;
    e.default_gbs = default_gbs;
    e.when = (long long)time(NULL);
    tune_db merged;
    tune_db_init(&merged);
    char msg[640];
    ptxkit_status st = tune_db_store(path, &e, 1, &merged, msg, sizeof msg);
    if (st == PTXKIT_SUCCESS) tune_state_update(s->ctx, &merged);
    tune_db_clear(&merged);
    if (report) {
        if (st == PTXKIT_SUCCESS) set_text(report->database, sizeof report->database, path);
        if (st != PTXKIT_SUCCESS) {
            char text[700];
            snprintf(text, sizeof text, "not saved: %s", msg);
            set_text(report->database_note, sizeof report->database_note, text);
        } else if (msg[0] && !report->database_note[0]) {
            set_text(report->database_note, sizeof report->database_note, msg); /* a replaced bad file */
        }
    }
}

/* A point as the configuration its op or tunable takes. */
static ptxkit_config result_config(const tune_problem *pr, const tune_point *p) {
    ptxkit_config c = {0};
    if (pr->ops->config) pr->ops->config(pr, p, &c);
    else
        for (int i = 0; i < pr->param_count; i++) ptxkit_config_set(&c, pr->names[i], p->v[i]);
    return c;
}

/* Tunes one size. */
static ptxkit_status tune_size(session *s, size_t n, ptxkit_tune_result *res, ptxkit_tune_report *report) {
    double t_start = now_ms();
    tune_problem *pr = s->pr;
    memset(res, 0, sizeof *res);
    res->n = n;
    s->n = n;
    s->bytes_moved = pr->ops->bytes ? pr->ops->bytes(pr, n) : 0;
    s->best_ms = 0;
    progress(s, "setup", 0, 1, true);
    tune_rig r;
    ptxkit_status st = rig_open(&r, pr, n);
    if (st != PTXKIT_SUCCESS) return st;
    table t;
    if ((st = table_init(&t, pr, n)) != PTXKIT_SUCCESS) {
        rig_close(&r);
        return record_error(s->ctx, st, "tune: out of host memory");
    }
    res->legal = t.legal;
    select_size(s, n);
    reuse_recorded(s, &t);

    tune_point configs[TOP_K + 1];
    double medians[TOP_K + 1];
    int count = 0;
    if (s->opt.exhaustive) {
        exhaustive(s, &r, &t);
    } else {
        double left = s->t0 + s->unbudgeted_ms + s->budget_ms - now_ms();
        s->deadline = now_ms() + 1e3 * tune_size_budget(s->budget_ms / 1e3, left / 1e3, s->size_count - s->size_index,
                                                        s->size_count);
        search(s, &r, &t);
    }
    int win = pick_among(s, &r, &t, configs, medians, &count);
    tune_point choice = configs[win], search_pick = choice;
    double choice_ms = medians[win], default_ms = medians[0], search_ms = choice_ms;
    res->search_best = result_config(pr, &search_pick);
    if (s->opt.verify_exhaustive && !s->opt.exhaustive) {
        /* the verification is outside the search's budget: later buckets
         * get the search time they would have had without it */
        double verify_start = now_ms();
        exhaustive(s, &r, &t);
        int ex_win = pick_among(s, &r, &t, configs, medians, &count);
        tune_point versus[3] = {pr->defaults, search_pick, configs[ex_win]};
        double m[3];
        retime(s, &r, versus, 3, VERIFY_ROUNDS, m);
        default_ms = m[0];
        search_ms = m[1];
        res->exhaustive_best = result_config(pr, &versus[2]);
        res->exhaustive_gbs = gbs_of(s, m[2]);
        res->exhaustive_ms = m[2];
        tune_point_format(pr, &versus[2], res->exhaustive_text, sizeof res->exhaustive_text);
        bool exhaustive_wins = m[2] < m[1] * (1 - NOISE);
        choice = exhaustive_wins ? versus[2] : search_pick;
        choice_ms = exhaustive_wins ? m[2] : m[1];
        s->unbudgeted_ms += now_ms() - verify_start;
    }
    res->best = result_config(pr, &choice);
    tune_point_format(pr, &choice, res->best_text, sizeof res->best_text);
    res->best_gbs = gbs_of(s, choice_ms);
    res->default_gbs = gbs_of(s, default_ms);
    res->search_gbs = gbs_of(s, search_ms);
    res->best_ms = choice_ms;
    res->default_ms = default_ms;
    res->search_ms = search_ms;
    res->timed = t.timed;
    res->reused = t.reused;
    res->failed = t.failed;
    res->wrong = t.wrong;
    set_text(res->note, sizeof res->note, t.note);
    int known = 0; /* timed now or earlier: something to choose from */
    for (size_t i = 0; i < t.count; i++) known += t.c[i].state == C_TIMED;
    s->compile_ms += r.compile_ms;
    s->prepared += r.prepared;
    table_free(&t);
    rig_close(&r);
    if (!isfinite(choice_ms))
        return record_error(s->ctx, PTXKIT_ERROR_LAUNCH, "tune %s %s at n=%zu: even the defaults failed: %s", pr->family,
                            pr->variant, n, res->note);
    /* no candidate timed (no budget left): nothing was learnt to save */
    if (known > 0) save_result(s, &choice, res->best_gbs, res->default_gbs, tune_bucket(n), report);
    res->seconds = (now_ms() - t_start) / 1e3;
    return PTXKIT_SUCCESS;
}

double tune_size_budget(double budget_s, double left_s, int sizes_left, int size_count) {
    if (!(left_s > 0)) return 0;
    if (sizes_left < 1) sizes_left = 1;
    if (size_count < sizes_left) size_count = sizes_left;
    double floor_s = budget_s / size_count / 2;
    double mine = left_s - (sizes_left - 1) * floor_s;
    double least = left_s < floor_s ? left_s : floor_s;
    return mine > least ? mine : least;
}

/* Loads this problem's lines of the record, unless the run leaves the
 * database alone (no_save: nothing is read or written) or asks for a fresh
 * measurement (no_record). A record that cannot be read is not written
 * either: the next run re-times, nothing worse. */
static void open_record(session *s) {
    if (s->opt.no_save || s->opt.no_record || !tune_record_default_path(s->record_path, sizeof s->record_path)) {
        s->record_path[0] = 0;
        return;
    }
    tune_db_key_for(s->ctx, &s->key);
    tune_record_filter f = {.key = &s->key, .family = s->pr->family, .variant = s->pr->variant, .code = s->pr->code};
    char msg[512];
    if (tune_record_load(s->record_path, &f, &s->record, msg, sizeof msg) != PTXKIT_SUCCESS) {
        set_text(s->record_note, sizeof s->record_note, msg);
        return;
    }
    s->record_on = true;
}

static int default_threads(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
}

static ptxkit_status check_options(ptxkit_context *ctx, const ptxkit_tune_options *o) {
    if (!RESERVED_ZERO(o))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune: reserved option fields are set");
    if (!(o->budget_s >= 0) || o->budget_s > 1e6 || o->max_variants < 0 || o->size_step < 0 || o->size_step > 63 ||
        o->threads < 0 || o->threads > 1024)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_tune: options out of range (budget_s %g, max_variants %d, size_step %d, threads %d)",
                            o->budget_s, o->max_variants, o->size_step, o->threads);
    return PTXKIT_SUCCESS;
}

ptxkit_status tune_problem_run(tune_problem *pr, const size_t *sizes, int size_count, const ptxkit_tune_options *options,
                               ptxkit_tune_report *report) {
    ptxkit_context *ctx = pr->ctx;
    session s;
    memset(&s, 0, sizeof s);
    if (options) s.opt = *options;
    if (!sizes || size_count < 1 || size_count > PTXKIT_TUNE_MAX_SIZES)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune: 1 to %d sizes, not %d",
                            PTXKIT_TUNE_MAX_SIZES, size_count);
    ptxkit_status st = check_options(ctx, &s.opt);
    if (st != PTXKIT_SUCCESS) return st;
    for (int i = 0; i < size_count; i++)
        if (sizes[i] == 0) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune: a size of 0");
    if (tune_problem_size(pr) == 0)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune: %s has no parameter values", pr->family);

    s.ctx = ctx;
    s.pr = pr;
    s.t0 = now_ms();
    s.cut_hopeless = true;
    s.budget_ms = (s.opt.budget_s > 0 ? s.opt.budget_s : TUNE_DEFAULT_BUDGET_S) * 1e3;
    s.threads = s.opt.threads ? s.opt.threads : default_threads();
    if (s.threads > MAX_THREADS) s.threads = MAX_THREADS;
    s.size_count = size_count;
    if (report) {
        memset(report, 0, sizeof *report);
        set_text(report->family, sizeof report->family, pr->family);
        set_text(report->variant, sizeof report->variant, pr->variant);
    }
    open_record(&s);
    tune_guard_enter();
    for (int i = 0; i < size_count && st == PTXKIT_SUCCESS; i++) {
        s.size_index = i;
        ptxkit_tune_result res;
        st = tune_size(&s, sizes[i], &res, report);
        if (report && st == PTXKIT_SUCCESS) report->sizes[report->size_count++] = res;
    }
    tune_guard_leave();
    if (report) {
        report->seconds = (now_ms() - s.t0) / 1e3;
        report->compile_seconds = s.compile_ms / 1e3;
        report->kernels_prepared = s.prepared;
        report->threads = s.threads;
        report->record_loaded = (int)s.record.count;
        report->record_appended = s.appended;
        if (s.record_path[0] && (s.record.count || s.appended)) set_text(report->record, sizeof report->record, s.record_path);
        set_text(report->record_note, sizeof report->record_note, s.record_note);
    }
    tune_record_clear(&s.record);
    tune_record_clear(&s.here);
    return st;
}

/* The family's problem for (family, variant). */
static ptxkit_status family_problem(ptxkit_context *ctx, const char *where, const char *family, const char *variant,
                                    tune_variant *v, tune_problem *pr) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: context is NULL", where);
    if (!family) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: family is NULL", where);
    const tune_family *f = tune_family_find(family);
    if (!f) return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "%s: no tunable family '%s'", where, family);
    char why[256];
    ptxkit_status st = tune_variant_parse(f, variant, v, why, sizeof why);
    if (st != PTXKIT_SUCCESS) return record_error(ctx, st, "%s: %s", where, why);
    if (!ptxkit_jit_available())
        return record_error(ctx, PTXKIT_ERROR_NO_NVRTC, "%s: tuning compiles variants with NVRTC, which is not available",
                            where);
    return family_problem_init(pr, ctx, v);
}

/* gemm is a problem of its own (tune/gemm_problem.c), not a tune_family:
 * its parameters are a tile configuration and its size three sides. */
static ptxkit_status gemm_sizes(ptxkit_context *ctx, const char *variant, const size_t *sizes, int size_count,
                                const ptxkit_tune_options *options, ptxkit_tune_report *report) {
    if (!ptxkit_jit_available())
        return record_error(ctx, PTXKIT_ERROR_NO_NVRTC, "ptxkit_tune: tuning compiles variants with NVRTC, which is not available");
    tune_problem pr;
    ptxkit_status st = gemm_problem_init(&pr, ctx, variant);
    if (st != PTXKIT_SUCCESS) return st;
    st = tune_problem_run(&pr, sizes, size_count, options, report);
    gemm_problem_free(&pr);
    return st;
}

ptxkit_status tune_sizes(ptxkit_context *ctx, const char *family, const char *variant, const size_t *sizes,
                         int size_count, const ptxkit_tune_options *options, ptxkit_tune_report *report) {
    if (ctx && family && strcmp(family, GEMM_TUNE_FAMILY) == 0)
        return gemm_sizes(ctx, variant, sizes, size_count, options, report);
    tune_variant v;
    tune_problem pr;
    ptxkit_status st = family_problem(ctx, "ptxkit_tune", family, variant, &v, &pr);
    if (st != PTXKIT_SUCCESS) return st;
    for (int i = 0; sizes && i < size_count && i < PTXKIT_TUNE_MAX_SIZES; i++) {
        size_t bytes;
        if (!mul_size(sizes[i], v.elem_size, &bytes) || bytes > SIZE_MAX / 4) {
            family_problem_free(&pr);
            return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "ptxkit_tune: %zu items overflow a byte count", sizes[i]);
        }
    }
    st = tune_problem_run(&pr, sizes, size_count, options, report);
    family_problem_free(&pr);
    return st;
}

ptxkit_status tune_range_sizes(ptxkit_context *ctx, size_t n_min, size_t n_max, const ptxkit_tune_options *o,
                               size_t *sizes, int *size_count) {
    if (n_min == 0 || n_max < n_min)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune: sizes [%zu, %zu] are not 1 <= n_min <= n_max",
                            n_min, n_max);
    int step = o && o->size_step > 0 ? o->size_step : 4;
    int first = tune_bucket(n_min), last = tune_bucket(n_max);
    int count = 0;
    for (int b = first; b <= last && count < PTXKIT_TUNE_MAX_SIZES; b += step) {
        size_t n = (size_t)1 << b;
        sizes[count++] = n < n_min ? n_min : n;
    }
    if (tune_bucket(sizes[count - 1]) != last && count < PTXKIT_TUNE_MAX_SIZES) sizes[count++] = (size_t)1 << last;
    *size_count = count;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tune(ptxkit_context *ctx, const char *family, const char *variant, size_t n_min, size_t n_max,
                          const ptxkit_tune_options *options, ptxkit_tune_report *report) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune: context is NULL");
    ptxkit_tune_options o = options ? *options : (ptxkit_tune_options){0};
    ptxkit_status st = check_options(ctx, &o);
    if (st != PTXKIT_SUCCESS) return st;
    size_t sizes[PTXKIT_TUNE_MAX_SIZES];
    int size_count = 0;
    if ((st = tune_range_sizes(ctx, n_min, n_max, &o, sizes, &size_count)) != PTXKIT_SUCCESS) return st;
    return tune_sizes(ctx, family, variant, sizes, size_count, &o, report);
}

const char *ptxkit_tune_family_name_get(int index) {
    const tune_family *f = tune_family_at(index);
    if (f) return f->name;
    return index == tune_family_count() ? GEMM_TUNE_FAMILY : NULL;
}

ptxkit_status tune_problem_measure(tune_problem *pr, size_t n, const tune_point *points, int count, tune_measured *out,
                                   double *default_gbs, ptxkit_tune_progress_fn progress_fn, void *progress_user) {
    ptxkit_context *ctx = pr->ctx;
    if (n == 0 || count < 0 || (count > 0 && (!points || !out)))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "tune_measure: bad arguments");
    session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.pr = pr;
    s.t0 = now_ms();
    s.deadline = INFINITY;
    s.threads = default_threads();
    s.size_count = 1;
    s.n = n;
    s.bytes_moved = pr->ops->bytes ? pr->ops->bytes(pr, n) : 0;
    s.opt.progress = progress_fn;
    s.opt.progress_user = progress_user;
    tune_guard_enter();
    tune_rig r;
    ptxkit_status st = rig_open(&r, pr, n);
    bool opened = st == PTXKIT_SUCCESS;
    table t;
    memset(&t, 0, sizeof t);
    size_t *list = NULL;
    if (st == PTXKIT_SUCCESS) {
        /* A table of exactly the requested points. */
        t.count = (size_t)count;
        t.c = calloc(t.count ? t.count : 1, sizeof *t.c);
        list = malloc((t.count ? t.count : 1) * sizeof *list);
        if (!t.c || !list) st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune_measure: out of host memory");
    }
    if (st == PTXKIT_SUCCESS) {
        char why[256];
        for (int i = 0; i < count; i++) {
            t.c[i].cfg = points[i];
            t.c[i].legal = pr->ops->legal(pr, &points[i], n, why, sizeof why);
            list[i] = (size_t)i;
        }
        evaluate_list(&s, &r, &t, list, t.count, SEARCH_SAMPLES, "time", false);
        for (int i = 0; i < count; i++) {
            const candidate *c = &t.c[i];
            out[i] = c->state == C_TIMED ? (tune_measured){gbs_of(&s, c->ms), c->ms, c->min_ms, c->max_ms, c->samples}
                                         : (tune_measured){0};
        }
        if (default_gbs) {
            double m;
            retime(&s, &r, &pr->defaults, 1, 1, &m);
            *default_gbs = gbs_of(&s, m);
        }
    }
    if (opened) rig_close(&r);
    free(list);
    free(t.c);
    tune_guard_leave();
    return st;
}

ptxkit_status tune_measure(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                           const tune_config *configs, int count, tune_measured *out, double *default_gbs,
                           ptxkit_tune_progress_fn progress_fn, void *progress_user) {
    tune_variant v;
    tune_problem pr;
    ptxkit_status st = family_problem(ctx, "tune_measure", family, variant, &v, &pr);
    if (st != PTXKIT_SUCCESS) return st;
    if (n == 0 || count < 0 || (count > 0 && (!configs || !out))) {
        family_problem_free(&pr);
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "tune_measure: bad arguments");
    }
    tune_point *points = malloc((count > 0 ? (size_t)count : 1) * sizeof *points);
    if (!points) {
        family_problem_free(&pr);
        return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune_measure: out of host memory");
    }
    for (int i = 0; i < count; i++) points[i] = family_config_point(&configs[i]);
    st = tune_problem_measure(&pr, n, points, count, out, default_gbs, progress_fn, progress_user);
    free(points);
    family_problem_free(&pr);
    return st;
}

/* ---- the report's accessors -------------------------------------------- */

ptxkit_status ptxkit_tune_report_create(ptxkit_tune_report **out) {
    if (!out) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_report_create: out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? PTXKIT_SUCCESS : record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_tune_report_create: out of host memory");
}

void ptxkit_tune_report_destroy(ptxkit_tune_report *r) { free(r); }
const char *ptxkit_tune_report_family_get(const ptxkit_tune_report *r) { return r ? r->family : ""; }
const char *ptxkit_tune_report_variant_get(const ptxkit_tune_report *r) { return r ? r->variant : ""; }
int ptxkit_tune_report_size_count_get(const ptxkit_tune_report *r) { return r ? r->size_count : 0; }

const ptxkit_tune_result *ptxkit_tune_report_result_get(const ptxkit_tune_report *r, int index) {
    return r && index >= 0 && index < r->size_count ? &r->sizes[index] : NULL;
}

double ptxkit_tune_report_seconds_get(const ptxkit_tune_report *r) { return r ? r->seconds : 0; }
double ptxkit_tune_report_compile_seconds_get(const ptxkit_tune_report *r) { return r ? r->compile_seconds : 0; }
const char *ptxkit_tune_report_database_get(const ptxkit_tune_report *r) { return r ? r->database : ""; }
const char *ptxkit_tune_report_database_note_get(const ptxkit_tune_report *r) { return r ? r->database_note : ""; }
const char *ptxkit_tune_report_record_note_get(const ptxkit_tune_report *r) { return r ? r->record_note : ""; }

/* ---- public: explicit sizes, variants checked ahead, the record --------- */

ptxkit_status ptxkit_tune_sizes_run(ptxkit_context *ctx, const char *family, const char *variant, const size_t *sizes,
                                int size_count, const ptxkit_tune_options *options, ptxkit_tune_report *report) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_sizes_run: context is NULL");
    if (!family) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_sizes_run: family is NULL");
    if (!sizes || size_count < 1 || size_count > PTXKIT_TUNE_MAX_SIZES)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_tune_sizes_run: sizes is NULL or size_count %d is not 1..%d", size_count,
                            PTXKIT_TUNE_MAX_SIZES);
    for (int i = 0; i < size_count; i++)
        if (sizes[i] == 0)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_sizes_run: size %d is 0", i);
    return tune_sizes(ctx, family, variant, sizes, size_count, options, report);
}

ptxkit_status ptxkit_tune_variant_check(const char *family, const char *variant) {
    char why[256] = "";
    const size_t why_size = sizeof why;
    ptxkit_status st = PTXKIT_SUCCESS;
    const tune_family *f = family ? tune_family_find(family) : NULL;
    tune_variant v;
    if (!family) {
        snprintf(why, why_size, "family is NULL");
        st = PTXKIT_ERROR_INVALID_ARGUMENT;
    } else if (strcmp(family, GEMM_TUNE_FAMILY) == 0) {
        ptxkit_dtype type;
        gemm_class cls;
        if (!gemm_variant_parse(variant, &type, &cls)) {
            snprintf(why, why_size,
                     "gemm variants are <type>.<class>: float32 or float64, and square, small_m, small_n or small_k "
                     "(not '%s')",
                     variant);
            st = PTXKIT_ERROR_INVALID_ARGUMENT;
        }
    } else if (!f) {
        snprintf(why, why_size, "no tunable family '%s'", family);
        st = PTXKIT_ERROR_NOT_FOUND;
    } else if (tune_variant_parse(f, variant, &v, why, why_size) != PTXKIT_SUCCESS) {
        st = PTXKIT_ERROR_INVALID_ARGUMENT;
    }
    return st == PTXKIT_SUCCESS ? st : record_error(NULL, st, "ptxkit_tune_variant_check: %s", why);
}

ptxkit_status ptxkit_tune_report_record_get(const ptxkit_tune_report *r, const char **path, int *loaded, int *appended) {
    if (!r) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_report_record_get: report is NULL");
    if (path) *path = r->record;
    if (loaded) *loaded = r->record_loaded;
    if (appended) *appended = r->record_appended;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tune_report_prepared_get(const ptxkit_tune_report *r, int *kernels, int *threads) {
    if (!r) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_report_prepared_get: report is NULL");
    if (kernels) *kernels = r->kernels_prepared;
    if (threads) *threads = r->threads;
    return PTXKIT_SUCCESS;
}
