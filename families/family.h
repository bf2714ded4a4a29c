/* A kernel family is one descriptor: its name (which names its files), the
 * entry points of its kernels, the injected constants `ptxkit compile`
 * checks, and the tuner's parameter space and hooks. Each family is a
 * folder families/<name>/ whose <name>.c defines `const family_desc
 * <name>_family`; the table of all of them (families.c) is generated from
 * the one list in families/meson.build, which also says which have
 * precompiled PTX. The defaults both sides read are in the folder's
 * <name>_defaults.h.
 *
 * This is plain data below the tuner: src/tune reads the spaces and calls
 * the hooks, which reach the kernels through the family's own calls. */
#ifndef PTXKIT_OPS_FAMILY_H
#define PTXKIT_OPS_FAMILY_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "tuned/tuned.h"

typedef enum tune_param {
    TUNE_BLOCK = 0,     /* threads per block (BLOCK_SIZE) */
    TUNE_ITEMS,         /* items per thread */
    TUNE_VECTOR,        /* bytes per load */
    TUNE_BPSM,          /* grid blocks per SM (0: as many as occupancy allows) */
    TUNE_LOAD,          /* load cache operator */
    TUNE_PARAM_COUNT
} tune_param;

#define TUNE_MAX_VALUES 16

struct family_desc;

/* A parsed variant: copy has one ("bytes"); reduce has "<op>.<type>";
 * transpose has the element type and a shape class ("float32",
 * "float64.unaligned"). */
typedef struct tune_variant {
    const struct family_desc *family;
    char name[40];
    int op;              /* ptxkit_reduce_op for reduce; transpose: 1 for the unaligned shape class */
    ptxkit_dtype type;   /* element type; copy: moves bytes, reads as UINT32 */
    size_t elem_size;    /* bytes per counted item (copy counts bytes: 1) */
} tune_variant;

/* An injected constant that carries a tuner parameter ("UNROLL" is copy's
 * items per thread): `ptxkit compile FAMILY -D` checks its value against
 * the family's space. */
typedef struct family_define {
    const char *name;
    tune_param param;
} family_define;

typedef struct family_desc {
    const char *name;          /* <name>.cu, <name>.c, <name>.ptx of its folder */
    const char *description;
    const char *entries;       /* its kernels' entry points, or their pattern */
    /* Embedded kernel texts besides <name>.cu that its host code compiles
     * (<source>.cu of its folder, the 'sources' of its entry in
     * families/meson.build), ending at NULL; NULL: none. */
    const char *const *sources;
    const family_define *defines; /* ends at {NULL}; NULL: none */

    /* The tuner's view, for a family tuned through the five launch options
     * (parse_variant NULL: not such a family). */
    const char *default_variant;
    const char *unit;          /* what n counts: "bytes", "elements" */
    int bench_log2;            /* default size of `ptxkit bench blocks` */
    /* Legal values (0-terminated lists; block sizes come from the device). */
    int items[TUNE_MAX_VALUES];
    int vectors[TUNE_MAX_VALUES];
    int bpsm[TUNE_MAX_VALUES];
    int loads[TUNE_MAX_VALUES];   /* ptxkit_load_op values; bpsm and loads end at -1 */
    /* Parameters of the first search phase, timed as a full grid. */
    bool primary[TUNE_PARAM_COUNT];
    /* Where the search starts: the op's built-in defaults as far as known. */
    tune_config start;
    /* Estimated registers per thread of a configuration, and the blocks per
     * SM its kernels' __launch_bounds__ ask for (NULL: no launch bounds).
     * Without launch bounds, configurations whose registers do not fit the
     * block or the requested blocks per SM are pruned before compiling;
     * with them, ptxas fits any block (spilling if it must). */
    int (*registers)(const tune_variant *v, const tune_config *c);
    int (*min_blocks)(const tune_config *c);
    /* Most blocks one launch may have (0: no limit): blocks per SM times
     * the SM count must stay within it. */
    int max_grid;
    /* Shared memory per block, bytes: static, or with dynamic_shared set,
     * dynamic where it must be (limited by the device's opt-in maximum). */
    int (*shared_bytes)(const tune_variant *v, const tune_config *c);
    bool dynamic_shared;
    /* Rules between parameters that the lists cannot say (NULL: none):
     * false, with a reason, for a configuration the op would refuse. */
    bool (*check)(const tune_variant *v, const tune_config *c, char *why, size_t why_size);
    /* Parses a variant name into v; false with a reason. */
    bool (*parse_variant)(const struct family_desc *f, const char *name, tune_variant *v, char *why, size_t why_size);
    /* Device bytes of the input and the output for n items. */
    size_t (*in_bytes)(const tune_variant *v, size_t n);
    size_t (*out_bytes)(const tune_variant *v, size_t n);
    /* Bytes the operation must move (for GB/s). */
    double (*bytes_moved)(const tune_variant *v, size_t n);
    /* Compiles and loads the kernel of a configuration without launching
     * it; NULL: the rig calls the op once instead, which does the same. */
    ptxkit_status (*prepare)(ptxkit_context *ctx, const tune_variant *v, const ptxkit_launch_options *options);
    /* Runs the public op once. */
    ptxkit_status (*run)(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out, size_t n,
                         const ptxkit_launch_options *options, ptxkit_stream *stream);
} family_desc;

/* The tuner's name for a family it tunes through launch options. */
typedef family_desc tune_family;

/* Every load cache operator, for a family's loads list. */
#define FAMILY_ALL_LOADS                                                                                       \
    {PTXKIT_LOAD_DEFAULT, PTXKIT_LOAD_CA, PTXKIT_LOAD_CG, PTXKIT_LOAD_CS, PTXKIT_LOAD_LU, PTXKIT_LOAD_CV,       \
     PTXKIT_LOAD_NC, -1}

/* Hooks several families share: __launch_bounds__(BLOCK_SIZE) (one block's
 * worth of registers), and no shared memory. */
int family_one_block(const tune_config *c);
int family_no_shared(const tune_variant *v, const tune_config *c);

/* The families in the order of families/meson.build, and lookup by name
 * (NULL when unknown). */
int family_count(void);
const family_desc *family_at(int index);
const family_desc *family_find(const char *name);
/* Whether <name>.ptx is embedded (families/meson.build's 'ptx'). */
bool family_has_ptx(const family_desc *f);

#endif
