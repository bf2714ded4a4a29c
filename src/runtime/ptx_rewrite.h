/* Load cache-operator rewrite of PTX text, so an application's own PTX can
 * have the operator of its plain global loads chosen at load time, before
 * the driver JIT-compiles it. A pure text transformation: no driver, no
 * NVRTC, no context; it never prints and never aborts.
 *
 * What is a "plain global load" (PTX ISA 9.0, `ld`):
 *   ld{.weak}.global{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B}{.v2|.v4|.v8}.type
 * with .type one of b8 b16 b32 b64 b128 u8 u16 u32 u64 s8 s16 s32 s64 f32 f64
 * (the last qualifier), any operands, where an opcode can be: at the start
 * of the text, after `;` `{` `}` a label's `:` or a line break (directives
 * such as .loc end at the line, not at a `;`), then after an optional guard
 * `@p` / `@!p`. Qualifiers may come in any order and be separated by white
 * space or comments, as ptxas accepts them.
 *
 * The operator goes right after `.global` (`ld.global.cg.v4.u32`), the
 * place the grammar gives .cop. `.weak` is kept for ca/cg/cs/lu/cv; for nc
 * it is dropped, since ptxas refuses `.weak` with `.nc` and weak is the
 * default semantics of a load anyway.
 *
 * Left alone, and counted:
 *   kept_operator  a global load that already has .ca/.cg/.cs/.lu/.cv, .nc,
 *                  or an eviction priority (.L1::*, .L2::evict_*): the
 *                  grammar makes those exclusive with a new operator, and
 *                  the author's choice wins. This is also why a second
 *                  rewrite changes nothing.
 *   kept_ordered   .volatile, .relaxed, .acquire, .mmio global loads: their
 *                  memory ordering is not ours to touch (the grammar gives
 *                  them no .cop either).
 *   unrecognized   an ld with .global that is none of the above and not a
 *                  well-formed plain load (unknown or repeated qualifier,
 *                  no type, type not last, a second state space...).
 * Left alone, not counted: every other instruction (ldu, st, atom, red,
 * prefetch, cp.async, ...), loads from other state spaces or generic
 * addresses, comments, string literals, and words that only contain
 * "ld.global" (`xld.global`, `%ld`...). Macros of ptxas' preprocessor are
 * not expanded: a load written through a #define is not seen.
 *
 * Malformed input is never an error: the text is copied byte for byte with
 * what cannot be parsed left alone (an unterminated comment runs to the end,
 * a string to the end of its line; a NUL byte is copied like any other
 * character that is neither blank nor part of a word, so an ld right after
 * one is not at a statement's start and is left alone, which does not
 * matter since the driver stops reading there). Only the arguments can fail
 * (see ptx_rewrite_loads). A caller that wants to be strict checks
 * stats.unrecognized == 0. */
#ifndef PTXKIT_PTX_REWRITE_H
#define PTXKIT_PTX_REWRITE_H

#include <stddef.h>

#include "ptxkit.h"

typedef struct ptx_rewrite_stats {
    int rewritten;      /* plain global loads given the operator */
    int kept_operator;  /* global loads that already had a cache operator, .nc, or an eviction priority */
    int kept_ordered;   /* volatile / relaxed / acquire / other memory-ordered global loads */
    int plain;          /* plain global loads found: == rewritten, except with op DEFAULT (0 rewritten) */
    int unrecognized;   /* ld ... .global forms not understood, left alone */
} ptx_rewrite_stats;

/* Rewrites every plain global load of `ptx` (size bytes, need not be
 * NUL-terminated; NULL is allowed when size is 0) to carry `op`, into a
 * malloc'd NUL-terminated copy (*out, *out_size without the NUL). op DEFAULT
 * copies unchanged (stats are still filled). op NC turns `ld.global.T` into
 * `ld.global.nc.T` (the caller guarantees read-only data). Never reads past
 * `size`. Counts saturate at INT_MAX. stats and why may be NULL.
 *
 * Errors, with *out NULL, *out_size 0 and a reason in why:
 *   PTXKIT_ERROR_INVALID_ARGUMENT  out or out_size NULL, ptx NULL with size
 *                                  > 0, op not a ptxkit_load_op
 *   PTXKIT_ERROR_OVERFLOW          the copy's size does not fit in size_t
 *   PTXKIT_ERROR_OUT_OF_MEMORY
 * On success why is "" or, when a global load was left alone as
 * unrecognized, a note naming the first one ("line 12: ..."). */
ptxkit_status ptx_rewrite_loads(const char *ptx, size_t size, ptxkit_load_op op, char **out, size_t *out_size,
                                ptx_rewrite_stats *stats, char *why, size_t why_size);

#endif
