/* ptxkit info */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_info(int argc, char **argv) {
    cli_common common;
    if (!cli_parse_common(&argc, argv, &common)) return 2;
    if (argc > 1) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        fprintf(help ? stdout : stderr,
                "usage: ptxkit info [--device N]\n"
                "Prints the driver and NVRTC versions, the GPU's properties, the kernel cache directory\n"
                "and the device-to-device copy bandwidth measured now (256 MiB, cuMemcpyDtoD and ptxkit_copy).\n");
        return help ? 0 : 2;
    }
    ptxkit_context *ctx = cli_open_context("info", common.device);
    if (!ctx) return 1;
    ptxkit_versions v;
    ptxkit_get_versions(&v);
    ptxkit_device_info d;
    ptxkit_device_info_get(ctx, &d);
    char cache[4096];
    ptxkit_cache_dir(cache, sizeof cache);
    size_t files = 0, bytes = 0;
    ptxkit_cache_stats(&files, &bytes);
    printf("ptxkit            %d.%d.%d\n", v.library / 10000, v.library / 100 % 100, v.library % 100);
    printf("driver            CUDA %d.%d\n", v.driver / 1000, v.driver % 1000 / 10);
    if (v.nvrtc_major) printf("NVRTC             %d.%d (JIT path available)\n", v.nvrtc_major, v.nvrtc_minor);
    else printf("NVRTC             not found (precompiled PTX path only)\n");
    printf("kernel cache      %s (%zu kernels, %.1f MiB)\n", cache[0] ? cache : "disabled", files, bytes / 1048576.0);
    printf("device %d          %s\n", d.ordinal, d.name);
    printf("compute capability %d.%d (sm_%d%d)\n", d.cc_major, d.cc_minor, d.cc_major, d.cc_minor);
    printf("SMs               %d\n", d.sm_count);
    printf("global memory     %.1f GiB\n", d.total_memory / 1073741824.0);
    printf("L2 cache          %.1f MiB (persisting max %.1f MiB)\n", d.l2_bytes / 1048576.0, d.persisting_l2_max_bytes / 1048576.0);
    printf("shared memory     %d KiB per block (%d KiB opt-in), %d KiB per SM\n", d.shared_per_block / 1024,
           d.shared_per_block_optin / 1024, d.shared_per_sm / 1024);
    printf("threads           %d per block, %d per SM, %d blocks per SM\n", d.max_threads_per_block, d.max_threads_per_sm,
           d.max_blocks_per_sm);
    printf("registers         %d per block, %d per SM\n", d.regs_per_block, d.regs_per_sm);
    printf("memory bus        %d bit at %d MHz: %.0f GB/s datasheet\n", d.memory_bus_bits, d.memory_clock_khz / 1000,
           d.peak_bandwidth_gbs);
    size_t size = 256u << 20;
    double dtod = 0;
    ptxkit_status st = measure_dtod_gbs(ctx, size, &dtod);
    if (st == PTXKIT_SUCCESS) printf("copy bandwidth    %.0f GB/s (cuMemcpyDtoD, 256 MiB, read + written)\n", dtod);
    else cli_fail("info", ctx, st);
    ptxkit_context_close(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
