/* code_pages.h: the library's read-only segments, mapped ahead of use. */
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/code_pages.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

enum { MAX_SEGMENTS = 8 };

typedef struct segments {
    uintptr_t self;                 /* an address inside this library */
    uintptr_t start[MAX_SEGMENTS];  /* its read-only PT_LOAD segments */
    size_t length[MAX_SEGMENTS];
    int count;
} segments;

/* Keeps the read-only loadable segments of the object that holds
 * s->self; copies them out, so that nothing runs under the loader's lock
 * (the driver may be loading beside it). */
static int find_self(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    segments *s = data;
    int found = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && s->self >= lo && s->self - lo < ph->p_memsz) found = 1;
    }
    if (!found) return 0;
    for (int i = 0; i < info->dlpi_phnum && s->count < MAX_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) continue;
        s->start[s->count] = info->dlpi_addr + ph->p_vaddr;
        s->length[s->count] = ph->p_memsz;
        s->count++;
    }
    return 1;
}

void code_pages_populate(void) {
    segments s = {.self = (uintptr_t)&code_pages_populate};
    dl_iterate_phdr(find_self, &s);
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    for (int i = 0; i < s.count; i++) {
        uintptr_t lo = s.start[i] & ~(uintptr_t)(page - 1), hi = s.start[i] + s.length[i];
        if (madvise((void *)lo, hi - lo, MADV_POPULATE_READ) == 0) continue;
        /* Kernels before 5.14 refuse the advice (EINVAL): a read of each
         * page faults it in. Any other failure (a page the file no longer
         * backs, which a read would answer with SIGBUS) leaves it be. */
        if (errno != EINVAL) continue;
        for (uintptr_t p = lo; p < hi; p += (uintptr_t)page) (void)*(volatile const unsigned char *)p;
    }
}
