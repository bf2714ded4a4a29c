/* The memory lab's launchers and accounting: access patterns (access.cu),
 * structure layouts (aos.cu) and shared-memory banks (banks.cu). These
 * kernels exist to be measured, so they are compiled by NVRTC only (no
 * precompiled PTX) and accept the L2 eviction-priority operators 7 and 8
 * beside the library's load operators. They are user programs of the
 * library: kernel, grid size and launch through the public API. */
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "memlab.h"

enum { FOLD_MUL = 0x9E3779B1u, AOS_DEFAULT_BLOCK = 256 };

/* ---- load operators ---- */

const char *memlab_load_op_name(int op) {
    if (op == MEMLAB_LOAD_L2_EVICT_FIRST) return "L2:evict_first";
    if (op == MEMLAB_LOAD_L2_EVICT_LAST) return "L2:evict_last";
    return op >= 0 && op < PTXKIT_LOAD_OP_COUNT ? ptxkit_load_op_name((ptxkit_load_op)op) : NULL;
}

/* The device's compute capability as one number (90 for sm_90); 0 when
 * the context cannot say. */
static int device_arch(ptxkit_context *ctx) {
    ptxkit_device_info info;
    return ctx && ptxkit_device_info_get(ctx, &info) == PTXKIT_SUCCESS ? info.cc_major * 10 + info.cc_minor : 0;
}

bool memlab_load_op_supported(ptxkit_context *ctx, int op) {
    if (op < 0 || op >= MEMLAB_LOAD_OP_COUNT) return false;
    return op < PTXKIT_LOAD_OP_COUNT || device_arch(ctx) >= 80;
}

static ptxkit_status check_load_op(ptxkit_context *ctx, int op, const char *what) {
    if (op < 0 || op >= MEMLAB_LOAD_OP_COUNT)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s: load operator %d is not in [0, %d]", what, op,
                         MEMLAB_LOAD_OP_COUNT - 1);
    if (!memlab_load_op_supported(ctx, op))
        return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "%s: %s needs sm_80 or newer (this GPU is sm_%d)", what,
                         memlab_load_op_name(op), device_arch(ctx));
    return PTXKIT_SUCCESS;
}

/* requested, or fallback when 0: a power of two in [32, 1024] within the
 * device's limit. */
static ptxkit_status check_block_size(ptxkit_context *ctx, int requested, int fallback, int *out) {
    int b = requested ? requested : fallback;
    if (b < 32 || b > 1024 || (b & (b - 1)) != 0)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "block size %d is not a power of two in [32, 1024]", b);
    ptxkit_device_info info;
    if (ptxkit_device_info_get(ctx, &info) == PTXKIT_SUCCESS && info.max_threads_per_block &&
        b > info.max_threads_per_block)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "block size %d exceeds this GPU's limit of %d threads", b,
                         info.max_threads_per_block);
    *out = b;
    return PTXKIT_SUCCESS;
}

/* A lab kernel through NVRTC: BLOCK_SIZE and LOAD_OP plus `extra` defines. */
enum { MAX_DEFINES = 8 };
static ptxkit_status lab_kernel(ptxkit_context *ctx, const char *file, const char *entry, int block, int load_op,
                                const char *const *names, const long long *values, int count, ptxkit_kernel **k) {
    if (count + 2 > MAX_DEFINES) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s: too many defines", entry);
    char text[MAX_DEFINES][64];
    const char *defines[MAX_DEFINES];
    snprintf(text[0], sizeof text[0], "BLOCK_SIZE=%d", block);
    snprintf(text[1], sizeof text[1], "LOAD_OP=%d", load_op);
    for (int i = 0; i < count; i++) snprintf(text[i + 2], sizeof text[0], "%s=%lld", names[i], values[i]);
    for (int i = 0; i < count + 2; i++) defines[i] = text[i];
    return lab_kernel_get(ctx, file, entry, defines, count + 2, k);
}

static ptxkit_status launch_1d(ptxkit_kernel *k, unsigned grid, unsigned block, ptxkit_stream *stream, void **args) {
    return ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){block, 1, 1}, 0, stream, args);
}

