/* ptxkit bench startup: what JIT specialization costs a process. Times, from
 * a fresh context, the first ptxkit_copy to finish (NVRTC compile on a cold
 * disk cache, a CUBIN load on a warm one), then the in-process registry hit. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "runtime/runtime.h"

int bench_startup(int argc, char **argv) {
    cli_common common;
    if (!cli_parse_common(&argc, argv, &common)) return 2;
    if (argc > 1) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        fprintf(help ? stdout : stderr,
                "usage: ptxkit bench startup [--device N]\n"
                "Run it after `ptxkit cache --purge` for the cold figures, then again for the warm-cache ones.\n");
        return help ? 0 : 2;
    }
    double t_open = now_ms();
    ptxkit_context *ctx = cli_open_context("bench startup", common.device);
    if (!ctx) return 1;
    double t0 = now_ms();
    ptxkit_dptr a = 0, b = 0;
    size_t bytes = 1 << 20;
    ptxkit_launch_options o = {.path = PTXKIT_PATH_JIT, .load_op = PTXKIT_LOAD_CG};
    ptxkit_status st = ptxkit_malloc(ctx, bytes, &a);
    if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, bytes, &b);
    double t1 = now_ms();
    if (st == PTXKIT_SUCCESS) st = ptxkit_copy(ctx, b, a, bytes, &o, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_synchronize(ctx);
    double t2 = now_ms();
    /* registry hit: the lookup every launch after the first pays */
    kernel_spec spec = {.family = "copy", .entry = "ptxkit_copy_vec16", .defines = {"UNROLL=4", "BLOCK_SIZE=256", "LOAD_OP=2"},
                        .define_count = 3};
    CUfunction fn;
    enum { HITS = 100000 };
    double t3 = now_ms();
    if (st == PTXKIT_SUCCESS && (st = context_enter(ctx)) == PTXKIT_SUCCESS) {
        for (int i = 0; i < HITS && st == PTXKIT_SUCCESS; i++) st = kernel_get(ctx, &spec, &fn);
        context_leave(ctx);
    }
    double t4 = now_ms();
    if (st != PTXKIT_SUCCESS) {
        cli_fail("bench startup", ctx, st);
        ptxkit_context_close(ctx);
        return 1;
    }
    char dir[4096];
    size_t files = 0, cached = 0;
    ptxkit_cache_dir(dir, sizeof dir);
    ptxkit_cache_stats(&files, &cached);
    printf("context open (primary context retain): %.2f ms\n", t0 - t_open);
    printf("two 1 MiB allocations: %.3f ms\n", t1 - t0);
    printf("first ptxkit_copy, from call to kernel finished (kernel lookup + launch + sync): %.3f ms\n", t2 - t1);
    printf("context open to first kernel finished, excluding context creation: %.3f ms\n", t2 - t0);
    printf("registry hit (kernel_get of a loaded kernel): %.3f us\n", (t4 - t3) * 1e3 / HITS);
    printf("kernel cache: %s, %zu entries\n", dir[0] ? dir : "disabled", files);
    ptxkit_free(ctx, a);
    ptxkit_free(ctx, b);
    ptxkit_context_close(ctx);
    return 0;
}
