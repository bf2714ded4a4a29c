/* Parameter spaces of the tunable families (each declared by its
 * descriptor, families/<name>/<name>.c) and the rules that prune configurations
 * which cannot launch or would spill, before anything is compiled. */
#include <stdio.h>
#include <string.h>

#include "tune/params.h"

/* ---- configurations ---------------------------------------------------- */

static const char *const param_names[TUNE_PARAM_COUNT] = {"block", "items", "vec", "bpsm", "load"};

const char *tune_param_name(tune_param p) { return (unsigned)p < TUNE_PARAM_COUNT ? param_names[p] : "?"; }

int tune_config_get(const tune_config *c, tune_param p) {
    switch (p) {
    case TUNE_BLOCK: return c->block_size;
    case TUNE_ITEMS: return c->items_per_thread;
    case TUNE_VECTOR: return c->vector_bytes;
    case TUNE_BPSM: return c->blocks_per_sm;
    case TUNE_LOAD: return (int)c->load_op;
    default: return 0;
    }
}

void tune_config_set(tune_config *c, tune_param p, int value) {
    switch (p) {
    case TUNE_BLOCK: c->block_size = value; break;
    case TUNE_ITEMS: c->items_per_thread = value; break;
    case TUNE_VECTOR: c->vector_bytes = value; break;
    case TUNE_BPSM: c->blocks_per_sm = value; break;
    case TUNE_LOAD: c->load_op = (ptxkit_load_op)value; break;
    default: break;
    }
}

bool tune_config_equal(const tune_config *a, const tune_config *b) {
    for (int p = 0; p < TUNE_PARAM_COUNT; p++)
        if (tune_config_get(a, (tune_param)p) != tune_config_get(b, (tune_param)p)) return false;
    return true;
}

launch_options tune_config_options(const tune_config *c) {
    launch_options o = {0};
    o.path = PTXKIT_PATH_JIT;
    o.block_size = c->block_size;
    o.items_per_thread = c->items_per_thread;
    o.vector_bytes = c->vector_bytes;
    o.blocks_per_sm = c->blocks_per_sm;
    o.load_op = c->load_op;
    return o;
}

tune_config tune_config_from_options(const launch_options *o) {
    tune_config c = {o->block_size, o->items_per_thread, o->vector_bytes, o->blocks_per_sm, o->load_op};
    return c;
}

void tune_config_format(const tune_config *c, char *buf, size_t size) {
    char v[TUNE_PARAM_COUNT][16];
    for (int p = 0; p < TUNE_PARAM_COUNT; p++) {
        int x = tune_config_get(c, (tune_param)p);
        if (p == TUNE_LOAD) {
            const char *name = ptxkit_load_op_name((ptxkit_load_op)x);
            snprintf(v[p], sizeof v[p], "%s", name ? name : "?");
        } else if (x == 0) {
            snprintf(v[p], sizeof v[p], "-");
        } else {
            snprintf(v[p], sizeof v[p], "%d", x);
        }
    }
    snprintf(buf, size, "block=%s items=%s vec=%s bpsm=%s load=%s", v[0], v[1], v[2], v[3], v[4]);
}

/* ---- the families ------------------------------------------------------ */

static bool in_list(const int *list, int value, int terminator) {
    for (int i = 0; i < TUNE_MAX_VALUES && list[i] != terminator; i++)
        if (list[i] == value) return true;
    return false;
}

/* The families' descriptors (families/<name>/<name>.c) hold their spaces and hooks;
 * those with hooks are tuned here, in the table's order. */
static bool tuned_here(const family_desc *f) { return f && f->parse_variant; }

int tune_family_count(void) {
    int n = 0;
    for (int i = 0; i < family_count(); i++) n += tuned_here(family_at(i));
    return n;
}

const tune_family *tune_family_at(int index) {
    for (int i = 0, k = 0; i < family_count(); i++)
        if (tuned_here(family_at(i)) && k++ == index) return family_at(i);
    return NULL;
}

const tune_family *tune_family_find(const char *name) {
    const family_desc *f = family_find(name);
    return tuned_here(f) ? f : NULL;
}