static bool aligned(ptxkit_dptr p, size_t a) { return (p & (a - 1)) == 0; }

/* ---- access patterns ---- */

const char *memlab_pattern_name(memlab_pattern p) {
    static const char *const names[MEMLAB_PATTERN_COUNT] = {"offset", "stride", "vec8", "vec16",
                                                            "gather", "broadcast", "window"};
    return (unsigned)p < MEMLAB_PATTERN_COUNT ? names[p] : NULL;
}

static int access_items(const memlab_access *a) { return a->items ? a->items : MEMLAB_DEFAULT_ITEMS; }
static int access_block(const memlab_access *a) { return a->block_size ? a->block_size : MEMLAB_ACCESS_BLOCK; }

/* Threads of the grid: ceil(n / items) rounded up to whole blocks. */
static size_t access_threads(const memlab_access *a) {
    size_t items = (size_t)access_items(a), block = (size_t)access_block(a);
    if (items == 0 || block == 0 || a->n == 0) return 0;
    size_t per = a->n / items + (a->n % items != 0);
    return (per / block + (per % block != 0)) * block;
}

size_t memlab_access_input_words(const memlab_access *a) {
    size_t n = a->n;
    if (n == 0) return 0;
    switch (a->pattern) {
    case MEMLAB_OFFSET: return n + (size_t)a->param;
    case MEMLAB_STRIDE: return (n - 1) * (size_t)a->param + 1;
    case MEMLAB_VEC8: return 2 * n;
    case MEMLAB_VEC16: return 4 * n;
    case MEMLAB_GATHER: return n;
    case MEMLAB_BROADCAST: return (n - 1) / 32 + 1;
    case MEMLAB_WINDOW: return n + MEMLAB_WINDOW_WORDS - 1;
    default: return 0;
    }
}

size_t memlab_access_output_words(const memlab_access *a) {
    size_t t = access_threads(a);
    return a->per_thread ? t : t / 32;
}

ptxkit_status memlab_access_run(ptxkit_context *ctx, const memlab_access *a, ptxkit_stream *stream) {
    if (!ctx || !a) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "memlab_access_run: NULL argument");
    if ((unsigned)a->pattern >= MEMLAB_PATTERN_COUNT)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "access: unknown pattern %d", (int)a->pattern);
    ptxkit_status st = check_load_op(ctx, a->load_op, "access");
    if (st != PTXKIT_SUCCESS) return st;
    int block = 0;
    if ((st = check_block_size(ctx, a->block_size, MEMLAB_ACCESS_BLOCK, &block)) != PTXKIT_SUCCESS) return st;
    int items = access_items(a);
    if (items < 1 || items > 64)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "access: %d items per thread is not in [1, 64]", items);
    if (a->n == 0) return PTXKIT_SUCCESS;
    if (a->n > ((size_t)1 << 40) || a->param > ((uint64_t)1 << 40) ||
        (a->pattern == MEMLAB_STRIDE && a->param > 0 && (a->n - 1) > (SIZE_MAX / 4) / a->param))
        return ptxkit_last_error_set(PTXKIT_ERROR_OVERFLOW, "access: %zu elements with parameter %llu overflow", a->n,
                         (unsigned long long)a->param);
    if (a->pattern == MEMLAB_GATHER && a->n > ((size_t)1 << 32))
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "access: a gather index holds 32-bit words");
    if (!a->out || !a->in || (a->pattern == MEMLAB_GATHER && !a->index))
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "access: NULL device pointer");
    size_t width = a->pattern == MEMLAB_VEC8 ? 8 : a->pattern == MEMLAB_VEC16 ? 16 : 4;
    if (!aligned(a->in, width) || !aligned(a->out, 4) || !aligned(a->index, 4))
        return ptxkit_last_error_set(PTXKIT_ERROR_MISALIGNED, "access: input must be %zu-byte aligned, output and index 4-byte",
                         width);
    size_t threads = access_threads(a);
    if (threads / (size_t)block > 0x7fffffffu)
        return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "access: %zu elements need more than 2^31 blocks", a->n);
    static const char *const entries[MEMLAB_PATTERN_COUNT] = {"access_offset", "access_stride", "access_vec8",
                                                              "access_vec16", "access_gather", "access_broadcast",
                                                              "access_window"};
    static const char *const names[] = {"ITEMS", "FOLD_WARP", "WINDOW"};
    const long long values[] = {items, a->per_thread ? 0 : 1, MEMLAB_WINDOW_WORDS};
    ptxkit_kernel *fn;
    st = lab_kernel(ctx, "access.cu", entries[a->pattern], block, a->load_op, names, values, 3, &fn);
    if (st == PTXKIT_SUCCESS) {
        ptxkit_dptr out = a->out, in = a->in, index = a->index;
        unsigned long long n = a->n, param = a->param;
        void *with_param[] = {&out, &in, &n, &param};
        void *gather[] = {&out, &in, &index, &n};
        void *plain[] = {&out, &in, &n};
        void **args = a->pattern == MEMLAB_OFFSET || a->pattern == MEMLAB_STRIDE ? with_param
                      : a->pattern == MEMLAB_GATHER                              ? gather
                                                                                 : plain;
        st = launch_1d(fn, (unsigned)(threads / (size_t)block), (unsigned)block, stream, args);
    }
    return st;
}

