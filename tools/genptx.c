/* Regenerates ptx/ from the embedded cu_sources through NVRTC: for every
 * family marked PTXKIT_PTX_FAMILY, one file per load cache operator
 * (<family>.<op>.ptx), compiled for compute_75 so the same text assembles for
 * every GPU from Turing on. usage: ptxkit-genptx OUTPUT_DIR */
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

enum { PTX_ARCH = 75 };

int main(int argc, char **argv) {
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: ptxkit-genptx OUTPUT_DIR\n");
        return 2;
    }
    size_t count;
    const embedded_file *files = embedded_all(&count);
    int written = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(files[i].name);
        if (len < 4 || strcmp(files[i].name + len - 3, ".cu") != 0) continue;
        const char *eol = memchr(files[i].text, '\n', files[i].size);
        size_t first_line = eol ? (size_t)(eol - files[i].text) : files[i].size;
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)(first_line < 255 ? first_line : 255), files[i].text);
        if (!strstr(line, "PTXKIT_PTX_FAMILY")) continue;
        char family[96];
        snprintf(family, sizeof family, "%.*s", (int)(len - 3), files[i].name);
        for (int op = PTXKIT_LOAD_CA; op < PTXKIT_LOAD_OP_COUNT; op++) {
            char define[32], path[4096];
            snprintf(define, sizeof define, "LOAD_OP=%s", load_op_define((ptxkit_load_op)op));
            const char *defines[] = {define};
            compile_output out;
            ptxkit_status st = compile_family(NULL, family, defines, 1, PTX_ARCH, true, NULL, 0, &out);
            if (st != PTXKIT_SUCCESS) {
                fprintf(stderr, "ptxkit-genptx: %s\n", ptxkit_last_error(NULL));
                return 1;
            }
            snprintf(path, sizeof path, "%s/%s.%s.ptx", argv[1], family, ptxkit_load_op_name((ptxkit_load_op)op));
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(out.image, 1, out.size, f) != out.size || fclose(f) != 0) {
                fprintf(stderr, "ptxkit-genptx: cannot write %s\n", path);
                return 1;
            }
            compile_output_free(&out);
            written++;
        }
    }
    printf("ptxkit-genptx: wrote %d PTX files to %s\n", written, argv[1]);
    return 0;
}
