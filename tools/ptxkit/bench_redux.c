/* ptxkit bench redux: the lecture's claim that __reduce_*_sync (redux.sync)
 * is about 10x faster than the shuffle fan-in, measured per operator on
 * this GPU. Each warp runs a dependent chain of reductions (each input
 * depends on the last result) and reads clock64 around it: with one warp
 * per SM the cycles per reduction are its latency; with 32 warps per SM
 * the SM's cycles per reduction are its throughput. Floats, which
 * redux.sync does not take before sm_100, go through integers: max through
 * the order-preserving integer image of a float, sum in 16.16 fixed point,
 * next to the same reduction done in float with shuffles. Every lane's
 * final value is checked against a CPU replay of the chain. Kernels:
 * lab/kernels/async_lab.cu (redux_chain) through the public API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "lab.h"
#include "commands.h"

enum { OPS = 8 };
static const char *const op_names[OPS] = {"add", "min", "max", "and", "or", "xor", "float max", "float sum"};
static const char *const way_names[3] = {"shuffle fan-in", "redux.sync", "float shuffles"};

static uint32_t combine(int op, uint32_t a, uint32_t b) {
    switch (op) {
    case 0: case 7: return a + b;
    case 1: return (int32_t)a < (int32_t)b ? a : b;
    case 2: case 6: return (int32_t)a > (int32_t)b ? a : b;
    case 3: return a & b;
    case 4: return a | b;
    default: return a ^ b;
    }
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The chain of one warp, as redux_chain computes it. */
static void replay(int op, unsigned reps, uint32_t v[32]) {
    for (unsigned r = 0; r < reps; r++) {
        uint32_t x[32];
        for (uint32_t l = 0; l < 32; l++) x[l] = v[l] ^ (l * 0x9e3779b9u + r);
        if (op < 6) {
            uint32_t red = x[0];
            for (int l = 1; l < 32; l++) red = combine(op, red, x[l]);
            for (uint32_t l = 0; l < 32; l++) v[l] = red + l;
        } else if (op == 6) {
            float m = -INFINITY;
            for (int l = 0; l < 32; l++) {
                float f = (float)(int32_t)(x[l] & 0xffffffu) * (1.0f / 8388608.0f) - 1.0f;
                m = f > m ? f : m;
            }
            for (uint32_t l = 0; l < 32; l++) v[l] = float_bits(m) + l;
        } else {
            uint32_t sum = 0;
            for (int l = 0; l < 32; l++) sum += x[l] & 0xffffu;
            float f = (float)sum * (1.0f / 65536.0f);
            for (uint32_t l = 0; l < 32; l++) v[l] = float_bits(f) + l;
        }
    }
}

typedef struct redux_run {
    ptxkit_kernel *k;
    unsigned grid, block;
    ptxkit_dptr seed, out, cycles;
} redux_run;