ptxkit_status tune_variant_parse(const tune_family *f, const char *variant, tune_variant *out, char *why,
                                 size_t why_size) {
    memset(out, 0, sizeof *out);
    if (!f) {
        snprintf(why, why_size, "no such family");
        return PTXKIT_ERROR_NOT_FOUND;
    }
    const char *name = variant && *variant ? variant : f->default_variant;
    if (strlen(name) >= sizeof out->name) {
        snprintf(why, why_size, "variant name too long");
        return PTXKIT_ERROR_INVALID_ARGUMENT;
    }
    return f->parse_variant(f, name, out, why, why_size) ? PTXKIT_SUCCESS : PTXKIT_ERROR_INVALID_ARGUMENT;
}

/* ---- spaces and constraints -------------------------------------------- */

static int device_max_block(const ptxkit_device_info *info) {
    int m = info && info->max_threads_per_block > 0 ? info->max_threads_per_block : 1024;
    return m < 1024 ? m : 1024;
}

/* Vector widths narrower than an element cannot load whole elements. */
static bool vector_fits(const tune_variant *v, int vec) { return vec == 0 || (size_t)vec >= v->elem_size; }

void tune_space_for(const tune_variant *v, const ptxkit_device_info *info, tune_space *out) {
    memset(out, 0, sizeof *out);
    const tune_family *f = v->family;
    for (int b = 32; b <= device_max_block(info) && out->count[TUNE_BLOCK] < TUNE_MAX_VALUES; b *= 2)
        out->values[TUNE_BLOCK][out->count[TUNE_BLOCK]++] = b;
    const int *lists[TUNE_PARAM_COUNT] = {NULL, f->items, f->vectors, f->bpsm, f->loads};
    for (int p = TUNE_ITEMS; p < TUNE_PARAM_COUNT; p++) {
        /* 0 is a real choice of bpsm (occupancy) and load (plain ld) */
        int terminator = p == TUNE_LOAD || p == TUNE_BPSM ? -1 : 0;
        for (int i = 0; i < TUNE_MAX_VALUES; i++) {
            int x = lists[p][i];
            if (x == terminator) break;
            if (p == TUNE_VECTOR && !vector_fits(v, x)) continue;
            if (p == TUNE_BPSM && x > 0 && info && info->max_blocks_per_sm > 0 && x > info->max_blocks_per_sm) continue;
            out->values[p][out->count[p]++] = x;
        }
        if (out->count[p] == 0) out->values[p][out->count[p]++] = 0;
    }
}

