/* Shared pieces of the GEMM commands (gemm_common.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxkit_ops.h"
#include "cli.h"
#include "gemm_common.h"

/* ---- peak ------------------------------------------------------------------ */

/* FP32 and FP64 FMA lanes per SM by compute capability (CUDA C++
 * Programming Guide, "Arithmetic Instructions" throughput table); FP64 on
 * sm_90 and sm_80, where ptxkit_gemm runs it on the tensor cores, their
 * rate: twice the CUDA cores' (67 and 19.5 TFLOP/s on an H100 SXM and an
 * A100). */
static int lanes_per_sm(int major, int minor, bool f64) {
    if (major == 9) return 128;                            /* Hopper (FP64: DMMA) */
    if (major == 8 && minor == 0) return 64;               /* A100 (FP64: DMMA) */
    if (major == 8 || major >= 10) return f64 ? 2 : 128;   /* GA10x, Ada, Blackwell consumer parts */
    if (major == 7) return f64 ? (minor == 0 ? 32 : 2) : 64; /* V100 / Turing */
    return 0;
}

gemm_peak gemm_peak_of(ptxkit_context *ctx, ptxkit_dtype type) {
    gemm_peak p = {0};
    ptxkit_device_info info;
    if (ptxkit_device_info_get(ctx, &info) != PTXKIT_SUCCESS) return p;
    int khz = info.sm_clock_khz;
    p.clock_khz = khz;
    p.sm_count = info.sm_count;
    p.lanes = lanes_per_sm(info.cc_major, info.cc_minor, type == PTXKIT_FLOAT64);
    p.tflops = (double)khz * 1e3 * p.sm_count * p.lanes * 2.0 / 1e12;
    return p;
}

/* ---- inputs ------------------------------------------------------------------ */

ptxkit_status gemm_fill_uniform(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, size_t count, unsigned seed) {
    size_t elem = ptxkit_dtype_size(type), bytes = count * elem;
    if (bytes == 0) return PTXKIT_SUCCESS;
    size_t chunk = bytes < ((size_t)8 << 20) ? bytes : ((size_t)8 << 20);
    unsigned char *host = malloc(chunk);
    if (!host) return PTXKIT_ERROR_OUT_OF_MEMORY;
    unsigned long long s = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (size_t i = 0; i + elem <= chunk; i += elem) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double x = (double)(s >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
        if (elem == 8) memcpy(host + i, &x, 8);
        else {
            float f = (float)x;
            memcpy(host + i, &f, 4);
        }
    }
    ptxkit_status st = ptxkit_memory_write(ctx, dst, host, chunk);
    free(host);
    for (size_t done = chunk; st == PTXKIT_SUCCESS && done < bytes;) {
        size_t part = bytes - done < done ? bytes - done : done;
        st = ptxkit_memory_copy(ctx, dst + done, dst, part);
        done += part;
    }
    return st;
}

static const char *const tile_names[8] = {"bm", "bn", "bk", "tm", "tn", "warps_m", "stages", "split_k"};

const ptxkit_config *gemm_tiles_config(const gemm_tiles *t, ptxkit_config *out) {
    const int v[8] = {t->bm, t->bn, t->bk, t->tm, t->tn, t->warps_m, t->stages, t->split_k};
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 8; i++)
        if (v[i]) ptxkit_config_set(out, tile_names[i], v[i]);
    return out;
}

gemm_tiles gemm_tiles_from(const ptxkit_config *c) {
    gemm_tiles t = {0};
    int *f[8] = {&t.bm, &t.bn, &t.bk, &t.tm, &t.tn, &t.warps_m, &t.stages, &t.split_k};
    for (int i = 0; i < 8; i++) {
        long long v = 0;
        if (ptxkit_config_get(c, tile_names[i], &v) == PTXKIT_SUCCESS) *f[i] = (int)v;
    }
    return t;
}

void gemm_tiles_format(const gemm_tiles *t, char *buf, size_t size) {
    char split[16];
    if (t->split_k) snprintf(split, sizeof split, "%d", t->split_k);
    else snprintf(split, sizeof split, "-");
    snprintf(buf, size, "%dx%dx%d t%dx%d w%d s%d k%s", t->bm, t->bn, t->bk, t->tm, t->tn, t->warps_m, t->stages, split);
}

