/* A built-in family as a tuning problem: its five launch options are the
 * parameters, its public op is the launch, and its buffers are device
 * memory rotated when they would fit in L2, with a verification view (a
 * smaller, misaligned, ragged input) whose reference is the built-in
 * defaults' output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/embedded.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "tune/family_problem.h"

/* Rotate buffers until this many times the L2 size is touched between two
 * uses of one buffer, so no timed call finds its input in L2. */
#define ROTATE_L2_MULTIPLE 4
#define DEFAULT_L2_BYTES (64u << 20)
#define FILL_CHUNK_BYTES ((size_t)16 << 20)
#define MAX_SETS 64
/* The verification view: at most this many items, plus a ragged tail. */
#define VERIFY_MAX_LOG2 22
#define VERIFY_TAIL 13

typedef struct family_impl {
    tune_variant v;
    size_t n;
    int sets;
    ptxkit_dptr in[MAX_SETS], out[MAX_SETS];
    unsigned rotation;
    ptxkit_dptr verify_in, verify_out;
    size_t verify_n, verify_offset, verify_out_bytes;
    unsigned char *reference, *scratch; /* host: the defaults' output, and a candidate's */
} family_impl;

tune_config family_point_config(const tune_point *p) {
    tune_config c = {0};
    for (int i = 0; i < TUNE_PARAM_COUNT; i++) tune_config_set(&c, (tune_param)i, (int)p->v[i]);
    return c;
}

tune_point family_config_point(const tune_config *c) {
    tune_point p = {{0}};
    for (int i = 0; i < TUNE_PARAM_COUNT; i++) p.v[i] = tune_config_get(c, (tune_param)i);
    return p;
}

static launch_options options_of(const tune_point *p) {
    tune_config c = family_point_config(p);
    return tune_config_options(&c);
}

static bool fam_legal(const tune_problem *pr, const tune_point *p, size_t n, char *why, size_t why_size) {
    (void)n;
    const family_impl *f = pr->impl;
    tune_config c = family_point_config(p);
    return tune_config_legal(&f->v, &c, &pr->ctx->info, why, why_size);
}

/* Fills `bytes` at dst with the family's values: one chunk from the host,
 * replicated on the device. */