/* Word index element e reads in the single-word patterns. */
static uint64_t access_address(const memlab_access *a, const uint32_t *index, uint64_t e) {
    switch (a->pattern) {
    case MEMLAB_OFFSET: return e + a->param;
    case MEMLAB_STRIDE: return e * a->param;
    case MEMLAB_GATHER: return index[e];
    case MEMLAB_BROADCAST: return e >> 5;
    default: return e;
    }
}

void memlab_access_reference(const memlab_access *a, const uint32_t *in, const uint32_t *index, uint32_t *out) {
    size_t threads = access_threads(a);
    size_t items = (size_t)access_items(a);
    uint32_t warp_sum = 0;
    for (size_t t = 0; t < threads; t++) {
        uint32_t acc = 0;
        for (size_t j = 0; j < items; j++) {
            uint64_t e = t + j * threads;
            if (e >= a->n) continue;
            switch (a->pattern) {
            case MEMLAB_VEC8:
            case MEMLAB_VEC16: {
                size_t w = a->pattern == MEMLAB_VEC8 ? 2 : 4;
                for (size_t k = 0; k < w; k++) acc = acc * FOLD_MUL + in[e * w + k];
                break;
            }
            case MEMLAB_WINDOW:
                for (size_t k = 0; k < MEMLAB_WINDOW_WORDS; k++) acc = acc * FOLD_MUL + in[e + k];
                break;
            default: acc = acc * FOLD_MUL + in[access_address(a, index, e)];
            }
        }
        if (a->per_thread) {
            out[t] = acc;
        } else {
            warp_sum += acc;
            if (t % 32 == 31) {
                out[t / 32] = warp_sum;
                warp_sum = 0;
            }
        }
    }
}

/* Distinct 32-byte sectors touched by 32 lanes reading `width` bytes at
 * byte offsets base + lane * step (base 32-byte aligned). */
static int sectors_of_request(uint64_t base, uint64_t step, int width) {
    uint64_t seen[64];
    int count = 0;
    for (uint64_t lane = 0; lane < 32; lane++) {
        uint64_t first = (base + lane * step) / 32, last = (base + lane * step + (uint64_t)width - 1) / 32;
        for (uint64_t s = first; s <= last; s++) {
            bool dup = false;
            for (int i = 0; i < count && !dup; i++) dup = seen[i] == s;
            if (!dup && count < 64) seen[count++] = s;
        }
    }
    return count;
}

