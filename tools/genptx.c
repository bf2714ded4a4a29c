/* Regenerates the families' PTX from their embedded kernels through NVRTC:
 * for every family marked 'ptx' in families/meson.build (family_has_ptx),
 * one file FAMILIES_DIR/<family>/<family>.ptx whose global loads carry no cache operator, compiled for
 * compute_75 so the same text assembles for every GPU from Turing on. The runtime gives those loads the
 * caller's operator at load time (runtime/ptx_rewrite.c), so the six
 * operators cost one text in the library, not six.
 *
 * The text is made by compiling the family with LOAD_OP=ca and with
 * LOAD_OP=cg and erasing the operator; the two results must agree byte for
 * byte, which proves that the operator reaches exactly the loads the rewrite
 * gives one to and changes nothing else.
 * usage: ptxkit-genptx FAMILIES_DIR [FAMILY...] (default: every such family) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "family.h"
#include "runtime/compile.h"
#include "runtime/program.h"
#include "runtime/launch.h"

enum { PTX_ARCH = 75 };

/* The family's PTX with op, every "ld.global.<op>." made "ld.global." in place. */
static char *plain_ptx(const char *family, ptxkit_load_op op) {
    char define[32], from[32];
    snprintf(define, sizeof define, "LOAD_OP=%s", load_op_define(op));
    const char *defines[] = {define};
    compile_output out;
    if (compile_family(NULL, family, defines, 1, PTX_ARCH, true, NULL, 0, &out) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit-genptx: %s\n", ptxkit_last_error());
        return NULL;
    }
    char *text = malloc(out.size + 1);
    if (!text) {
        compile_output_free(&out);
        return NULL;
    }
    snprintf(from, sizeof from, "ld.global.%s.", ptxkit_load_op_name(op));
    size_t m = strlen(from), o = 0;
    const char *p = out.image, *end = p + out.size;
    while (p < end && *p) {
        if ((size_t)(end - p) >= m && memcmp(p, from, m) == 0) {
            memcpy(text + o, "ld.global.", 10);
            o += 10;
            p += m;
        } else {
            text[o++] = *p++;
        }
    }
    text[o] = 0;
    compile_output_free(&out);
    return text;
}

/* Whether family is among the names given (all are when none is). */
static bool named(const char *family, char **names, int count) {
    for (int k = 0; k < count; k++)
        if (strcmp(names[k], family) == 0) return true;
    return count == 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: ptxkit-genptx FAMILIES_DIR [FAMILY...]\n");
        return 2;
    }
    for (int k = 2; k < argc; k++)
        if (!family_find(argv[k]) || !family_has_ptx(family_find(argv[k]))) {
            fprintf(stderr, "ptxkit-genptx: %s is no family marked 'ptx' in families/meson.build\n", argv[k]);
            return 2;
        }
    int written = 0;
    for (int i = 0; family_at(i); i++) {
        if (!family_has_ptx(family_at(i)) || !named(family_at(i)->name, argv + 2, argc - 2)) continue;
        const char *family = family_at(i)->name;
        char path[4096];
        char *ca = plain_ptx(family, PTXKIT_LOAD_CA), *cg = ca ? plain_ptx(family, PTXKIT_LOAD_CG) : NULL;
        if (!ca || !cg) {
            free(ca);
            return 1;
        }
        if (strcmp(ca, cg) != 0) {
            fprintf(stderr, "ptxkit-genptx: %s compiled with LOAD_OP=ca and LOAD_OP=cg differs in more than the load "
                            "operator: its PTX cannot be one text rewritten at load\n", family);
            free(ca);
            free(cg);
            return 1;
        }
        /* a family's folder is its name */
        snprintf(path, sizeof path, "%s/%s", argv[1], family);
        mkdir(path, 0777);
        snprintf(path, sizeof path, "%s/%s/%s.ptx", argv[1], family, family);
        size_t size = strlen(ca);
        FILE *f = fopen(path, "wb");
        bool ok = f && fwrite(ca, 1, size, f) == size;
        if (f && fclose(f) != 0) ok = false;
        free(ca);
        free(cg);
        if (!ok) {
            fprintf(stderr, "ptxkit-genptx: cannot write %s\n", path);
            return 1;
        }
        written++;
    }
    printf("ptxkit-genptx: wrote %d PTX files to %s\n", written, argv[1]);
    return 0;
}
