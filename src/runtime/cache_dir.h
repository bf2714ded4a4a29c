/* Where ptxkit keeps files (cache_dir.c), by the XDG base-directory rules.
 * The cache: $PTXKIT_CACHE_DIR, else $XDG_CACHE_HOME/ptxkit, else
 * ~/.cache/ptxkit; PTXKIT_CACHE=off (or 0) disables it. ptxkit_cache_dir_get
 * (ptxkit.h) is its public call: the disk cache and the NVRTC identity
 * record live there, and may be deleted at any time.
 * The state: $PTXKIT_STATE_DIR, else $XDG_STATE_HOME/ptxkit, else
 * ~/.local/state/ptxkit: the tuning database and record, which a purged or
 * disabled cache keeps. An XDG variable holding a relative path is ignored
 * (the specification says so); without an absolute $HOME the home
 * directory is the password database's. */
#ifndef PTXKIT_RUNTIME_CACHE_DIR_H
#define PTXKIT_RUNTIME_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* Whether PTXKIT_CACHE is "off" or "0". */
bool cache_dir_disabled(void);
/* The configured directory into buf (whether or not the cache is disabled);
 * false when no variable names one or the path does not fit. */
bool cache_dir_configured(char *buf, size_t size);
/* The state directory into buf; false when none can be found or the path
 * does not fit. */
bool state_dir_configured(char *buf, size_t size);

#endif
