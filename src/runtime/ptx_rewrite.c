/* Load cache-operator rewrite of PTX text (semantics in ptx_rewrite.h).
 *
 * One pass over the text with a small lexer, not a PTX parser: it knows
 * comments, string literals, words (identifiers, registers, directives and
 * dotted opcodes) and the punctuation that ends a statement, which is all it
 * takes to find the opcode position of a statement. Only the qualifiers of
 * an `ld` at that position are read; everything else is copied as it is.
 * The output is the input copied span by span, with at most two edits per
 * load (insert the operator, drop `.weak` for nc), so bytes the rewrite does
 * not understand cannot be damaged by it. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ptx_rewrite.h"

/* Where the lexer stands in a statement: a word is an opcode only at the
 * start of a statement or right after a guard predicate. */
typedef enum position {
    AT_STATEMENT,   /* start of text, after ; { } a label's colon, or a line break */
    AFTER_AT,       /* "@" */
    AFTER_BANG,     /* "@!" */
    AFTER_GUARD,    /* "@p" / "@!p": the opcode comes next */
    MID_STATEMENT,
} position;

typedef struct rewriter {
    const char *in;
    size_t size;
    size_t copied;          /* input before this offset is already in the output */
    const char *op_text;    /* ".cg"; NULL for DEFAULT */
    bool drop_weak;         /* nc: ptxas refuses .weak with .nc */
    char *out;
    size_t out_len, out_cap;
    bool out_of_memory, overflow;
    ptx_rewrite_stats stats;
    size_t first_unrecognized;   /* offset of its ld; SIZE_MAX when none */
    size_t first_unrecognized_len;
} rewriter;

/* The qualifiers of one ld, as counted while reading them. */
typedef struct load_form {
    int global, other_space, weak, ordered, scope, operator, hint, prefetch, vec, type, unknown;
    bool type_last;
    size_t global_end;               /* offset just after the first "global" */
    size_t weak_begin, weak_end;     /* ".weak", dot included */
} load_form;

static const char *const op_texts[PTXKIT_LOAD_OP_COUNT] = {
    [PTXKIT_LOAD_DEFAULT] = NULL, [PTXKIT_LOAD_CA] = ".ca", [PTXKIT_LOAD_CG] = ".cg", [PTXKIT_LOAD_CS] = ".cs",
    [PTXKIT_LOAD_LU] = ".lu",     [PTXKIT_LOAD_CV] = ".cv", [PTXKIT_LOAD_NC] = ".nc",
};

static const char *const types[] = {"b8", "b16", "b32", "b64", "b128", "u8",  "u16", "u32",
                                    "u64", "s8", "s16", "s32", "s64", "f32", "f64"};
static const char *const other_spaces[] = {"const",  "local",       "param",       "param::entry",
                                           "param::func", "shared", "shared::cta", "shared::cluster"};
