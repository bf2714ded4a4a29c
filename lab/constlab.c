/* The constant-memory lab's launcher, table and CPU reference
 * (lab/kernels/const_lab.cu; contract in constlab.h). A user program of
 * the library: kernel, grid size and launch through the public API. */
#include <math.h>
#include <stdio.h>

#include "constlab.h"
#include "lab.h"

static const char FILE_NAME[] = "const_lab.cu";

const char *constlab_store_name(constlab_store s) {
    static const char *const names[CONSTLAB_STORE_COUNT] = {"constant", "global", "nc", "shared", "copy"};
    return (unsigned)s < CONSTLAB_STORE_COUNT ? names[s] : NULL;
}

const char *constlab_pattern_name(bool divergent) { return divergent ? "divergent" : "uniform"; }

static int taps_of(const constlab_poly *p) { return p->taps ? p->taps : CONSTLAB_DEFAULT_TAPS; }

float constlab_coefficient(int m) { return (float)((m * 5 + 3) % 17 - 8) / 8.0f; }

size_t constlab_table_words(int taps) { return taps > 0 ? 2 * (size_t)taps : 0; }

void constlab_table(int taps, float *table) {
    for (int m = 0; m < 2 * taps; m++) table[m] = constlab_coefficient(m % taps);
}

ptxkit_status constlab_table_write(ptxkit_context *ctx, ptxkit_dptr table, int taps) {
    if (!ctx || !table) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constlab_table_write: NULL argument");
    if (taps < 1 || taps > CONSTLAB_MAX_TAPS)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constant: %d taps is not in [1, %d]", taps, CONSTLAB_MAX_TAPS);
    float host[2 * CONSTLAB_MAX_TAPS];
    constlab_table(taps, host);
    return ptxkit_memory_write(ctx, table, host, constlab_table_words(taps) * sizeof(float));
}

int constlab_addresses_per_read(const constlab_poly *p) {
    if (p->store == CONSTLAB_COPY) return 0;
    int taps = taps_of(p);
    return p->divergent ? (taps < 32 ? taps : 32) : 1;
}

double constlab_streamed_bytes(const constlab_poly *p) { return 8.0 * (double)p->n; }

/* The table offset of vector v: the kernel's offset_of, in its 32-bit
 * arithmetic. */
static unsigned offset_of(const constlab_poly *p, uint64_t v) {
    unsigned b = (unsigned)(v >> 5);
    if (p->divergent) b += (unsigned)v & 31u;
    return b % (unsigned)taps_of(p);
}

void constlab_reference(const constlab_poly *p, const float *in, float *out) {
    int taps = taps_of(p);
    float table[2 * CONSTLAB_MAX_TAPS];
    if (taps < 1 || taps > CONSTLAB_MAX_TAPS) return;
    constlab_table(taps, table);
    for (size_t i = 0; i < p->n; i++) {
        if (p->store == CONSTLAB_COPY) {
            out[i] = in[i];
            continue;
        }
        const float *c = table + offset_of(p, i / 4);
        float y = c[0];
        for (int j = 1; j < taps; j++) y = fmaf(y, in[i], c[j]);
        out[i] = y;
    }
}

/* One variant's kernel defines. The coefficient table of a __constant__
 * variant travels as text (CONST_COEFS) because the public API cannot yet
 * write a module variable; ptxkit_module_variable_write will replace it.
 * COPY ignores taps and pattern, so one kernel serves every copy row. */
enum { DEFINES = 6, COEFS_TEXT = 16 + 10 * 2 * CONSTLAB_MAX_TAPS };
typedef struct variant {
    int block, count;
    char text[DEFINES - 1][32];
    char coefs[COEFS_TEXT];
    const char *defines[DEFINES];
} variant;

/* Checks p's store, taps and block size (against the device's limit when
 * ctx is given) and fills v. */
