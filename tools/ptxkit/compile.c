/* ptxkit compile FAMILY: NVRTC only, no GPU needed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "runtime/runtime.h"

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit compile FAMILY [-D NAME=VALUE]... [--arch sm_XY] [--ptx | --resources]\n"
                 "Compiles cu_sources/FAMILY.cu (embedded) with NVRTC. Prints the PTX (default, or --ptx), or with\n"
                 "--resources compiles CUBIN and prints each kernel's registers, shared memory and spills.\n"
                 "--arch defaults to the GPU's own architecture, or sm_90 when there is no GPU.\n"
                 "families:");
    size_t count;
    const embedded_file *files = embedded_all(&count);
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(files[i].name);
        if (len > 3 && strcmp(files[i].name + len - 3, ".cu") == 0) fprintf(out, " %.*s", (int)(len - 3), files[i].name);
    }
    fputc('\n', out);
}

int cmd_compile(int argc, char **argv) {
    const char *family = NULL, *defines[PTXKIT_MAX_DEFINES];
    int define_count = 0, arch = 0;
    bool resources = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--ptx") == 0) {
            resources = false;
        } else if (strcmp(a, "--resources") == 0) {
            resources = true;
        } else if (strcmp(a, "--arch") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strncmp(v, "sm_", 3) == 0 || strncmp(v, "compute_", 8) == 0) v = strchr(v, '_') + 1;
            char *end;
            errno = 0;
            long parsed = strtol(v, &end, 10); /* range-checked before the cast: sm_4294967386 is not sm_90 */
            if (end == v || *end || errno || parsed < 30 || parsed > 200) {
                fprintf(stderr, "ptxkit compile: --arch takes sm_XY, not '%s'\n", argv[i]);
                usage(stderr);
                return 2;
            }
            arch = (int)parsed;
        } else if (strncmp(a, "-D", 2) == 0) {
            const char *d = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!cli_parse_define(d) || define_count == PTXKIT_MAX_DEFINES) {
                fprintf(stderr, "ptxkit compile: -D takes NAME=VALUE (NAME an identifier, at most %d characters, %d "
                                "defines), not '%s'\n", CLI_DEFINE_MAX, PTXKIT_MAX_DEFINES, d ? d : "");
                usage(stderr);
                return 2;
            }
            defines[define_count++] = d;
        } else if (a[0] != '-' && !family) {
            family = a;
        } else {
            fprintf(stderr, "ptxkit compile: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!family) {
        usage(stderr);
        return 2;
    }
    if (!arch) {
        ptxkit_context *ctx;
        if (ptxkit_context_open(0, &ctx) == PTXKIT_SUCCESS) {
            ptxkit_device_info d;
            ptxkit_device_info_get(ctx, &d);
            arch = d.cc_major * 10 + d.cc_minor;
            ptxkit_context_close(ctx);
        } else {
            arch = 90;
        }
    }
    const char *verbose[] = {"--ptxas-options=-v"};
    compile_output out;
    ptxkit_status st = compile_family(NULL, family, defines, define_count, arch, !resources, verbose, resources ? 1 : 0, &out);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit compile: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error(NULL));
        return 1;
    }
    if (resources) {
        printf("%s for sm_%d: CUBIN of %zu bytes in %.1f ms\n%s", family, arch, out.size, out.compile_ms,
               out.log ? out.log : "(NVRTC gave no resource report)\n");
    } else {
        fwrite(out.image, 1, out.size, stdout);
    }
    compile_output_free(&out);
    return 0;
}
