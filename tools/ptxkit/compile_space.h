/* `ptxkit compile FAMILY`'s check of its -D defines (compile_space.c). */
#ifndef PTXKIT_COMPILE_SPACE_H
#define PTXKIT_COMPILE_SPACE_H

#include <stdbool.h>

/* Prints one line per define the family never reads or whose value lies
 * outside the family's declared parameter space: a warning, or with strict
 * an error. False when strict and any was found (a usage error). */
bool compile_check_defines(const char *family, const char *const *defines, int count, bool strict);

#endif
