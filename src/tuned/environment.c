/* ptxkit_environment_notes_get: the environment values the library falls back
 * from, gathered for the application to show (the library never prints). */
#include <stdio.h>
#include <string.h>

#include "runtime/disk_cache.h"
#include "runtime/status.h"
#include "tuned/tuned.h"

ptxkit_status ptxkit_environment_notes_get(char *buf, size_t size) {
    if (!buf || !size) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_environment_notes_get: no buffer");
    buf[0] = 0;
    char notes[3][256];
    tune_mode_from_env_note(notes[0], sizeof notes[0]);
    tune_budget_from_env(notes[1], sizeof notes[1]);
    disk_cache_cap_from_env(notes[2], sizeof notes[2]);
    size_t used = 0;
    for (int i = 0; i < 3; i++) {
        if (!notes[i][0]) continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? "\n" : "", notes[i]);
        if (n < 0 || (size_t)n >= size - used) break;   /* truncated: the buffer holds what fit */
        used += (size_t)n;
    }
    return PTXKIT_SUCCESS;
}