void memlab_access_traffic(const memlab_access *a, double *app_bytes, double *sector_bytes) {
    double n = (double)a->n;
    double out_words = (double)memlab_access_output_words(a);
    double load_bytes = 0, sectors = 0; /* sectors per 32-element warp request group */
    switch (a->pattern) {
    case MEMLAB_OFFSET:
        load_bytes = 4 * n;
        sectors = sectors_of_request(4 * a->param, 4, 4);
        break;
    case MEMLAB_STRIDE:
        load_bytes = 4 * n;
        sectors = sectors_of_request(0, 4 * a->param, 4);
        break;
    case MEMLAB_VEC8:
        load_bytes = 8 * n;
        sectors = 8;
        break;
    case MEMLAB_VEC16:
        load_bytes = 16 * n;
        sectors = 16;
        break;
    case MEMLAB_GATHER:
        /* the index, coalesced, and 32 scattered words: in a large array
         * the lanes' words almost never share a sector */
        load_bytes = 8 * n;
        sectors = 4 + 32;
        break;
    case MEMLAB_BROADCAST:
        load_bytes = 4 * n;
        sectors = 1;
        break;
    case MEMLAB_WINDOW:
        load_bytes = 4.0 * MEMLAB_WINDOW_WORDS * n;
        for (int k = 0; k < MEMLAB_WINDOW_WORDS; k++) sectors += sectors_of_request(4 * (uint64_t)k, 4, 4);
        break;
    default: break;
    }
    /* per warp of 32 elements: sectors x 32 bytes, i.e. `sectors` bytes per element */
    double out_sectors = a->per_thread ? 4 * out_words : 32 * out_words;
    if (app_bytes) *app_bytes = load_bytes + 4 * out_words;
    if (sector_bytes) *sector_bytes = sectors * n + out_sectors;
}

/* Must match permute() in lab/kernels/access.cu. */
uint32_t memlab_permute(uint32_t e, unsigned bits, uint32_t seed) {
    uint32_t mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1u;
    unsigned s1 = bits / 2 > 0 ? bits / 2 : 1, s2 = bits / 3 > 0 ? bits / 3 : 1;
    uint32_t x = (e * 0x9E3779B1u + seed) & mask;
    x ^= x >> s1;
    x = (x * 0x85EBCA6Bu) & mask;
    x ^= x >> s2;
    x = (x * 0xC2B2AE35u + 0x27D4EB2Fu) & mask;
    x ^= x >> s1;
    return x;
}

ptxkit_status memlab_make_index(ptxkit_context *ctx, ptxkit_dptr index, size_t n, unsigned bits, uint32_t seed,
                                ptxkit_stream *stream) {
    if (!ctx) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "memlab_make_index: NULL context");
    if (bits > 32 || (bits < 32 && n > ((size_t)1 << bits)))
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "make_index: %zu elements do not fit %u bits", n, bits);
    if (n == 0) return PTXKIT_SUCCESS;
    if (!index || !aligned(index, 4))
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "make_index: NULL or misaligned index");
    ptxkit_kernel *fn;
    ptxkit_status st = lab_kernel(ctx, "access.cu", "access_make_index", MEMLAB_ACCESS_BLOCK, 0, NULL, NULL, 0, &fn);
    unsigned grid = 0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_grid_size_get(fn, MEMLAB_ACCESS_BLOCK, 0, n / MEMLAB_ACCESS_BLOCK + 1, &grid);
    if (st == PTXKIT_SUCCESS) {
        ptxkit_dptr p = index;
        unsigned long long count = n;
        unsigned b = bits, s = seed;
        void *args[] = {&p, &count, &b, &s};
        st = launch_1d(fn, grid, MEMLAB_ACCESS_BLOCK, stream, args);
    }
    return st;
}

/* ---- structure layouts ---- */

const char *memlab_layout_name(memlab_layout l) {
    static const char *const names[MEMLAB_LAYOUT_COUNT] = {"aos_naive", "soa", "aos_staged", "aos_aligned16"};
    return (unsigned)l < MEMLAB_LAYOUT_COUNT ? names[l] : NULL;
}

size_t memlab_layout_point_bytes(memlab_layout l) { return l == MEMLAB_AOS_ALIGNED ? 16 : 12; }

