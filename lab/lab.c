/* The lab's kernel files (embedded into this library by tools/embed.c, as
 * the library embeds its own) as programs of the public API. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"

typedef struct {
    const char *name, *text;
    size_t size;
} embedded_entry;
extern const embedded_entry lab_embedded_files[];
extern const size_t lab_embedded_count;

static const embedded_entry *find(const char *name) {
    for (size_t i = 0; name && i < lab_embedded_count; i++)
        if (strcmp(lab_embedded_files[i].name, name) == 0) return &lab_embedded_files[i];
    return NULL;
}

/* The embedded file `name`, or NOT_FOUND with the lab's message. */
static ptxkit_status file_of(const char *name, const embedded_entry **f) {
    *f = find(name);
    return *f ? PTXKIT_SUCCESS
              : ptxkit_last_error_set(PTXKIT_ERROR_NOT_FOUND, "the lab has no kernel file '%s'", name ? name : "(null)");
}

/* The lab's device headers (.cuh: what its kernel files share, such as
 * ladder_ops.cuh), handed to every program so `#include "NAME.cuh"` finds
 * them as a file beside the kernel would be found. */
enum { MAX_HEADERS = 8 };
static int lab_headers(ptxkit_header *headers) {
    int count = 0;
    for (size_t i = 0; i < lab_embedded_count && count < MAX_HEADERS; i++) {
        size_t len = strlen(lab_embedded_files[i].name);
        if (len > 4 && strcmp(lab_embedded_files[i].name + len - 4, ".cuh") == 0)
            headers[count++] = (ptxkit_header){lab_embedded_files[i].name, lab_embedded_files[i].text};
    }
    return count;
}

static ptxkit_status create(const embedded_entry *f, ptxkit_program **out) {
    ptxkit_header headers[MAX_HEADERS];
    int count = lab_headers(headers);
    return ptxkit_program_create(f->name, f->text, headers, count, out);
}

ptxkit_status lab_program_create(const char *name, ptxkit_program **out) {
    const embedded_entry *f;
    ptxkit_status st = file_of(name, &f);
    return st == PTXKIT_SUCCESS ? create(f, out) : st;
}

/* One program per file for the process's life: the launchers ask for a
 * kernel on every run, and a program (text copied, hashed once) is what
 * makes that lookup cheap. Reachable from here, so no leak report. */
enum { MAX_FILES = 24 };
static ptxkit_program *programs[MAX_FILES];
static pthread_mutex_t programs_lock = PTHREAD_MUTEX_INITIALIZER;

static ptxkit_status shared_program(const char *file, ptxkit_program **out) {
    const embedded_entry *f;
    ptxkit_status st = file_of(file, &f);
    if (st != PTXKIT_SUCCESS) return st;
    size_t slot = (size_t)(f - lab_embedded_files);
    if (slot >= MAX_FILES) return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "lab: more than %d kernel files", MAX_FILES);
    pthread_mutex_lock(&programs_lock);
    if (!programs[slot]) st = create(f, &programs[slot]);
    *out = programs[slot];
    pthread_mutex_unlock(&programs_lock);
    return st;
}

ptxkit_status lab_kernel_get(ptxkit_context *ctx, const char *file, const char *entry, const char *const *defines,
                             int define_count, ptxkit_kernel **out) {
    ptxkit_program *program = NULL;
    ptxkit_status st = shared_program(file, &program);
    return st == PTXKIT_SUCCESS ? ptxkit_program_kernel_get(ctx, program, entry, defines, define_count, out) : st;
}
