/* ptxkit bench compile: what NVRTC's automatic precompiled headers save on
 * a repeated compile in one process. For each case, a fresh program is
 * compiled twice, first with precompiled headers off, then on: a built-in
 * family's source (copy.cu) compiled again with the same defines and with
 * another variant's, and application programs including
 * <cooperative_groups.h> or <cub/block/block_reduce.cuh> (found in the
 * toolkit's include directories) compiled for a second entry with the same
 * defines. NVRTC compares a prelude by the source's text and the command
 * line, so another variant's defines (command-line -D) never reuse one.
 * No GPU needed: ptxkit_program_compile, CUBIN for --arch (default 90). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "ptxkit.h"

static const char cg_source[] =
    "#include <cooperative_groups.h>\n"
    "#include <cuda_fp16.h>\n"
    "namespace cg = cooperative_groups;\n"
    "template <int SCALE> __global__ void scaled(const float *in, __half *out, unsigned n) {\n"
    "    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    float v = i < n ? in[i] * SCALE : 0.0f;\n"
    "    v += warp.shfl_down(v, 1);\n"
    "    if (i < n) out[i] = __float2half(v);\n"
    "}\n";

static const char cub_source[] =
    "#include <cub/block/block_reduce.cuh>\n"
    "template <int BLOCK> __global__ void block_sums(const int *in, int *out) {\n"
    "    typedef cub::BlockReduce<int, BLOCK> Reduce;\n"
    "    __shared__ typename Reduce::TempStorage storage;\n"
    "    int sum = Reduce(storage).Sum(in[blockIdx.x * BLOCK + threadIdx.x]);\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
    "}\n";

typedef struct compile_case {
    const char *name;
    const char *program;       /* a name for the program */
    const char *source;        /* NULL: the built-in copy.cu */
    const char *first_entry, *second_entry;
    const char *first_define, *second_define;
} compile_case;

static const compile_case cases[] = {
    {"family copy.cu, same variant again", "copy.cu", NULL, NULL, NULL, "BLOCK_SIZE=256", "BLOCK_SIZE=256"},
    {"family copy.cu, another variant", "copy.cu", NULL, NULL, NULL, "BLOCK_SIZE=256", "BLOCK_SIZE=512"},
    {"<cooperative_groups.h>, second entry", "cg_bench.cu", cg_source, "scaled<2>", "scaled<3>", NULL, NULL},
    {"<cub/block/block_reduce.cuh>, second entry", "cub_bench.cu", cub_source, "block_sums<128>", "block_sums<256>",
     NULL, NULL},
};

/* One compile's NVRTC time in ms, or a negative value (message printed). */
static double compile_once(const ptxkit_program *p, const char *entry, const char *define, int arch) {
    ptxkit_compiled c;
    const char *defines[1] = {define};
    ptxkit_status st = ptxkit_program_compile(p, entry, defines, define ? 1 : 0, arch, 0, &c);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit bench compile: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error());
        return -1;
    }
    double ms = c.compile_ms;
    ptxkit_program_compiled_free(&c);
    return ms;
}

int bench_compile(int argc, char **argv) {
    int arch = 90;
    const arg_option options[] = {{.name = "arch", .kind = ARG_INT, .value = &arch, .lo = 50, .hi = 200}, {0}};
    const arg_spec spec = {
        .command = "bench compile",
        .usage = "usage: ptxkit bench compile [--arch XY] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE]\n",
        .help = "Two compiles in one process of each case, with NVRTC's automatic precompiled headers off, then on\n"
                "(NVRTC 12.8 and later): a family's source again with the same defines and with another variant's,\n"
                "and programs including <cooperative_groups.h> or <cub/block/block_reduce.cuh> for a second entry.\n"
                "'on' is PTXKIT_PCH=on (every program; by default only programs including headers from disk use\n"
                "them). NVRTC's compile time in ms, CUBIN for sm_XY (--arch, default 90); no GPU needed.\n",
        .common = ARGS_TABLES,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    if (!ptxkit_jit_available()) {
        fprintf(stderr, "ptxkit bench compile: %s\n", ptxkit_last_error());
        return 1;
    }
    int available = 0;
    ptxkit_jit_pch_mode_set(1, &available);
    if (!available)
        fprintf(stderr, "ptxkit bench compile: this NVRTC has no automatic precompiled headers (12.8 and later): "
                        "the 'on' rows compile without them\n");
    const char *copy_text = NULL;
    if (ptxkit_program_builtin_source_get("copy.cu", &copy_text, NULL) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit bench compile: %s\n", ptxkit_last_error());
        return 1;
    }
    char title[128];
    snprintf(title, sizeof title,
             "a second compile in one process (time_ms), NVRTC precompiled headers off and on, sm_%d", arch);
    /* the second compile's time is the metric (report compare keys rows by case and pch) */
    const char *headers[] = {"case", "pch", "time_ms", "first_compile_ms", "second_over_first"};
    cli_table *t = table_new(title, 5, headers);
    table_types(t, "ssnnn");
    int failed = 0;
    for (int on = 0; on < 2 && !failed; on++) {
        ptxkit_jit_pch_mode_set(on, NULL);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !failed; i++) {
            const compile_case *c = &cases[i];
            ptxkit_program *p = NULL;
            if (ptxkit_program_create(c->program, c->source ? c->source : copy_text, NULL, 0, &p) != PTXKIT_SUCCESS) {
                fprintf(stderr, "ptxkit bench compile: %s\n", ptxkit_last_error());
                failed = 1;
                break;
            }
            double first = compile_once(p, c->first_entry, c->first_define, arch);
            double second = first < 0 ? -1 : compile_once(p, c->second_entry, c->second_define, arch);
            ptxkit_program_destroy(p);
            if (first < 0 || second < 0) {
                failed = 1;
                break;
            }
            table_addf(t, "%s\t%s\t%.1f\t%.1f\t%.3f", c->name, on ? "on" : "off", second, first,
                       first > 0 ? second / first : 0.0);
        }
    }
    ptxkit_jit_pch_mode_set(-1, NULL);
    if (!failed) table_print(t, common.format, stdout);
    table_free(t);
    return failed;
}
