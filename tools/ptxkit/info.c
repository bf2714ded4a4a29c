/* ptxkit info: what the library, NVRTC, the kernel cache and the tuning
 * database are, and then the GPU. Without a usable driver it prints what
 * needs none (as CuPy's show_config does) and still exits 1. */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "report.h"
#include "tune_exchange.h"

static const arg_spec spec = {
    .command = "info",
    .usage = "usage: ptxkit info [--device N] [--json [FILE]]\n",
    .help = "Prints the library, NVRTC and driver versions, the kernel cache, the tuning database and its record,\n"
            "the GPU's properties and the device-to-device copy bandwidth measured now (256 MiB, cuMemcpyDtoD).\n"
            "Without a usable GPU it prints what needs none and exits 1. --json writes the same as one JSON object\n"
            "(to FILE, or to standard output).\n",
    .common = ARGS_DEVICE | ARGS_JSON_ONLY,
};

int cmd_info(int argc, char **argv) {
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    report_set_paths(NULL, NULL, NULL); /* info writes its own JSON, not a table report */
    const char *json_path = common.json_path ? common.json_path : common.format == OUT_JSON ? "-" : NULL;
    bool text = !json_path || strcmp(json_path, "-") != 0;

    /* what needs no GPU */
    char nvrtc_why[512] = "";
    bool jit = ptxkit_jit_available();
    if (!jit) snprintf(nvrtc_why, sizeof nvrtc_why, "%s", ptxkit_last_error());
    char nvrtc_file[4352] = "";
    if (jit) ptxkit_jit_library_get(nvrtc_file, sizeof nvrtc_file);
    ptxkit_versions v;
    ptxkit_versions_get(&v);
    /* NCCL (the several-GPU calls): file, version and how it was found */
    char nccl_file[4352] = "", nccl_version[32] = "", nccl_why[2048] = "";
    bool nccl = ptxkit_comm_library_get(nccl_file, sizeof nccl_file, nccl_version, sizeof nccl_version) == PTXKIT_SUCCESS;
    if (!nccl) snprintf(nccl_why, sizeof nccl_why, "%s", ptxkit_last_error());
    char cache[4096] = "", cache_err[512] = "";
    size_t files = 0, bytes = 0;
    if (ptxkit_cache_dir_get(cache, sizeof cache) != PTXKIT_SUCCESS)
        snprintf(cache_err, sizeof cache_err, "%s", ptxkit_last_error());
    else if (cache[0] && ptxkit_cache_stats_get(&files, &bytes) != PTXKIT_SUCCESS)
        snprintf(cache_err, sizeof cache_err, "%s", ptxkit_last_error());
    unsigned long long cap = 0;
    ptxkit_cache_limit_get(&cap);
    char db_path[4096] = "", db_msg[640] = "";
    size_t db_entries = 0;
    if (ptxkit_tune_db_path_get(db_path, sizeof db_path) != PTXKIT_SUCCESS || !db_path[0]) {
        snprintf(db_msg, sizeof db_msg, "no tuning database: the cache directory is disabled and PTXKIT_TUNE_DB is not set");
    } else {
        ptxkit_tune_entry *entries = NULL;
        if (ptxkit_tune_db_read(db_path, &entries, &db_entries) != PTXKIT_SUCCESS)
            snprintf(db_msg, sizeof db_msg, "%s", ptxkit_last_error());
        else if (access(db_path, F_OK) != 0)
            snprintf(db_msg, sizeof db_msg, "no tuning database at %s yet", db_path);
        else
            snprintf(db_msg, sizeof db_msg, "%s: %zu entr%s", db_path, db_entries, db_entries == 1 ? "y" : "ies");
        ptxkit_tune_entries_free(entries);
    }
    char record_path[4096] = "", record_msg[640] = "";
    size_t record_lines = 0;
    if (ptxkit_tune_record_path_get(record_path, sizeof record_path) != PTXKIT_SUCCESS || !record_path[0])
        snprintf(record_msg, sizeof record_msg, "no tuning record: PTXKIT_TUNE_RECORD=off, or no database path");
    else
        record_summary(record_path, NULL, &record_lines, record_msg, sizeof record_msg);

    if (text) {
        printf("ptxkit            %s (%s build)\n", PTXKIT_VERSION_STRING, report_build_type());
        if (jit) printf("NVRTC             %d.%d (JIT path available): %s\n", v.nvrtc_major, v.nvrtc_minor, nvrtc_file);
        else printf("NVRTC             not found (precompiled PTX path only): %s\n", nvrtc_why);
        if (nccl) printf("NCCL              %s (several-GPU calls available): %s\n", nccl_version, nccl_file);
        else printf("NCCL              not loaded (several-GPU calls unavailable): %s\n", nccl_why);
        if (cache_err[0]) printf("kernel cache      %s: %s\n", cache[0] ? cache : "?", cache_err);
        else if (!cache[0]) printf("kernel cache      disabled (PTXKIT_CACHE=off)\n");
        else printf("kernel cache      %s (%zu kernels, %.1f MiB, cap %llu MiB)\n", cache, files, bytes / 1048576.0, cap >> 20);
        printf("tuning database   %s (%s)\n", db_path[0] ? db_path : "none", db_msg);
        printf("tuning record     %s\n", record_msg);
        fflush(stdout);
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "ptxkit-info/1");
    cJSON_AddStringToObject(root, "library", PTXKIT_VERSION_STRING);
    cJSON_AddStringToObject(root, "build_type", report_build_type());
    cJSON *nv = cJSON_AddObjectToObject(root, "nvrtc");
    cJSON_AddBoolToObject(nv, "available", jit);
    if (jit) {
        char s[32];
        snprintf(s, sizeof s, "%d.%d", v.nvrtc_major, v.nvrtc_minor);
        cJSON_AddStringToObject(nv, "version", s);
        cJSON_AddStringToObject(nv, "library", nvrtc_file);
    } else {
        cJSON_AddStringToObject(nv, "error", nvrtc_why);
    }
    cJSON *nc = cJSON_AddObjectToObject(root, "nccl");
    cJSON_AddBoolToObject(nc, "available", nccl);
    if (nccl) {
        cJSON_AddStringToObject(nc, "version", nccl_version);
        cJSON_AddStringToObject(nc, "library", nccl_file);
    } else {
        cJSON_AddStringToObject(nc, "error", nccl_why);
    }
    cJSON *kc = cJSON_AddObjectToObject(root, "kernel_cache");
    cJSON_AddBoolToObject(kc, "enabled", cache[0] != 0);
    cJSON_AddStringToObject(kc, "directory", cache);
    cJSON_AddNumberToObject(kc, "kernels", (double)files);
    cJSON_AddNumberToObject(kc, "bytes", (double)bytes);
    cJSON_AddNumberToObject(kc, "cap_bytes", (double)cap);
    if (cache_err[0]) cJSON_AddStringToObject(kc, "error", cache_err);
    cJSON *td = cJSON_AddObjectToObject(root, "tuning_database");
    cJSON_AddStringToObject(td, "path", db_path);
    cJSON_AddStringToObject(td, "message", db_msg);
    cJSON_AddNumberToObject(td, "entries", (double)db_entries);
    cJSON *tr = cJSON_AddObjectToObject(root, "tuning_record");
    cJSON_AddStringToObject(tr, "path", record_path);
    cJSON_AddStringToObject(tr, "message", record_msg);
    cJSON_AddNumberToObject(tr, "configurations", (double)record_lines);

    ptxkit_context *ctx = NULL;
    ptxkit_status st = ptxkit_context_create(common.device, &ctx);
    cJSON *drv = cJSON_AddObjectToObject(root, "driver");
    if (st != PTXKIT_SUCCESS) {
        const char *why = ptxkit_last_error();
        ptxkit_versions_get(&v);
        cJSON_AddBoolToObject(drv, "usable", false);
        if (v.driver) cJSON_AddNumberToObject(drv, "cuda_version", v.driver);
        else cJSON_AddNullToObject(drv, "cuda_version");
        cJSON_AddStringToObject(drv, "error", why);
        cJSON_AddNullToObject(root, "device");
        if (text) printf("driver            not usable: %s\n", why);
        fprintf(stderr, "ptxkit info: no usable GPU: %s\n", why);
        report_write_json("info", json_path, root);
        cJSON_Delete(root);
        return 1;
    }
    ptxkit_versions_get(&v);
    ptxkit_device_info d;
    ptxkit_device_info_get(ctx, &d);
    cJSON_AddBoolToObject(drv, "usable", true);
    cJSON_AddNumberToObject(drv, "cuda_version", v.driver);
    cJSON *dev = cJSON_AddObjectToObject(root, "device");
    char ccs[16];
    snprintf(ccs, sizeof ccs, "%d.%d", d.cc_major, d.cc_minor);
    cJSON_AddNumberToObject(dev, "ordinal", d.ordinal);
    cJSON_AddStringToObject(dev, "name", d.name);
    cJSON_AddStringToObject(dev, "compute_capability", ccs);
    cJSON_AddNumberToObject(dev, "sm_count", d.sm_count);
    cJSON_AddNumberToObject(dev, "global_memory_bytes", (double)d.total_memory);
    cJSON_AddNumberToObject(dev, "l2_bytes", d.l2_bytes);
    cJSON_AddNumberToObject(dev, "persisting_l2_max_bytes", d.persisting_l2_max_bytes);
    cJSON_AddNumberToObject(dev, "access_window_max_bytes", d.access_window_max_bytes);
    cJSON_AddNumberToObject(dev, "shared_per_block", d.shared_per_block);
    cJSON_AddNumberToObject(dev, "shared_per_block_optin", d.shared_per_block_optin);
    cJSON_AddNumberToObject(dev, "shared_per_sm", d.shared_per_sm);
    cJSON_AddNumberToObject(dev, "max_threads_per_block", d.max_threads_per_block);
    cJSON_AddNumberToObject(dev, "max_threads_per_sm", d.max_threads_per_sm);
    cJSON_AddNumberToObject(dev, "max_blocks_per_sm", d.max_blocks_per_sm);
    cJSON_AddNumberToObject(dev, "regs_per_block", d.regs_per_block);
    cJSON_AddNumberToObject(dev, "regs_per_sm", d.regs_per_sm);
    cJSON_AddNumberToObject(dev, "memory_bus_bits", d.memory_bus_bits);
    cJSON_AddNumberToObject(dev, "memory_clock_khz", d.memory_clock_khz);
    cJSON_AddNumberToObject(dev, "datasheet_gbs", d.peak_bandwidth_gbs);
    if (text) {
        printf("driver            CUDA %d.%d\n", v.driver / 1000, v.driver % 1000 / 10);
        printf("device %d          %s\n", d.ordinal, d.name);
        printf("compute capability %d.%d (sm_%d%d)\n", d.cc_major, d.cc_minor, d.cc_major, d.cc_minor);
        printf("SMs               %d\n", d.sm_count);
        printf("global memory     %.1f GiB\n", d.total_memory / 1073741824.0);
        printf("L2 cache          %.1f MiB (persisting max %.1f MiB, access windows up to %.1f MiB)\n",
               d.l2_bytes / 1048576.0, d.persisting_l2_max_bytes / 1048576.0, d.access_window_max_bytes / 1048576.0);
        printf("shared memory     %d KiB per block (%d KiB opt-in), %d KiB per SM\n", d.shared_per_block / 1024,
               d.shared_per_block_optin / 1024, d.shared_per_sm / 1024);
        printf("threads           %d per block, %d per SM, %d blocks per SM\n", d.max_threads_per_block,
               d.max_threads_per_sm, d.max_blocks_per_sm);
        printf("registers         %d per block, %d per SM\n", d.regs_per_block, d.regs_per_sm);
        printf("memory bus        %d bit at %d MHz: %.0f GB/s datasheet\n", d.memory_bus_bits, d.memory_clock_khz / 1000,
               d.peak_bandwidth_gbs);
        fflush(stdout);
    }
    size_t size = 256u << 20;
    double dtod = 0;
    st = measure_dtod_gbs(ctx, size, &dtod);
    if (st == PTXKIT_SUCCESS) {
        if (text) printf("copy bandwidth    %.0f GB/s (cuMemcpyDtoD, 256 MiB, read + written)\n", dtod);
        cJSON_AddNumberToObject(dev, "dtod_gbs", dtod);
    } else {
        cli_fail("info", ctx, st);
    }
    ptxkit_context_destroy(ctx);
    bool ok = report_write_json("info", json_path, root);
    cJSON_Delete(root);
    return st == PTXKIT_SUCCESS && ok ? 0 : 1;
}

