/* Header trees from disk (header_tree.c): a program's include directories,
 * the toolkit's include directories found beside NVRTC, and the digest of
 * every header file a compile of the program may read from them, which is
 * part of its kernels' cache keys.
 *
 * Which files a compile reads is found by a conservative scan: every
 * #include "x" and #include <x> line of the source, of the program's own
 * headers and of each file found (#if ignored, so a superset), resolved in
 * the including file's directory (quoted names) and along the search path;
 * every file an include name reaches on the path is followed, not only the
 * first, so no order of search can hide one. A computed include (#include
 * MACRO) is not followed.
 *
 * The scan's result is recorded in a manifest beside the compiled images in
 * the disk cache: (path, size, mtime, hash) of each file, and the
 * modification time of each directory where an include name was looked for
 * and not found (a file appearing there changes it). A later process
 * re-hashes the application's files and checks the toolkit's by size and
 * modification time; when all match, the recorded digest is the program's
 * and nothing is scanned and NVRTC is not loaded; else it scans again. */
#ifndef PTXKIT_RUNTIME_HEADER_TREE_H
#define PTXKIT_RUNTIME_HEADER_TREE_H

#include <stdbool.h>

#include "ptxkit.h"
#include "runtime/cache_key.h"

typedef struct header_tree header_tree;

/* A program's tree; source_path (may be NULL): the file the program was
 * read from, whose directory is searched first. NULL when out of memory. */
header_tree *header_tree_create(const char *source_path);
void header_tree_destroy(header_tree *tree);

/* Appends include directories (each must be an existing directory; kept as
 * its absolute path). Refused once the tree was used by a lookup or compile.
 * `who` names the public call in messages. */
ptxkit_status header_tree_add_dirs(header_tree *tree, const char *const *dirs, int count, const char *who);

/* The search path NVRTC gets as -I options, in order: the source file's
 * directory, the program's include directories, the toolkit's. The array
 * lives as long as the tree. */
int header_tree_search_path(header_tree *tree, const char *const **dirs);

/* The digest of the search path and of every file the scan reaches, for a
 * program named program_name (NVRTC looks for quoted includes in its
 * directory too) whose in-memory texts (source and handed-in headers, hashed in
 * program_hash) are `texts`, named `names` (the headers': names NVRTC
 * resolves in memory, never on disk). Computed once per tree. */
text_hash header_tree_digest(header_tree *tree, text_hash program_hash, const char *program_name, const char *source,
                             const char *const *names, const char *const *texts, int count);

/* How many header files on disk the digest covers (0 before it is made). */
int header_tree_file_count(header_tree *tree);

/* The toolkit's include directories (<cuda>/include and <cuda>/include/cccl
 * where they exist), found once per process beside the NVRTC library the
 * search of driver/nvrtc.c would open, without opening it.
 * PTXKIT_TOOLKIT_INCLUDE=off: none. */
int header_tree_toolkit_dirs(const char *const **dirs);

#endif