ptxkit_status memlab_aos_run(ptxkit_context *ctx, const memlab_aos *a, ptxkit_stream *stream) {
    if (!ctx || !a) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "memlab_aos_run: NULL argument");
    if ((unsigned)a->layout >= MEMLAB_LAYOUT_COUNT)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "aos: unknown layout %d", (int)a->layout);
    ptxkit_status st = check_load_op(ctx, a->load_op, "aos");
    if (st != PTXKIT_SUCCESS) return st;
    int block = 0;
    if ((st = check_block_size(ctx, a->block_size, AOS_DEFAULT_BLOCK, &block)) != PTXKIT_SUCCESS) return st;
    if (a->n == 0) return PTXKIT_SUCCESS;
    size_t bytes;
    if (__builtin_mul_overflow(a->n, (size_t)16, &bytes))
        return ptxkit_last_error_set(PTXKIT_ERROR_OVERFLOW, "aos: %zu points overflow", a->n);
    if (!a->in || !a->out) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "aos: NULL device pointer");
    size_t align = a->layout == MEMLAB_AOS_ALIGNED ? 16 : 4;
    if (!aligned(a->in, align) || !aligned(a->out, align))
        return ptxkit_last_error_set(PTXKIT_ERROR_MISALIGNED, "aos: %s needs %zu-byte aligned arrays",
                         memlab_layout_name(a->layout), align);
    static const char *const entries[MEMLAB_LAYOUT_COUNT] = {"aos_naive", "aos_soa", "aos_staged", "aos_aligned"};
    ptxkit_kernel *fn;
    st = lab_kernel(ctx, "aos.cu", entries[a->layout], block, a->load_op, NULL, NULL, 0, &fn);
    unsigned grid = 0;   /* the staged kernel's shared memory is static: occupancy counts it already */
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_grid_size_get(fn, block, 0, a->n / (size_t)block + 1, &grid);
    if (st == PTXKIT_SUCCESS) {
        ptxkit_dptr in = a->in, out = a->out;
        ptxkit_dptr ix = in, iy = in + 4 * a->n, iz = in + 8 * a->n;
        ptxkit_dptr ox = out, oy = out + 4 * a->n, oz = out + 8 * a->n;
        unsigned long long n = a->n;
        void *soa[] = {&ox, &oy, &oz, &ix, &iy, &iz, &n};
        void *plain[] = {&out, &in, &n};
        st = launch_1d(fn, grid, (unsigned)block, stream, a->layout == MEMLAB_SOA ? soa : plain);
    }
    return st;
}

void memlab_aos_traffic(const memlab_aos *a, double *app_bytes, double *sector_bytes) {
    double n = (double)a->n;
    /* sectors per warp of 32 points, loads + stores */
    double sectors = 0;
    switch (a->layout) {
    case MEMLAB_AOS_NAIVE: sectors = 2 * 3 * sectors_of_request(0, 12, 4); break;  /* 3 x 12 each way */
    case MEMLAB_SOA:
    case MEMLAB_AOS_STAGED: sectors = 2 * 3 * 4; break;
    case MEMLAB_AOS_ALIGNED: sectors = 2 * 16; break;
    default: break;
    }
    if (app_bytes) *app_bytes = 24 * n;
    if (sector_bytes) *sector_bytes = sectors * n;   /* sectors x 32 bytes per 32 points */
}

/* ---- shared-memory banks ---- */