static const char *const orderings[] = {"volatile", "relaxed", "acquire", "mmio"};
static const char *const scopes[] = {"cta", "cluster", "gpu", "sys"};
static const char *const operators[] = {"ca", "cg", "cs", "lu", "cv", "nc"};
static const char *const prefetch_sizes[] = {"L2::64B", "L2::128B", "L2::256B"};
static const char *const vectors[] = {"v2", "v4", "v8"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void bump(int *count) {
    if (*count < INT_MAX) (*count)++;
}

/* ASCII only: <ctype.h> would depend on the locale and is undefined for
 * negative chars. */
static bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

static bool is_word_start(char c) { return is_ident_char(c) || c == '.' || c == '%'; }

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* A word: identifier characters and dots, with "::" inside qualifiers
 * (.shared::cta, .L2::cache_hint); a single ':' ends a label instead. */
static size_t word_end(const char *p, size_t n, size_t i) {
    size_t j = i + 1;
    while (j < n) {
        if (is_ident_char(p[j]) || p[j] == '.')
            j++;
        else if (p[j] == ':' && j + 1 < n && p[j + 1] == ':')
            j += 2;
        else
            break;
    }
    return j;
}

/* If a comment starts at i, its end (a // comment stops before its line
 * break; an unterminated block comment runs to the end), else i. *line_break
 * is set when a block comment spans lines. */
static size_t comment_end(const char *p, size_t n, size_t i, bool *line_break) {
    if (i + 1 >= n || p[i] != '/') return i;
    if (p[i + 1] == '/') {
        const char *nl = memchr(p + i, '\n', n - i);
        return nl ? (size_t)(nl - p) : n;
    }
    if (p[i + 1] != '*') return i;
    for (size_t j = i + 2; j < n; j++) {
        if (p[j] == '\n') *line_break = true;
        if (p[j] == '*' && j + 1 < n && p[j + 1] == '/') return j + 2;
    }
    return n;
}

/* A string literal starting at i ends after its closing quote, or before
 * the line break / at the end when it is not closed. */
static size_t string_end(const char *p, size_t n, size_t i) {
    size_t j = i + 1;
    while (j < n && p[j] != '"' && p[j] != '\n') j += (p[j] == '\\' && j + 1 < n && p[j + 1] != '\n') ? 2 : 1;
    return j < n && p[j] == '"' ? j + 1 : j;
}

static bool in_list(const char *s, size_t len, const char *const *list, size_t count) {
    for (size_t k = 0; k < count; k++)
        if (strlen(list[k]) == len && memcmp(s, list[k], len) == 0) return true;
    return false;
}

static bool has_prefix(const char *s, size_t len, const char *prefix) {
    size_t m = strlen(prefix);
    return len >= m && memcmp(s, prefix, m) == 0;
}

/* Counts one qualifier (without its dot) starting at offset `at`. */
static void count_qualifier(load_form *f, const char *p, size_t at, size_t len) {
    const char *s = p + at;
    bool is_type = false;
    if (len == 6 && memcmp(s, "global", 6) == 0) {
        if (f->global++ == 0) f->global_end = at + len;
    } else if (len == 4 && memcmp(s, "weak", 4) == 0) {
        f->weak++;
        f->weak_begin = at - 1;
        f->weak_end = at + len;
    } else if (in_list(s, len, types, COUNT(types))) {
        f->type++;
        is_type = true;
    } else if (in_list(s, len, vectors, COUNT(vectors))) {
        f->vec++;
    } else if (len == 14 && memcmp(s, "L2::cache_hint", 14) == 0) {
        f->hint++;
    } else if (in_list(s, len, prefetch_sizes, COUNT(prefetch_sizes))) {
        f->prefetch++;
    } else if (in_list(s, len, operators, COUNT(operators)) || has_prefix(s, len, "L1::") ||
               has_prefix(s, len, "L2::evict_")) {
        /* a cache operator, .nc, or an eviction priority: all exclusive with a new operator */
        f->operator++;
    } else if (in_list(s, len, orderings, COUNT(orderings))) {
        f->ordered++;
    } else if (in_list(s, len, scopes, COUNT(scopes))) {
        f->scope++;
    } else if (in_list(s, len, other_spaces, COUNT(other_spaces))) {
        f->other_space++;
    } else {
        f->unknown++;
    }
    f->type_last = is_type;
}

/* Counts the dot-separated qualifiers of the word [begin, end); `skip` is
 * the length of the opcode in front of them ("ld" in the first word). */
static void count_word(load_form *f, const char *p, size_t begin, size_t end, size_t skip) {
    size_t i = begin + skip;
    while (i < end) {
        /* p[i] is '.' here: the word continues only with dots (or is a
         * first word like "ldx", which the caller does not pass) */
        size_t j = i + 1;
        while (j < end && p[j] != '.') j++;
        count_qualifier(f, p, i + 1, j - (i + 1));
        i = j;
    }
}

/* ---- output ---- */

static void out_reserve(rewriter *r, size_t extra) {
    if (r->out_of_memory || r->overflow) return;
    size_t need;
    if (__builtin_add_overflow(r->out_len, extra, &need) || need == SIZE_MAX) {
        r->overflow = true;
        return;
    }
    need++; /* the NUL */
    if (need <= r->out_cap) return;
    size_t cap = r->out_cap > SIZE_MAX / 2 ? SIZE_MAX : r->out_cap * 2;
    if (cap < need) cap = need;
    char *grown = realloc(r->out, cap);
    if (!grown) {
        r->out_of_memory = true;
        return;
    }
    r->out = grown;
    r->out_cap = cap;
}

static void out_append(rewriter *r, const char *s, size_t n) {
    out_reserve(r, n);
    if (r->out_of_memory || r->overflow) return;
    memcpy(r->out + r->out_len, s, n);
    r->out_len += n;
}

/* Copies the input up to `offset` (not yet copied) into the output. */
static void copy_until(rewriter *r, size_t offset) {
    if (offset > r->copied) out_append(r, r->in + r->copied, offset - r->copied);
    r->copied = offset;
}

/* ---- loads ---- */

static void rewrite_plain(rewriter *r, const load_form *f) {
    bool drop = r->drop_weak && f->weak == 1;
    if (drop && f->weak_begin < f->global_end) {
        copy_until(r, f->weak_begin);
        r->copied = f->weak_end;
    }
    copy_until(r, f->global_end);
    out_append(r, r->op_text, strlen(r->op_text));
    if (drop && f->weak_begin >= f->global_end) {
        copy_until(r, f->weak_begin);
        r->copied = f->weak_end;
    }
    bump(&r->stats.rewritten);
}

/* The statement starting at `begin` has the word "ld..." ending at
 * `first_end`. Reads its qualifiers (also those in further ".x" words after
 * white space or comments, which ptxas accepts), classifies the load,
 * rewrites it if it is plain, and returns the end of its last qualifier. */
static size_t handle_ld(rewriter *r, size_t begin, size_t first_end) {
    const char *p = r->in;
    size_t n = r->size;
    load_form f = {0};
    count_word(&f, p, begin, first_end, 2);
    size_t end = first_end;
    for (;;) {
        size_t j = end;
        for (;;) {
            bool ignored = false;
            size_t c;
            if (j < n && (is_blank(p[j]) || p[j] == '\n'))
                j++;
            else if (j < n && (c = comment_end(p, n, j, &ignored)) != j)
                j = c;
            else
                break;
        }
        if (j >= n || p[j] != '.') break;
        end = word_end(p, n, j);
        count_word(&f, p, j, end, 0);
    }

    if (!f.global) return end; /* another state space or generic: not ours */
    if (f.ordered) {
        bump(&r->stats.kept_ordered);
    } else if (f.operator) {
        bump(&r->stats.kept_operator);
    } else if (f.global == 1 && f.type == 1 && f.type_last && f.weak <= 1 && f.hint <= 1 && f.prefetch <= 1 &&
               f.vec <= 1 && !f.other_space && !f.scope && !f.unknown) {
        bump(&r->stats.plain);
        if (r->op_text) rewrite_plain(r, &f);
    } else {
        bump(&r->stats.unrecognized);
        if (r->first_unrecognized == SIZE_MAX) {
            r->first_unrecognized = begin;
            r->first_unrecognized_len = first_end - begin;
        }
    }
    return end;
}

static bool is_ld_word(const char *p, size_t begin, size_t end) {
    return end - begin >= 2 && p[begin] == 'l' && p[begin + 1] == 'd' && (end - begin == 2 || p[begin + 2] == '.');
}

static void scan(rewriter *r) {
    const char *p = r->in;
    size_t n = r->size, i = 0;
    position pos = AT_STATEMENT;
    while (i < n) {
        char c = p[i];
        bool line_break = false;
        size_t skip = comment_end(p, n, i, &line_break);
        if (skip != i) {
            /* a line break ends directives such as .loc, which have no ';' */
            if (line_break && pos == MID_STATEMENT) pos = AT_STATEMENT;
            i = skip;
        } else if (c == '"') {
            i = string_end(p, n, i);
            pos = MID_STATEMENT;
        } else if (c == '\n') {
            if (pos == MID_STATEMENT) pos = AT_STATEMENT;
            i++;
        } else if (is_blank(c)) {
            i++;
        } else if (is_word_start(c)) {
            size_t end = word_end(p, n, i);
            if ((pos == AT_STATEMENT || pos == AFTER_GUARD) && is_ld_word(p, i, end)) {
                end = handle_ld(r, i, end);
                pos = MID_STATEMENT;
            } else {
                pos = (pos == AFTER_AT || pos == AFTER_BANG) ? AFTER_GUARD : MID_STATEMENT;
            }
            i = end;
        } else {
            if (c == ';' || c == '{' || c == '}' || c == ':')
                pos = AT_STATEMENT;
            else if (c == '@')
                pos = AFTER_AT;
            else if (c == '!' && pos == AFTER_AT)
                pos = AFTER_BANG;
            else
                pos = MID_STATEMENT;
            i++;
        }
    }
    copy_until(r, n);
}

static void set_why(char *why, size_t why_size, const char *fmt, const char *detail) {
    if (why && why_size) snprintf(why, why_size, fmt, detail);
}

ptxkit_status ptx_rewrite_loads(const char *ptx, size_t size, ptxkit_load_op op, char **out, size_t *out_size,
                                ptx_rewrite_stats *stats, char *why, size_t why_size) {
    if (why && why_size) why[0] = 0;
    if (stats) memset(stats, 0, sizeof *stats);
    if (out) *out = NULL;
    if (out_size) *out_size = 0;
    if (!out || !out_size) {
        set_why(why, why_size, "ptx_rewrite_loads: %s is NULL", !out ? "out" : "out_size");
        return PTXKIT_ERROR_INVALID_ARGUMENT;
    }
    if (!ptx && size) {
        set_why(why, why_size, "ptx_rewrite_loads: %s", "ptx is NULL with a non-zero size");
        return PTXKIT_ERROR_INVALID_ARGUMENT;
    }
    if ((int)op < 0 || op >= PTXKIT_LOAD_OP_COUNT) {
        set_why(why, why_size, "ptx_rewrite_loads: %s", "op is not a ptxkit_load_op");
        return PTXKIT_ERROR_INVALID_ARGUMENT;
    }

    rewriter r = {.in = ptx, .size = size, .op_text = op_texts[op], .drop_weak = op == PTXKIT_LOAD_NC,
                  .first_unrecognized = SIZE_MAX};
    /* Room for the copy plus a few operators; grows if a text has more. */
    out_reserve(&r, size > SIZE_MAX - size / 16 - 64 ? size : size + size / 16 + 64);
    if (!r.overflow && !r.out_of_memory) scan(&r);
    if (r.overflow || r.out_of_memory) {
        free(r.out);
        set_why(why, why_size, "ptx_rewrite_loads: %s", r.overflow ? "the copy's size overflows size_t"
                                                                    : "out of memory for the copy");
        return r.overflow ? PTXKIT_ERROR_OVERFLOW : PTXKIT_ERROR_OUT_OF_MEMORY;
    }
    r.out[r.out_len] = 0;
    *out = r.out;
    *out_size = r.out_len;
    if (stats) *stats = r.stats;
    if (r.first_unrecognized != SIZE_MAX && why && why_size) {
        size_t line = 1;
        for (size_t k = 0; k < r.first_unrecognized; k++) line += ptx[k] == '\n';
        int shown = r.first_unrecognized_len > 60 ? 60 : (int)r.first_unrecognized_len;
        snprintf(why, why_size, "line %zu: global load left alone, not a form this rewrite knows: %.*s%s", line, shown,
                 ptx + r.first_unrecognized, r.first_unrecognized_len > 60 ? "..." : "");
    }
    return PTXKIT_SUCCESS;
}