bool tune_config_legal(const tune_variant *v, const tune_config *c, const ptxkit_device_info *info, char *why,
                       size_t why_size) {
    const tune_family *f = v->family;
    int block = c->block_size;
    if (block != 0 && (block < 32 || block > device_max_block(info) || (block & (block - 1)) != 0)) {
        snprintf(why, why_size, "block size %d is not a power of two in [32, %d]", block, device_max_block(info));
        return false;
    }
    if (c->items_per_thread != 0 && !in_list(f->items, c->items_per_thread, 0)) {
        snprintf(why, why_size, "%s does not take %d items per thread", f->name, c->items_per_thread);
        return false;
    }
    if (c->vector_bytes != 0 && (!in_list(f->vectors, c->vector_bytes, 0) || !vector_fits(v, c->vector_bytes))) {
        snprintf(why, why_size, "%s %s does not load %d-byte vectors", f->name, v->name, c->vector_bytes);
        return false;
    }
    if (c->blocks_per_sm < 0 || (c->blocks_per_sm != 0 && !in_list(f->bpsm, c->blocks_per_sm, -1))) {
        snprintf(why, why_size, "%s does not take %d blocks per SM", f->name, c->blocks_per_sm);
        return false;
    }
    if ((unsigned)c->load_op >= PTXKIT_LOAD_OP_COUNT || !in_list(f->loads, (int)c->load_op, -1)) {
        snprintf(why, why_size, "load operator %d is not one of %s's", (int)c->load_op, f->name);
        return false;
    }
    if (f->check && !f->check(v, c, why, why_size)) return false;
    if (!info) return true;

    /* Limits of the SM: what cannot launch, or would only spill. */
    int threads = block ? block : f->start.block_size;
    int bpsm = c->blocks_per_sm;
    if (bpsm > 0 && info->max_blocks_per_sm > 0 && bpsm > info->max_blocks_per_sm) {
        snprintf(why, why_size, "%d blocks per SM exceeds the device's %d", bpsm, info->max_blocks_per_sm);
        return false;
    }
    if (bpsm > 0 && info->max_threads_per_sm > 0 && (long long)bpsm * threads > info->max_threads_per_sm) {
        snprintf(why, why_size, "%d blocks of %d threads exceed the SM's %d threads", bpsm, threads,
                 info->max_threads_per_sm);
        return false;
    }
    if (bpsm > 0 && f->max_grid > 0 && info->sm_count > 0 && (long long)bpsm * info->sm_count > f->max_grid) {
        snprintf(why, why_size, "%d blocks per SM on %d SMs exceed the %d blocks one %s launch may have", bpsm,
                 info->sm_count, f->max_grid, f->name);
        return false;
    }
    /* Registers: a kernel with __launch_bounds__ is compiled to fit its
     * block (ptxas spills instead, which the timing shows), so only a family
     * without them can ask for more than the SM has. */
    int regs = f->registers ? f->registers(v, c) : 0;
    if (!f->min_blocks && regs > 0) {
        if (regs > 255 || (info->regs_per_block > 0 && (long long)regs * threads > info->regs_per_block)) {
            snprintf(why, why_size, "about %d registers x %d threads exceed the %d registers of a block: cannot launch",
                     regs, threads, info->regs_per_block);
            return false;
        }
        if (bpsm > 0 && info->regs_per_sm > 0 && (long long)regs * threads * bpsm > info->regs_per_sm) {
            snprintf(why, why_size, "%d blocks of %d threads x about %d registers exceed the SM's %d registers", bpsm,
                     threads, regs, info->regs_per_sm);
            return false;
        }
    }
    int shared = f->shared_bytes(v, c);
    int block_limit = f->dynamic_shared && info->shared_per_block_optin > 0 ? info->shared_per_block_optin
                                                                            : info->shared_per_block;
    if (block_limit > 0 && shared > block_limit) {
        snprintf(why, why_size, "%d bytes of shared memory exceed the block limit of %d", shared, block_limit);
        return false;
    }
    if (bpsm > 0 && info->shared_per_sm > 0 && (long long)shared * bpsm > info->shared_per_sm) {
        snprintf(why, why_size, "%d blocks x %d bytes of shared memory exceed the SM's %d", bpsm, shared,
                 info->shared_per_sm);
        return false;
    }
    return true;
}

size_t tune_space_size(const tune_space *s) {
    size_t total = 1;
    for (int p = 0; p < TUNE_PARAM_COUNT; p++) total *= (size_t)(s->count[p] ? s->count[p] : 1);
    return total;
}

void tune_space_config(const tune_space *s, size_t index, tune_config *out) {
    memset(out, 0, sizeof *out);
    for (int p = TUNE_PARAM_COUNT - 1; p >= 0; p--) {
        size_t radix = (size_t)(s->count[p] ? s->count[p] : 1);
        tune_config_set(out, (tune_param)p, s->count[p] ? s->values[p][index % radix] : 0);
        index /= radix;
    }
}

size_t tune_space_index(const tune_space *s, const tune_config *c) {
    size_t index = 0;
    for (int p = 0; p < TUNE_PARAM_COUNT; p++) {
        int radix = s->count[p] ? s->count[p] : 1, digit = -1;
        for (int i = 0; i < s->count[p]; i++)
            if (s->values[p][i] == tune_config_get(c, (tune_param)p)) digit = i;
        if (s->count[p] == 0 && tune_config_get(c, (tune_param)p) == 0) digit = 0;
        if (digit < 0) return (size_t)-1;
        index = index * (size_t)radix + (size_t)digit;
    }
    return index;
}

/* ---- inputs ------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void tune_fill_host(const tune_variant *v, void *buf, size_t bytes, uint64_t *state) {
    unsigned char *p = buf;
    size_t i = 0;
    if (v->type == PTXKIT_FLOAT32 && v->elem_size == 4) {
        for (; i + 4 <= bytes; i += 4) {
            float x = (float)(1 + splitmix(state) % 3);
            memcpy(p + i, &x, 4);
        }
    } else if (v->type == PTXKIT_FLOAT64 && v->elem_size == 8) {
        for (; i + 8 <= bytes; i += 8) {
            double x = (double)(1 + splitmix(state) % 3);
            memcpy(p + i, &x, 8);
        }
    }
    for (; i < bytes; i += 8) {
        uint64_t x = splitmix(state) | 1; /* never a zero word */
        memcpy(p + i, &x, bytes - i < 8 ? bytes - i : 8);
    }
}