/* ---- compiling ahead ------------------------------------------------------------ */

typedef struct prepare_pool {
    ptxkit_context *ctx;
    const gemm_job *jobs;
    int count, next;
    ptxkit_status first;
    pthread_mutex_t lock;
} prepare_pool;

static void *prepare_worker(void *arg) {
    prepare_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next < p->count ? p->next++ : -1;
        pthread_mutex_unlock(&p->lock);
        if (i < 0) return NULL;
        const gemm_job *j = &p->jobs[i];
        ptxkit_config config;
        ptxkit_status st = ptxkit_gemm_prepare(p->ctx, j->type, j->op_a, j->op_b, j->m, j->n, j->k,
                                               gemm_tiles_config(&j->tiles, &config), NULL);
        pthread_mutex_lock(&p->lock);
        if (st != PTXKIT_SUCCESS && p->first == PTXKIT_SUCCESS) p->first = st;
        pthread_mutex_unlock(&p->lock);
    }
}

ptxkit_status gemm_prepare_all(ptxkit_context *ctx, const gemm_job *jobs, int count, int threads) {
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus < 1 ? 1 : cpus > 32 ? 32 : (int)cpus;
    }
    if (threads > count) threads = count;
    prepare_pool p = {.ctx = ctx, .jobs = jobs, .count = count};
    pthread_mutex_init(&p.lock, NULL);
    pthread_t tids[32];
    int started = 0;
    for (; started < threads - 1 && started < 32; started++)
        if (pthread_create(&tids[started], NULL, prepare_worker, &p) != 0) break;
    prepare_worker(&p);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&p.lock);
    return p.first;
}

/* ---- cuBLAS ------------------------------------------------------------------ */

/* The few declarations used, as cublas_api.h has them (no header needed
 * at build time). */
typedef int cublas_status_t;  /* CUBLAS_STATUS_SUCCESS = 0 */
typedef void *cublas_handle_t;
enum { CUBLAS_OP_N_ = 0, CUBLAS_OP_T_ = 1, CUBLAS_DEFAULT_MATH_ = 0, CUBLAS_PEDANTIC_MATH_ = 2 };

struct cublas_lib {
    void *so;
    char path[256];
    cublas_handle_t handle;
    ptxkit_context *ctx;
    bool pedantic_f64;
    cublas_status_t (*create)(cublas_handle_t *);
    cublas_status_t (*destroy)(cublas_handle_t);
    cublas_status_t (*set_stream)(cublas_handle_t, void *);
    cublas_status_t (*set_math_mode)(cublas_handle_t, int);
    cublas_status_t (*sgemm)(cublas_handle_t, int, int, int, int, int, const float *, const float *, int,
                             const float *, int, const float *, float *, int);
    cublas_status_t (*dgemm)(cublas_handle_t, int, int, int, int, int, const double *, const double *, int,
                             const double *, int, const double *, double *, int);
};

