/* The reduction ladder's block size when none is given, written once for
 * reduce_ladder.cu and reduce_ladder.c. */
#ifndef PTXKIT_REDUCE_LADDER_DEFAULTS_H
#define PTXKIT_REDUCE_LADDER_DEFAULTS_H

#define LADDER_DEFAULT_BLOCK 256

#endif
