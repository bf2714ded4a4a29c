/* Parameter spaces of the tunable kernel families, which each family's
 * descriptor declares (families/family.h, families/<name>/<name>.c): their legal values
 * on a device and the constraints between them. Everything here is plain
 * CPU code, so its rules are tested without a GPU. */
#ifndef PTXKIT_TUNE_PARAMS_H
#define PTXKIT_TUNE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "family.h" /* tune_param, tune_variant, the families' spaces */
#include "ptxkit.h"
#include "tuned/tuned.h"

/* The values each parameter takes in a search. A parameter with the single
 * value 0 is not tuned: the op's built-in default stands. */
typedef struct tune_space {
    int values[TUNE_PARAM_COUNT][TUNE_MAX_VALUES];
    int count[TUNE_PARAM_COUNT];
} tune_space;

/* The families tuned through launch options (those of families/family.h with
 * hooks), and lookup by name (NULL when unknown). */
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
launch_options tune_config_options(const tune_config *c);
tune_config tune_config_from_options(const launch_options *o);
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
