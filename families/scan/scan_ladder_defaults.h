/* The scan ladder's block size when none is given, written once for
 * scan_ladder.cu and scan_ladder.c. */
#ifndef PTXKIT_SCAN_LADDER_DEFAULTS_H
#define PTXKIT_SCAN_LADDER_DEFAULTS_H

#define SCAN_LADDER_DEFAULT_BLOCK 256

#endif