cublas_lib *cublas_open(ptxkit_context *ctx, char *why, size_t why_size) {
    const char *env = getenv("PTXKIT_CUBLAS");
    /* a path is dlopen'ed only when it is a regular file: a FIFO would block */
    if (env && *env && strchr(env, '/') && !cli_regular_file(env))
        return snprintf(why, why_size, "PTXKIT_CUBLAS=%s is not a regular file", env), NULL;
    const char *names[] = {env && *env ? env : NULL, "libcublas.so.13", "libcublas.so.12", "libcublas.so",
                           PTXKIT_TOOLKIT_CUBLAS};
    cublas_lib *lib = calloc(1, sizeof *lib);
    if (!lib) return snprintf(why, why_size, "out of memory"), NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib->so; i++)
        if (names[i] && (lib->so = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) != NULL)
            snprintf(lib->path, sizeof lib->path, "%s", names[i]);
    if (!lib->so) {
        snprintf(why, why_size, "no libcublas (tried %s%slibcublas.so.13, .so.12, libcublas.so, %s): %s",
                 env && *env ? env : "", env && *env ? ", " : "", PTXKIT_TOOLKIT_CUBLAS, dlerror());
        free(lib);
        return NULL;
    }
    *(void **)&lib->create = dlsym(lib->so, "cublasCreate_v2");
    *(void **)&lib->destroy = dlsym(lib->so, "cublasDestroy_v2");
    *(void **)&lib->set_stream = dlsym(lib->so, "cublasSetStream_v2");
    *(void **)&lib->set_math_mode = dlsym(lib->so, "cublasSetMathMode");
    *(void **)&lib->sgemm = dlsym(lib->so, "cublasSgemm_v2");
    *(void **)&lib->dgemm = dlsym(lib->so, "cublasDgemm_v2");
    if (!lib->create || !lib->destroy || !lib->set_stream || !lib->set_math_mode || !lib->sgemm || !lib->dgemm) {
        snprintf(why, why_size, "%s lacks a cuBLAS v2 symbol it should have", lib->path);
        dlclose(lib->so);
        free(lib);
        return NULL;
    }
    /* cuBLAS runs on the runtime, which takes the context current on the
     * thread: ptxkit's, the device's primary context. */
    lib->ctx = ctx;
    int r = -1;
    if (ptxkit_context_enter(ctx) == PTXKIT_SUCCESS) {
        r = lib->create(&lib->handle);
        ptxkit_context_leave(ctx);
    }
    if (r != 0) {
        snprintf(why, why_size, "cublasCreate_v2 failed (status %d)", r);
        dlclose(lib->so);
        free(lib);
        return NULL;
    }
    return lib;
}

void cublas_close(cublas_lib *lib) {
    if (!lib) return;
    if (ptxkit_context_enter(lib->ctx) == PTXKIT_SUCCESS) {
        lib->destroy(lib->handle);
        ptxkit_context_leave(lib->ctx);
    }
    /* the runtime inside keeps state past this point: the library stays loaded */
    free(lib);
}

const char *cublas_path(const cublas_lib *lib) { return lib ? lib->path : ""; }

void cublas_pedantic_f64(cublas_lib *lib, bool pedantic) {
    if (lib) lib->pedantic_f64 = pedantic;
}

ptxkit_status cublas_gemm(cublas_lib *lib, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b, size_t m,
                          size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b, size_t ldb,
                          double beta, ptxkit_dptr c, size_t ldc, ptxkit_stream *stream) {
    ptxkit_status st = ptxkit_context_enter(lib->ctx);
    if (st != PTXKIT_SUCCESS) return st;
    int r = lib->set_stream(lib->handle, ptxkit_stream_handle_get(stream));
    int ta = op_b == PTXKIT_GEMM_T ? CUBLAS_OP_T_ : CUBLAS_OP_N_, tb = op_a == PTXKIT_GEMM_T ? CUBLAS_OP_T_ : CUBLAS_OP_N_;
    if (r == 0 && type == PTXKIT_FLOAT32) {
        float al = (float)alpha, be = (float)beta;
        r = lib->set_math_mode(lib->handle, CUBLAS_PEDANTIC_MATH_);
        if (r == 0)
            r = lib->sgemm(lib->handle, ta, tb, (int)n, (int)m, (int)k, &al, (const float *)(uintptr_t)b, (int)ldb,
                           (const float *)(uintptr_t)a, (int)lda, &be, (float *)(uintptr_t)c, (int)ldc);
    } else if (r == 0) {
        r = lib->set_math_mode(lib->handle, lib->pedantic_f64 ? CUBLAS_PEDANTIC_MATH_ : CUBLAS_DEFAULT_MATH_);
        if (r == 0)
            r = lib->dgemm(lib->handle, ta, tb, (int)n, (int)m, (int)k, &alpha, (const double *)(uintptr_t)b, (int)ldb,
                           (const double *)(uintptr_t)a, (int)lda, &beta, (double *)(uintptr_t)c, (int)ldc);
    }
    ptxkit_context_leave(lib->ctx);
    return r == 0 ? PTXKIT_SUCCESS : PTXKIT_ERROR_LAUNCH;
}