static ptxkit_status launch(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    (void)ctx;
    redux_run *r = arg;
    void *args[] = {&r->seed, &r->out, &r->cycles};
    return ptxkit_kernel_launch(r->k, (ptxkit_dim3){r->grid, 1, 1}, (ptxkit_dim3){r->block, 1, 1}, 0, s, args);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static const char usage_text[] =
    "usage: ptxkit bench redux [--reps N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--device N]\n";
static const char help_text[] =
    "Warp reductions as dependent chains of N reductions per warp (default 4096): shuffle fan-in (five\n"
    "__shfl_xor_sync steps) against redux.sync (__reduce_add/min/max/and/or/xor_sync) on 32-bit integers,\n"
    "and float max / float sum through integers (order-preserving image; 16.16 fixed point) against the\n"
    "same in float with shuffles. One warp per SM gives the latency of a reduction (clock64 cycles per\n"
    "reduction, median over warps, with the count of warps and the fewest and most cycles); 32 warps per\n"
    "SM give the SM's cycles per reduction (throughput). Every lane's result is checked against a CPU\n"
    "replay of the chain.\n";

int bench_redux(int argc, char **argv) {
    static const char cmd[] = "bench redux";
    int reps = 4096;
    const arg_option options[] = {{.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 32, .hi = 1 << 20}, {0}};
    const arg_spec spec = {.command = cmd, .usage = usage_text, .help = help_text,
                           .common = ARGS_DEVICE | ARGS_TABLES, .options = options};
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    ptxkit_device_info dev;
    ptxkit_context *ctx = cli_open_context_at_least(cmd, common.device, 80, "redux.sync", &dev);
    if (!ctx) return 1;
    const unsigned warps_per_sm[2] = {1, 32};
    size_t threads = (size_t)dev.sm_count * 32 * 32;
    uint32_t *seed = malloc(threads * 4), *got = malloc(threads * 4);
    uint64_t *cycles = malloc(threads / 32 * 8);
    ptxkit_dptr dseed = 0, dout = 0, dcycles = 0;
    ptxkit_program *program = NULL;
    ptxkit_status st = seed && got && cycles ? PTXKIT_SUCCESS : PTXKIT_ERROR_OUT_OF_MEMORY;
    uint64_t x = 0x243f6a8885a308d3ull;
    for (size_t i = 0; seed && i < threads; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        seed[i] = (uint32_t)(x >> 32);
    }
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, threads * 4, &dseed);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, threads * 4, &dout);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, threads / 32 * 8, &dcycles);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, dseed, seed, threads * 4);
    if (st == PTXKIT_SUCCESS) st = lab_program_create("async_lab.cu", &program);

    char title[400];
    snprintf(title, sizeof title, "warp reductions on %s: dependent chains of %d per warp, clock64 (median over warps)",
             dev.name, reps);
    const char *headers[] = {"op", "way", "warps_per_sm", "cycles_per_reduction", "sm_cycles_per_reduction",
                             "shuffle_over_this", "check", "samples", "min_cycles", "max_cycles"};
    cli_table *tab = table_new(title, 10, headers);
    table_types(tab, "ssnnnnsnnn");
    int wrong = 0;
    for (int op = 0; op < OPS && st == PTXKIT_SUCCESS; op++)
        for (int w = 0; w < 2 && st == PTXKIT_SUCCESS; w++) {
            double shuffle_cycles = 0;
            for (int way = 0; way < (op >= 6 ? 3 : 2) && st == PTXKIT_SUCCESS; way++) {
                char defs[3][32];
                snprintf(defs[0], sizeof defs[0], "OP=%d", op);
                snprintf(defs[1], sizeof defs[1], "WAY=%d", way);
                snprintf(defs[2], sizeof defs[2], "REPS=%d", reps);
                const char *defines[] = {defs[0], defs[1], defs[2]};
                redux_run r = {.grid = (unsigned)dev.sm_count, .block = 32 * warps_per_sm[w], .seed = dseed, .out = dout,
                               .cycles = dcycles};
                float ms;
                st = ptxkit_program_kernel_get(ctx, program, "redux_chain", defines, 3, &r.k);
                if (st == PTXKIT_SUCCESS) st = time_median_ms(ctx, launch, &r, 1, 3, &ms);
                size_t n = (size_t)r.grid * r.block, warps = n / 32;
                if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, got, dout, n * 4);
                if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, cycles, dcycles, warps * 8);
                if (st != PTXKIT_SUCCESS) break;
                /* the CPU replays the first 16 warps' chains, lane by lane */
                bool ok = true;
                for (size_t wp = 0; wp < warps && wp < 16 && ok; wp++) {
                    uint32_t v[32];
                    memcpy(v, seed + wp * 32, sizeof v);
                    replay(op, (unsigned)reps, v);
                    ok = memcmp(v, got + wp * 32, sizeof v) == 0;
                }
                wrong += !ok;
                qsort(cycles, warps, sizeof cycles[0], cmp_u64);
                double per = (double)cycles[warps / 2] / reps;
                if (way == 0) shuffle_cycles = per;
                table_addf(tab, "%s\t%s\t%u\t%.1f\t%.2f\t%.2f\t%s\t%zu\t%.1f\t%.1f", op_names[op], way_names[way],
                           warps_per_sm[w], per, per / warps_per_sm[w], shuffle_cycles / per, ok ? "ok" : "WRONG", warps,
                           (double)cycles[0] / reps, (double)cycles[warps - 1] / reps);
            }
        }
    if (st != PTXKIT_SUCCESS) cli_fail(cmd, ctx, st);
    table_print(tab, common.format, stdout);
    table_free(tab);
    ptxkit_program_destroy(program);
    ptxkit_memory_free(ctx, dseed);
    ptxkit_memory_free(ctx, dout);
    ptxkit_memory_free(ctx, dcycles);
    ptxkit_context_destroy(ctx);
    free(seed);
    free(got);
    free(cycles);
    if (wrong) fprintf(stderr, "ptxkit %s: %d rows differ from the CPU replay\n", cmd, wrong);
    return st != PTXKIT_SUCCESS || wrong ? 1 : 0;
}
