/* The library's read-only pages (code and constants) mapped ahead of use. */
#pragma once

/* Maps this library's read-only segments into the process's page tables
 * (MADV_POPULATE_READ, else one read per page), so that the first calls of
 * a fresh process do not each stop on a page fault for the code they run.
 * Meant for a thread of its own while the driver opens a context; the
 * writable segment is left alone (populating it would make its zero pages
 * resident). Errors are ignored: the pages then fault in as before. */
void code_pages_populate(void);