static ptxkit_status fill_device(tune_problem *pr, ptxkit_dptr dst, size_t bytes, uint64_t seed) {
    family_impl *f = pr->impl;
    if (bytes == 0) return PTXKIT_SUCCESS;
    size_t chunk = bytes < FILL_CHUNK_BYTES ? bytes : FILL_CHUNK_BYTES;
    unsigned char *host = malloc(chunk);
    if (!host) return record_error(pr->ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune: out of host memory");
    uint64_t state = seed;
    tune_fill_host(&f->v, host, chunk, &state);
    ptxkit_status st = ptxkit_memory_write(pr->ctx, dst, host, chunk);
    free(host);
    for (size_t done = chunk; st == PTXKIT_SUCCESS && done < bytes;) {
        size_t part = bytes - done < done ? bytes - done : done; /* doubling */
        st = ptxkit_memory_copy(pr->ctx, dst + done, dst, part);
        done += part;
    }
    return st;
}

static ptxkit_status choose_sets(tune_problem *pr, size_t working, size_t verify_bytes) {
    family_impl *f = pr->impl;
    size_t l2 = pr->ctx->info.l2_bytes > 0 ? (size_t)pr->ctx->info.l2_bytes : DEFAULT_L2_BYTES;
    size_t target = ROTATE_L2_MULTIPLE * l2;
    size_t sets = working >= target ? 1 : (target + working - 1) / working;
    if (sets > MAX_SETS) sets = MAX_SETS;
    size_t free_bytes = 0, total = 0;
    if (ptxkit_memory_info_get(pr->ctx, &free_bytes, &total) == PTXKIT_SUCCESS && free_bytes) {
        size_t usable = free_bytes / 10 * 8;
        while (sets > 1 && (sets * working + verify_bytes > usable)) sets--;
        if (working + verify_bytes > usable)
            return record_error(pr->ctx, PTXKIT_ERROR_OUT_OF_MEMORY,
                                "tune: %zu items of %s need %zu MiB of GPU memory, %zu MiB are free", f->n, f->v.name,
                                (working + verify_bytes) >> 20, free_bytes >> 20);
    }
    f->sets = (int)sets;
    return PTXKIT_SUCCESS;
}

static void fam_close(tune_problem *pr) {
    family_impl *f = pr->impl;
    for (int i = 0; i < MAX_SETS; i++) {
        if (f->in[i]) ptxkit_memory_free(pr->ctx, f->in[i]);
        if (f->out[i]) ptxkit_memory_free(pr->ctx, f->out[i]);
    }
    if (f->verify_in) ptxkit_memory_free(pr->ctx, f->verify_in);
    if (f->verify_out) ptxkit_memory_free(pr->ctx, f->verify_out);
    free(f->reference);
    free(f->scratch);
    tune_variant v = f->v;
    memset(f, 0, sizeof *f);
    f->v = v;
}

static ptxkit_status verify_on(tune_problem *pr, const tune_point *p, ptxkit_stream *stream, bool *same) {
    family_impl *f = pr->impl;
    const tune_family *fam = f->v.family;
    launch_options o = options_of(p);
    ptxkit_dptr in = f->verify_in + f->verify_offset, out = f->verify_out + f->verify_offset;
    /* A poisoned output: a variant that skips part of it is caught. */
    ptxkit_status st = ptxkit_memory_set8_async(pr->ctx, f->verify_out, 0xA5, f->verify_out_bytes + f->verify_offset, stream);
    if (st == PTXKIT_SUCCESS) st = fam->run(pr->ctx, &f->v, in, out, f->verify_n, &o, stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(pr->ctx, stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(pr->ctx, f->scratch, out, f->verify_out_bytes);
    if (st != PTXKIT_SUCCESS) return st;
    *same = f->reference ? memcmp(f->scratch, f->reference, f->verify_out_bytes) == 0 : true;
    return PTXKIT_SUCCESS;
}

static ptxkit_status fam_open(tune_problem *pr, size_t n) {
    family_impl *f = pr->impl;
    ptxkit_context *ctx = pr->ctx;
    const tune_variant *v = &f->v;
    const tune_family *fam = v->family;
    fam_close(pr);
    f->n = n;
    size_t in_bytes = fam->in_bytes(v, n), out_bytes = fam->out_bytes(v, n);
    if (n == 0 || in_bytes / n != (v->elem_size ? v->elem_size : 1) || in_bytes + out_bytes < in_bytes)
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "tune: %zu items of %s overflow a byte count", n, v->name);
    size_t vmax = (size_t)1 << VERIFY_MAX_LOG2;
    f->verify_n = (n < vmax ? n : vmax) + VERIFY_TAIL;
    f->verify_offset = v->elem_size > 4 ? v->elem_size : 4; /* element-aligned, not vector-aligned */
    f->verify_out_bytes = fam->out_bytes(v, f->verify_n);
    size_t verify_in_bytes = fam->in_bytes(v, f->verify_n) + f->verify_offset;
    size_t verify_out_alloc = f->verify_out_bytes + f->verify_offset;
    ptxkit_status st = choose_sets(pr, in_bytes + out_bytes, verify_in_bytes + verify_out_alloc);
    if (st != PTXKIT_SUCCESS) return st;

    int allocated = 0;
    for (; allocated < f->sets; allocated++) {
        if ((st = ptxkit_memory_alloc(ctx, in_bytes, &f->in[allocated])) != PTXKIT_SUCCESS) break;
        if ((st = ptxkit_memory_alloc(ctx, out_bytes, &f->out[allocated])) != PTXKIT_SUCCESS) {
            ptxkit_memory_free(ctx, f->in[allocated]);
            f->in[allocated] = 0;
            break;
        }
    }
    if (allocated == 0) return st;
    f->sets = allocated; /* fewer sets still measure, if less well */
    if ((st = ptxkit_memory_alloc(ctx, verify_in_bytes, &f->verify_in)) != PTXKIT_SUCCESS ||
        (st = ptxkit_memory_alloc(ctx, verify_out_alloc, &f->verify_out)) != PTXKIT_SUCCESS)
        goto fail;
    f->scratch = malloc(f->verify_out_bytes);
    unsigned char *reference = malloc(f->verify_out_bytes);
    if (!reference || !f->scratch) {
        free(reference);
        st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune: out of host memory");
        goto fail;
    }
    if ((st = fill_device(pr, f->in[0], in_bytes, 0x7e57ull + n)) != PTXKIT_SUCCESS ||
        (st = fill_device(pr, f->verify_in, verify_in_bytes, 0x5eedull ^ n)) != PTXKIT_SUCCESS) {
        free(reference);
        goto fail;
    }
    for (int i = 1; i < f->sets && st == PTXKIT_SUCCESS; i++)
        st = ptxkit_memory_copy(ctx, f->in[i], f->in[0], in_bytes);
    /* Device-to-device copies are not ordered with the rig's non-blocking stream. */
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    /* The reference: the built-in defaults on the verification view. */
    bool same;
    if (st == PTXKIT_SUCCESS) st = verify_on(pr, &pr->defaults, NULL, &same);
    if (st != PTXKIT_SUCCESS) {
        free(reference);
        goto fail;
    }
    memcpy(reference, f->scratch, f->verify_out_bytes);
    f->reference = reference;
    return PTXKIT_SUCCESS;
fail:
    fam_close(pr);
    return st;
}

static ptxkit_status fam_launch(tune_problem *pr, const tune_point *p, ptxkit_stream *stream) {
    family_impl *f = pr->impl;
    launch_options o = options_of(p);
    int set = (int)(f->rotation++ % (unsigned)f->sets);
    return f->v.family->run(pr->ctx, &f->v, f->in[set], f->out[set], f->n, &o, stream);
}

/* The family's compile-only hook where it has one, else one call of the op
 * on the verification view (small: a slow variant costs little). */
static ptxkit_status fam_prepare(tune_problem *pr, const tune_point *p) {
    family_impl *f = pr->impl;
    const tune_family *fam = f->v.family;
    launch_options o = options_of(p);
    if (fam->prepare) return fam->prepare(pr->ctx, &f->v, &o);
    ptxkit_status st = fam->run(pr->ctx, &f->v, f->verify_in + f->verify_offset, f->verify_out + f->verify_offset,
                                f->verify_n, &o, NULL);
    return st == PTXKIT_SUCCESS ? ptxkit_stream_synchronize(pr->ctx, NULL) : st;
}

static double fam_bytes(const tune_problem *pr, size_t n) {
    const family_impl *f = pr->impl;
    return f->v.family->bytes_moved(&f->v, n);
}

static void fam_config(const tune_problem *pr, const tune_point *p, ptxkit_config *out) {
    const family_impl *f = pr->impl;
    launch_options o = options_of(p);
    memset(out, 0, sizeof *out);
    if (f->v.family->public_config) f->v.family->public_config(&o, out);
}

static const tune_problem_ops family_ops = {
    .config = fam_config,
    .legal = fam_legal,
    .open = fam_open,
    .close = fam_close,
    .prepare = fam_prepare,
    .launch = fam_launch,
    .verify = verify_on,
    .bytes = fam_bytes,
};

ptxkit_status family_problem_init(tune_problem *pr, ptxkit_context *ctx, const tune_variant *v) {
    memset(pr, 0, sizeof *pr);
    family_impl *f = calloc(1, sizeof *f);
    if (!f) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune: out of host memory");
    f->v = *v;
    pr->ctx = ctx;
    pr->impl = f;
    pr->ops = &family_ops;
    snprintf(pr->family, sizeof pr->family, "%s", v->family->name);
    snprintf(pr->variant, sizeof pr->variant, "%s", v->name);
    pr->code = embedded_sources_digest();
    tune_space space;
    tune_space_for(v, &ctx->info, &space);
    pr->param_count = TUNE_PARAM_COUNT;
    for (int i = 0; i < TUNE_PARAM_COUNT; i++) {
        snprintf(pr->names[i], sizeof pr->names[i], "%s", tune_param_name((tune_param)i));
        pr->counts[i] = space.count[i];
        for (int k = 0; k < space.count[i]; k++) pr->values[i][k] = space.values[i][k];
        pr->primary[i] = v->family->primary[i];
    }
    /* the search starts at the family's start values where the space has them */
    tune_point start = family_config_point(&v->family->start);
    for (int i = 0; i < TUNE_PARAM_COUNT; i++) {
        bool present = false;
        for (int k = 0; k < pr->counts[i]; k++) present = present || pr->values[i][k] == start.v[i];
        if (!present) start.v[i] = pr->counts[i] ? pr->values[i][0] : 0;
    }
    pr->start = start;
    memset(&pr->defaults, 0, sizeof pr->defaults); /* every option 0: the op's built-in choice */
    return PTXKIT_SUCCESS;
}

void family_problem_free(tune_problem *pr) {
    if (!pr || !pr->impl) return;
    free(pr->impl);
    pr->impl = NULL;
}