static ptxkit_status variant_of(ptxkit_context *ctx, const constlab_poly *p, variant *v) {
    if ((unsigned)p->store >= CONSTLAB_STORE_COUNT)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constant: unknown store %d", (int)p->store);
    int taps = taps_of(p), b = p->block_size ? p->block_size : CONSTLAB_BLOCK;
    if (taps < 1 || taps > CONSTLAB_MAX_TAPS)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constant: %d taps is not in [1, %d]", taps, CONSTLAB_MAX_TAPS);
    if (b < 32 || b > 1024 || (b & (b - 1)) != 0)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constant: block size %d is not a power of two in [32, 1024]",
                         b);
    ptxkit_device_info info;
    if (ctx && ptxkit_device_info_get(ctx, &info) == PTXKIT_SUCCESS && info.max_threads_per_block &&
        b > info.max_threads_per_block)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constant: block size %d exceeds this GPU's limit of %d", b,
                         info.max_threads_per_block);
    bool copy = p->store == CONSTLAB_COPY;
    if (copy) taps = 1;
    v->block = b;
    snprintf(v->text[0], sizeof v->text[0], "BLOCK_SIZE=%d", b);
    snprintf(v->text[1], sizeof v->text[1], "TAPS=%d", taps);
    snprintf(v->text[2], sizeof v->text[2], "STORE=%d", (int)p->store);
    snprintf(v->text[3], sizeof v->text[3], "DIVERGENT=%d", copy ? 0 : p->divergent);
    snprintf(v->text[4], sizeof v->text[4], "ITEMS=%d", CONSTLAB_ITEMS);
    for (int i = 0; i < DEFINES - 1; i++) v->defines[i] = v->text[i];
    v->count = DEFINES - 1;
    if (p->store != CONSTLAB_CONSTANT) return PTXKIT_SUCCESS;
    size_t used = (size_t)snprintf(v->coefs, sizeof v->coefs, "CONST_COEFS=");
    for (int m = 0; m < 2 * taps; m++)  /* multiples of 1/8: three decimals are exact */
        used += (size_t)snprintf(v->coefs + used, sizeof v->coefs - used, "%s%.3ff", m ? "," : "",
                                 (double)constlab_coefficient(m % taps));
    v->defines[v->count++] = v->coefs;
    return PTXKIT_SUCCESS;
}

ptxkit_status constlab_poly_run(ptxkit_context *ctx, const constlab_poly *p, ptxkit_stream *stream) {
    if (!ctx || !p) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constlab_poly_run: NULL argument");
    variant v;
    ptxkit_status st = variant_of(ctx, p, &v);
    if (st != PTXKIT_SUCCESS || p->n == 0) return st;
    if (p->n > ((size_t)1 << 40))
        return ptxkit_last_error_set(PTXKIT_ERROR_OVERFLOW, "constant: %zu elements (at most 2^40)", p->n);
    bool needs_table = p->store == CONSTLAB_GLOBAL || p->store == CONSTLAB_NC || p->store == CONSTLAB_SHARED;
    if (!p->out || !p->in || (needs_table && !p->table))
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constant: NULL device pointer");
    if ((p->out | p->in) & 15u || (p->table & 3u))
        return ptxkit_last_error_set(PTXKIT_ERROR_MISALIGNED,
                         "constant: input and output must be 16-byte aligned, the table 4-byte");
    ptxkit_kernel *k = NULL;
    st = lab_kernel_get(ctx, FILE_NAME, "const_poly", v.defines, v.count, &k);
    unsigned grid = p->grid;
    size_t wanted = p->n / 4 / (size_t)v.block + 1;
    if (st == PTXKIT_SUCCESS && grid == 0) st = ptxkit_kernel_grid_size_get(k, v.block, 0, wanted, &grid);
    if (st != PTXKIT_SUCCESS) return st;
    ptxkit_dptr out = p->out, in = p->in, table = p->table;
    unsigned long long n = p->n;
    void *args[] = {&out, &in, &n, &table};
    return ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)v.block, 1, 1}, 0, stream, args);
}

ptxkit_status constlab_poly_compile(const constlab_poly *p, int arch, ptxkit_compiled *out) {
    if (!p || !out) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constlab_poly_compile: NULL argument");
    variant v;
    ptxkit_program *program = NULL;
    ptxkit_status st = variant_of(NULL, p, &v);
    if (st == PTXKIT_SUCCESS) st = lab_program_create(FILE_NAME, &program);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_compile(program, "const_poly", v.defines, v.count, arch, 1, out);
    ptxkit_program_destroy(program);
    return st;
}

ptxkit_status constlab_fill(ptxkit_context *ctx, ptxkit_dptr x, size_t n, uint32_t seed, ptxkit_stream *stream) {
    if (!ctx || (!x && n)) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "constlab_fill: NULL argument");
    if (n == 0) return PTXKIT_SUCCESS;
    char block_define[32];
    snprintf(block_define, sizeof block_define, "BLOCK_SIZE=%d", CONSTLAB_BLOCK);
    const char *defines[] = {block_define, "STORE=4"};
    ptxkit_kernel *k = NULL;
    unsigned grid = 0;
    ptxkit_status st = lab_kernel_get(ctx, FILE_NAME, "const_fill", defines, 2, &k);
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_grid_size_get(k, CONSTLAB_BLOCK, 0, n / CONSTLAB_BLOCK + 1, &grid);
    if (st != PTXKIT_SUCCESS) return st;
    unsigned long long count = n;
    unsigned s = seed;
    void *args[] = {&x, &count, &s};
    return ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){CONSTLAB_BLOCK, 1, 1}, 0, stream, args);
}