ptxkit_status memlab_banks_run(ptxkit_context *ctx, const memlab_banks *b, ptxkit_stream *stream) {
    if (!ctx || !b) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "memlab_banks_run: NULL argument");
    const char *entry = b->word_bytes == 1 ? "banks_u8" : b->word_bytes == 4 ? "banks_u32" : b->word_bytes == 8 ? "banks_u64" : NULL;
    if (!entry) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "banks: word size %d is not 1, 4 or 8", b->word_bytes);
    if (b->stride < 0 || b->stride > MEMLAB_BANKS_MAX_STRIDE)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "banks: stride %d is not in [0, %d]", b->stride,
                         MEMLAB_BANKS_MAX_STRIDE);
    if (b->iters < 1 || b->iters > (1 << 20) || b->blocks < 1 || b->blocks > 65535)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "banks: iters %d or blocks %d out of range", b->iters,
                         b->blocks);
    if (!b->cycles || !b->sink || !aligned(b->cycles, 8) || !aligned(b->sink, 8))
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "banks: NULL or misaligned output");
    ptxkit_device_info info;
    ptxkit_status st = ptxkit_device_info_get(ctx, &info);
    if (st != PTXKIT_SUCCESS) return st;
    if (info.max_threads_per_block && info.max_threads_per_block < MEMLAB_BANKS_BLOCK)
        return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "banks: needs blocks of %d threads", MEMLAB_BANKS_BLOCK);
    static const char *const names[] = {"UNROLL", "SMEM_BYTES"};
    const long long values[] = {MEMLAB_BANKS_UNROLL, MEMLAB_BANKS_SMEM_BYTES};
    ptxkit_kernel *fn;
    st = lab_kernel(ctx, "banks.cu", entry, MEMLAB_BANKS_BLOCK, 0, names, values, 2, &fn);
    if (st == PTXKIT_SUCCESS) {
        ptxkit_dptr cycles = b->cycles, sink = b->sink;
        int stride = b->stride, iters = b->iters;
        void *args[] = {&cycles, &sink, &stride, &iters};
        st = launch_1d(fn, (unsigned)b->blocks, MEMLAB_BANKS_BLOCK, stream, args);
    }
    return st;
}

/* Must match banks_word() in lab/kernels/banks.cu. */
static uint32_t banks_word(uint32_t i) { return (i + 1u) * 2654435761u ^ (i >> 3); }

void memlab_banks_reference(const memlab_banks *b, uint64_t *sink) {
    uint64_t loads = (uint64_t)b->iters * MEMLAB_BANKS_UNROLL;
    bool any = false;
    for (int t = 0; t < MEMLAB_BANKS_BLOCK; t++) {
        uint32_t k = (uint32_t)(t % 32) * (uint32_t)b->stride;
        uint64_t acc;
        if (b->word_bytes == 1) {
            uint32_t v = (banks_word(k / 4) >> (8 * (k % 4))) & 0xffu;
            acc = (uint32_t)(v * (uint32_t)loads);
            any |= (uint32_t)acc == 0x5A5A5A5Au;
        } else if (b->word_bytes == 4) {
            acc = (uint32_t)(banks_word(k) * (uint32_t)loads);
            any |= (uint32_t)acc == 0x5A5A5A5Au;
        } else {
            uint64_t v = banks_word(2 * k) | (uint64_t)banks_word(2 * k + 1) << 32;
            acc = v * loads;
            any |= acc == 0x5A5A5A5Aull;
        }
        sink[t] = acc;
    }
    for (int t = 0; t < MEMLAB_BANKS_BLOCK; t++) sink[t] += any ? 1 : 0;
}

int memlab_banks_wavefronts(int word_bytes, int stride, int *ideal) {
    int group = word_bytes == 8 ? 16 : 32;   /* lanes served together: at most 128 bytes */
    int words_per_access = word_bytes == 8 ? 2 : 1;
    int total = 0;
    for (int g0 = 0; g0 < 32; g0 += group) {
        /* distinct 4-byte words per bank */
        uint32_t words[32][64];
        int counts[32] = {0};
        for (int lane = g0; lane < g0 + group; lane++) {
            uint64_t byte = (uint64_t)lane * (uint64_t)stride * (uint64_t)word_bytes;
            for (int w = 0; w < words_per_access; w++) {
                uint32_t word = (uint32_t)(byte / 4) + (uint32_t)w;
                int bank = (int)(word % 32);
                bool dup = false;
                for (int i = 0; i < counts[bank] && !dup; i++) dup = words[bank][i] == word;
                if (!dup) words[bank][counts[bank]++] = word;
            }
        }
        int worst = 1;
        for (int bank = 0; bank < 32; bank++)
            if (counts[bank] > worst) worst = counts[bank];
        total += worst;
    }
    if (ideal) *ideal = 32 / group;
    return total;
}
