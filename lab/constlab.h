/* The constant-memory lab: a streamed array, each element combined with a
 * table of coefficients held in __constant__, in global memory (read with
 * ld.global or ld.global.nc) or in shared memory, every lane of a warp
 * reading the same coefficient (uniform) or each its own (divergent); and
 * the same loop as a plain copy, the ceiling. The kernels are
 * lab/kernels/const_lab.cu, whose top comment gives the arithmetic. Part
 * of the lab library (lab.h): used by `ptxkit bench constant` and the tests,
 * through the public API only. Failures: a status, the message in
 * ptxkit_last_error(). */
#ifndef PTXKIT_CONSTLAB_H
#define PTXKIT_CONSTLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptxkit.h"

/* Where the coefficients live. COPY reads none: out = in through the same
 * loop, what the others are measured against. */
typedef enum constlab_store {
    CONSTLAB_CONSTANT = 0,  /* __constant__ (ld.const through the constant cache) */
    CONSTLAB_GLOBAL,        /* global memory, ld.global */
    CONSTLAB_NC,            /* global memory, ld.global.nc (__ldg, the read-only path) */
    CONSTLAB_SHARED,        /* shared memory, copied in by each block */
    CONSTLAB_COPY,          /* no coefficients */
    CONSTLAB_STORE_COUNT
} constlab_store;

enum { CONSTLAB_MAX_TAPS = 64, CONSTLAB_DEFAULT_TAPS = 32, CONSTLAB_BLOCK = 256, CONSTLAB_ITEMS = 2 };

/* "constant", "global", "nc", "shared", "copy"; NULL out of range. */
const char *constlab_store_name(constlab_store s);
/* "uniform" or "divergent". */
const char *constlab_pattern_name(bool divergent);

typedef struct constlab_poly {
    constlab_store store;
    bool divergent;       /* each lane its own coefficient address */
    int taps;             /* coefficients per element, 1 .. 64; 0: 32 */
    int block_size;       /* power of two in [32, 1024]; 0: 256 */
    unsigned grid;        /* blocks; 0: as many as are resident at once (a grid-stride loop either way) */
    size_t n;             /* elements (floats) of in and out */
    ptxkit_dptr out, in;  /* 16-byte aligned */
    ptxkit_dptr table;    /* constlab_table_words(taps) floats written by constlab_table_write;
                           * read by GLOBAL, NC and SHARED (0 allowed for CONSTANT and COPY) */
} constlab_poly;

/* Coefficient m of the table (a multiple of 1/8 in [-1, 1]). */
float constlab_coefficient(int m);
/* The table of a run with `taps` coefficients: 2 x taps floats, word m
 * holding coefficient m % taps, so that an offset plus j never wraps. */
size_t constlab_table_words(int taps);
void constlab_table(int taps, float *table);
/* Writes the table to device memory (constlab_table_words(taps) floats),
 * synchronously (ptxkit_memory_write). */
ptxkit_status constlab_table_write(ptxkit_context *ctx, ptxkit_dptr table, int taps);

/* out[i] = the polynomial of in[i] (see const_lab.cu). n == 0 launches nothing. */
ptxkit_status constlab_poly_run(ptxkit_context *ctx, const constlab_poly *p, ptxkit_stream *stream);
/* The run's kernel as PTX for sm_<arch>, compiled by NVRTC without a GPU
 * (tests, inspection: which loads the coefficients take). Free with
 * ptxkit_program_compiled_free. */
ptxkit_status constlab_poly_compile(const constlab_poly *p, int arch, ptxkit_compiled *out);
/* The expected output, computed on the CPU from a copy of the input. */
void constlab_reference(const constlab_poly *p, const float *in, float *out);
/* Distinct coefficient addresses one warp-wide read touches: 1 uniform,
 * min(32, taps) divergent, 0 for COPY. */
int constlab_addresses_per_read(const constlab_poly *p);
/* Bytes the run streams: n floats read and n written. */
double constlab_streamed_bytes(const constlab_poly *p);

/* Fills n floats at x with values in [-1, 1) from a hash of index and seed. */
ptxkit_status constlab_fill(ptxkit_context *ctx, ptxkit_dptr x, size_t n, uint32_t seed, ptxkit_stream *stream);

#endif
