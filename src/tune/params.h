/* Parameter spaces of the tunable kernel families: which injected constants
 * each family has, their legal values on a device, the constraints between
 * them, and how the tuner runs and checks the family through its public op.
 * Everything here is plain CPU code, so its rules are tested without a GPU. */
#ifndef PTXKIT_TUNE_PARAMS_H
#define PTXKIT_TUNE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The values each parameter takes in a search. A parameter with the single
 * value 0 is not tuned: the op's built-in default stands. */
typedef struct tune_space {
    int values[TUNE_PARAM_COUNT][TUNE_MAX_VALUES];
    int count[TUNE_PARAM_COUNT];
} tune_space;

struct tune_family;

/* A parsed variant: copy has one ("bytes"); reduce has "<op>.<type>";
 * transpose has the element type and a shape class ("float32",
 * "float64.unaligned"). */
typedef struct tune_variant {
    const struct tune_family *family;
    char name[40];
    int op;              /* ptxkit_reduce_op for reduce; transpose: 1 for the unaligned shape class */
    ptxkit_dtype type;   /* element type; copy: moves bytes, reads as UINT32 */
    size_t elem_size;    /* bytes per counted item (copy counts bytes: 1) */
} tune_variant;

typedef struct tune_family {
    const char *name;
    const char *default_variant;
    const char *unit;          /* what n counts: "bytes", "elements" */
    const char *description;
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
    bool (*parse_variant)(const struct tune_family *f, const char *name, tune_variant *v, char *why, size_t why_size);
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
} tune_family;

/* The families, and lookup by name (NULL when unknown). */
const tune_family *tune_family_at(int index);
const tune_family *tune_family_find(const char *name);
int tune_family_count(void);

/* Parses `variant` (NULL: the family's default) for family f. */
ptxkit_status tune_variant_parse(const tune_family *f, const char *variant, tune_variant *out, char *why,
                                 size_t why_size);

/* The values each parameter takes for variant v on a device. */
void tune_space_for(const tune_variant *v, const ptxkit_device_info *info, tune_space *out);

/* Whether c is a legal configuration of v on the device: every value from the
 * family's lists (0 = built-in default everywhere), block size a power of two
 * within the device limit, threads, blocks, registers and shared memory
 * within the SM's limits. False with a reason. */
bool tune_config_legal(const tune_variant *v, const tune_config *c, const ptxkit_device_info *info, char *why,
                       size_t why_size);

/* Number of combinations in a space, and the index-th of them (mixed radix,
 * block size slowest). */
size_t tune_space_size(const tune_space *s);
void tune_space_config(const tune_space *s, size_t index, tune_config *out);
/* Index of c in the space, or (size_t)-1 when one of its values is absent. */
size_t tune_space_index(const tune_space *s, const tune_config *c);

/* Launch options for a configuration (path JIT: tuned values are JIT
 * constants), and back. */
ptxkit_launch_options tune_config_options(const tune_config *c);
tune_config tune_config_from_options(const ptxkit_launch_options *o);
int tune_config_get(const tune_config *c, tune_param p);
void tune_config_set(tune_config *c, tune_param p, int value);
bool tune_config_equal(const tune_config *a, const tune_config *b);

/* "block=256 items=4 vec=16 bpsm=0 load=nc"; zeros print as "-". */
void tune_config_format(const tune_config *c, char *buf, size_t size);
const char *tune_param_name(tune_param p);

/* Fills host memory with the family's input values: random, never all
 * zeros; floats are small integers (1..3) so that sums of up to 2^22 of them
 * are exact in any order and results compare bit for bit. */
void tune_fill_host(const tune_variant *v, void *buf, size_t bytes, uint64_t *state);

#endif
