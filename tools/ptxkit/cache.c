/* ptxkit cache [--purge] */
#include <stdbool.h>
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "ptxkit.h"

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
    if (ptxkit_cache_dir(dir, sizeof dir) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit cache: %s\n", ptxkit_last_error(NULL));
        return 1;
    }
    if (!dir[0]) {
        printf("kernel cache disabled (PTXKIT_CACHE=off)\n");
        return 0;
    }
    if (purge && ptxkit_cache_purge() != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit cache: %s\n", ptxkit_last_error(NULL));
        return 1;
    }
    /* an unusable size cap falls back to the default (main shows why) */
    unsigned long long cap = 0;
    ptxkit_cache_limit(&cap);
    if (ptxkit_cache_stats(&files, &bytes) != PTXKIT_SUCCESS) { /* e.g. the path is a regular file */
        fprintf(stderr, "ptxkit cache: %s\n", ptxkit_last_error(NULL));
        return 1;
    }
    printf("%s: %zu kernels, %.1f MiB (cap %llu MiB)\n", dir, files, bytes / 1048576.0, cap >> 20);
    return 0;
}