/* ptxkit cache [--purge] */
int cmd_cache(int argc, char **argv) {
    bool purge = false;
    const arg_option options[] = {{.name = "purge", .kind = ARG_FLAG, .value = &purge}, {0}};
    const arg_spec spec = {
        .command = "cache",
        .usage = "usage: ptxkit cache [--purge]\n",
        .help = "Shows the kernel cache directory, its entries and size; --purge empties it.\n"
                "PTXKIT_CACHE_DIR moves it, PTXKIT_CACHE=off disables it, PTXKIT_CACHE_MAX_MB caps it (default 512).\n"
                "An entry is plain files in <dir>/<2 hex>/: <key>.cubin or .ptx (the image: cuobjdump -sass and\n"
                "nvdisasm read it), <key>.names (lowered kernel names) and <key>.meta (kind, origin, checksums).\n",
        .options = options,
    };
    int rc = args_parse(&spec, argc, argv, NULL, NULL, NULL);
    if (rc >= 0) return rc;
    char dir[4096];
    size_t files = 0, bytes = 0;
    if (ptxkit_cache_dir_get(dir, sizeof dir) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit cache: %s\n", ptxkit_last_error());
        return 1;
    }
    if (!dir[0]) {
        printf("kernel cache disabled (PTXKIT_CACHE=off)\n");
        return 0;
    }
    if (purge && ptxkit_cache_purge() != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit cache: %s\n", ptxkit_last_error());
        return 1;
    }
    /* an unusable size cap falls back to the default (main shows why) */
    unsigned long long cap = 0;
    ptxkit_cache_limit_get(&cap);
    if (ptxkit_cache_stats_get(&files, &bytes) != PTXKIT_SUCCESS) { /* e.g. the path is a regular file */
        fprintf(stderr, "ptxkit cache: %s\n", ptxkit_last_error());
        return 1;
    }
    printf("%s: %zu kernels, %.1f MiB (cap %llu MiB)\n", dir, files, bytes / 1048576.0, cap >> 20);
    return 0;
}
