/* The cache directory (cache_dir.c): $PTXKIT_CACHE_DIR, else
 * $XDG_CACHE_HOME/ptxkit, else ~/.cache/ptxkit; PTXKIT_CACHE=off (or 0)
 * disables the cache. ptxkit_cache_dir (ptxkit.h) is its public call: the
 * disk cache, the NVRTC identity record and the tuning store find their
 * files through it. */
#ifndef PTXKIT_RUNTIME_CACHE_DIR_H
#define PTXKIT_RUNTIME_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* Whether PTXKIT_CACHE is "off" or "0". */
bool cache_dir_disabled(void);
/* The configured directory into buf (whether or not the cache is disabled);
 * false when no variable names one or the path does not fit. */
bool cache_dir_configured(char *buf, size_t size);

#endif
