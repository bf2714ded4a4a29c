/* ptxkit bench startup: what a process pays for its first kernel. From a
 * freshly opened context, the time until the first kernel has finished
 * (NVRTC compile on a cold disk cache, a CUBIN load on a warm one), and
 * whether NVRTC was loaded into the process to get there; then what a
 * registry hit costs.
 *
 * The default measures a built-in family (ptxkit_copy on the JIT path);
 * --user measures an application's kernel (ptxkit_program_create,
 * ptxkit_program_kernel_get, ptxkit_kernel_launch, synchronize). Each must be the first
 * kernel of its process, so they are separate runs; --runs K measures K
 * fresh processes one after another (forked before this process touches
 * CUDA), the first of which may fill the disk cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "cuda_direct.h"
#include "cli.h"
#include "commands.h"
#include "report.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"

static const char user_source[] =
    "extern \"C\" __global__ void startup_fill(unsigned *out, unsigned v) { out[threadIdx.x] = v + threadIdx.x; }\n";

typedef struct startup_figures {
    double open_ms;        /* ptxkit_context_create */
    double setup_ms;       /* allocations (and, for --user, creating the program) */
    double first_ms;       /* from after the context was opened to the first kernel finished */
    double get_ms;         /* of first_ms: getting the kernel (kernel_get; the floor: module load + get function) */
    double hit_us;         /* a registry hit, per lookup */
    int nvrtc_loaded;      /* libnvrtc mapped into the process after the first kernel */
    char module_load[160]; /* the context's JIT log after the first kernel: what was loaded, how long */
    char error[512];       /* why the run failed; "" when it did not */
} startup_figures;

/* Whether a shared object whose path contains `name` is mapped. */
static int library_mapped(const char *name) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, name) != NULL;
    if (f) fclose(f);
    return found;
}

static void first_line(char *dst, size_t size, const char *text) {
    snprintf(dst, size, "%.*s", (int)strcspn(text, "\n"), text);
}

/* The first kernel of this process: ptxkit_copy through the JIT path. */
static ptxkit_status first_family_kernel(ptxkit_context *ctx, startup_figures *f) {
    double t0 = cli_now_ms();
    ptxkit_dptr a = 0, b = 0;
    size_t bytes = 1 << 20;
    ptxkit_config o = {0};
    ptxkit_config_set(&o, "path", PTXKIT_PATH_JIT);
    ptxkit_config_set(&o, "load_op", PTXKIT_LOAD_CG);
    ptxkit_status st = ptxkit_memory_alloc(ctx, bytes, &a);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &b);
    f->setup_ms = cli_now_ms() - t0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_copy(ctx, b, a, bytes, &o, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    f->first_ms = cli_now_ms() - t0;
    f->nvrtc_loaded = library_mapped("libnvrtc");
    /* a registry hit: the lookup every later launch of the family pays */
    enum { HITS = 100000 };
    double t3 = cli_now_ms();
    const char *jit_log = "";
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_registry_probe(ctx, HITS, &jit_log);
    f->hit_us = (cli_now_ms() - t3) * 1e3 / HITS;
    first_line(f->module_load, sizeof f->module_load, jit_log);
    ptxkit_memory_free(ctx, a);
    ptxkit_memory_free(ctx, b);
    return st;
}

/* The first kernel of this process: the application's own, as an
 * application gets it. */
static ptxkit_status first_user_kernel(ptxkit_context *ctx, startup_figures *f) {
    double t0 = cli_now_ms();
    ptxkit_dptr out = 0;
    ptxkit_program *program = NULL;
    ptxkit_kernel *kernel = NULL;
    unsigned value = 1000;
    ptxkit_status st = ptxkit_memory_alloc(ctx, 32 * sizeof(unsigned), &out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_create("startup.cu", user_source, NULL, 0, &program);
    f->setup_ms = cli_now_ms() - t0;
    double t1 = cli_now_ms();
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_kernel_get(ctx, program, "startup_fill", NULL, 0, &kernel);
    f->get_ms = cli_now_ms() - t1;
    void *args[] = {&out, &value};
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_launch(kernel, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    f->first_ms = cli_now_ms() - t0;
    f->nvrtc_loaded = library_mapped("libnvrtc");
    first_line(f->module_load, sizeof f->module_load, ptxkit_kernel_jit_log_get(kernel));
    /* the kernel ran: check what it wrote (outside the timing) */
    unsigned got[32];
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, got, out, sizeof got);
    for (unsigned i = 0; st == PTXKIT_SUCCESS && i < 32; i++)
        if (got[i] != value + i) {
            snprintf(f->error, sizeof f->error, "the startup kernel wrote %u at %u", got[i], i);
            st = PTXKIT_ERROR_LAUNCH;
        }
    enum { HITS = 100000 };
    double t3 = cli_now_ms();
    ptxkit_kernel *again = NULL;
    for (int i = 0; i < HITS && st == PTXKIT_SUCCESS; i++) st = ptxkit_program_kernel_get(ctx, program, "startup_fill", NULL, 0, &again);
    f->hit_us = (cli_now_ms() - t3) * 1e3 / HITS;
    ptxkit_program_destroy(program);
    ptxkit_memory_free(ctx, out);
    return st;
}

/* The floor: what a hand-written driver-API program pays for the same
 * kernel from a CUBIN file (cuMemAlloc, cuModuleLoad, cuModuleGetFunction,
 * cuLaunchKernel, cuCtxSynchronize), from the same point (its context made
 * current). ptxkit never runs in this process. */
static int measure_floor(int device, const char *cubin, startup_figures *f) {
    memset(f, 0, sizeof *f);
    char why[256];
    const cuda_direct *cu = cuda_direct_get(why, sizeof why);
    if (!cu) {
        snprintf(f->error, sizeof f->error, "driver floor: %s", why);
        return 1;
    }
    double t = cli_now_ms();
    CUdevice dev;
    CUcontext cuctx;
    CUresult r = cu->init(0);
    if (r == CUDA_SUCCESS) r = cu->device_get(&dev, device);
    if (r == CUDA_SUCCESS) r = cu->primary_ctx_retain(&cuctx, dev);
    if (r == CUDA_SUCCESS) r = cu->ctx_set_current(cuctx);
    f->open_ms = cli_now_ms() - t;
    const char *step = "context";
    double t0 = cli_now_ms();
    CUdeviceptr out = 0;
    CUmodule module = NULL;
    CUfunction fn = NULL;
    unsigned value = 1000;
    if (r == CUDA_SUCCESS && (r = cu->mem_alloc(&out, 32 * sizeof(unsigned))) != CUDA_SUCCESS) step = "cuMemAlloc";
    f->setup_ms = cli_now_ms() - t0;
    double t1 = cli_now_ms();
    if (r == CUDA_SUCCESS && (r = cu->module_load(&module, cubin)) != CUDA_SUCCESS) step = "cuModuleLoad";
    if (r == CUDA_SUCCESS && (r = cu->module_get_function(&fn, module, "startup_fill")) != CUDA_SUCCESS)
        step = "cuModuleGetFunction";
    f->get_ms = cli_now_ms() - t1;
    void *args[] = {&out, &value};
    if (r == CUDA_SUCCESS && (r = cu->launch_kernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL)) != CUDA_SUCCESS)
        step = "cuLaunchKernel";
    if (r == CUDA_SUCCESS && (r = cu->ctx_synchronize()) != CUDA_SUCCESS) step = "cuCtxSynchronize";
    f->first_ms = cli_now_ms() - t0;
    unsigned got[32];
    if (r == CUDA_SUCCESS && (r = cu->memcpy_dtoh(got, out, sizeof got)) != CUDA_SUCCESS) step = "cuMemcpyDtoH";
    if (r != CUDA_SUCCESS) {
        const char *name = "?";
        cu->error_name(r, &name);
        snprintf(f->error, sizeof f->error, "driver floor: %s failed: %s", step, name);
        return 1;
    }
    for (unsigned i = 0; i < 32; i++)
        if (got[i] != value + i) {
            snprintf(f->error, sizeof f->error, "driver floor: the kernel wrote %u at %u", got[i], i);
            return 1;
        }
    snprintf(f->module_load, sizeof f->module_load, "cuModuleLoad of %s", cubin);
    return 0;
}

/* The floor's CUBIN: the startup kernel compiled by NVRTC for the GPU, as
 * ptxkit would cache it (written by a child, so NVRTC never enters the
 * processes that are measured). */
static int write_floor_cubin(int device, const char *path, startup_figures *f) {
    memset(f, 0, sizeof *f);
    ptxkit_context *ctx = NULL;
    ptxkit_program *program = NULL;
    ptxkit_device_info info;
    ptxkit_compiled out = {0};
    ptxkit_status st = ptxkit_context_create(device, &ctx);
    if (st == PTXKIT_SUCCESS) st = ptxkit_device_info_get(ctx, &info);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_create("startup.cu", user_source, NULL, 0, &program);
    if (st == PTXKIT_SUCCESS)
        st = ptxkit_program_compile(program, "startup_fill", NULL, 0, info.cc_major * 10 + info.cc_minor, 0, &out);
    FILE *file = NULL;
    if (st == PTXKIT_SUCCESS && (!out.is_cubin || !(file = fopen(path, "wb")) || fwrite(out.image, 1, out.size, file) != out.size))
        snprintf(f->error, sizeof f->error, "driver floor: cannot write the CUBIN %s", path);
    else if (st != PTXKIT_SUCCESS)
        snprintf(f->error, sizeof f->error, "driver floor: %s", ptxkit_last_error());
    if (file && fclose(file) != 0 && !f->error[0]) snprintf(f->error, sizeof f->error, "driver floor: cannot write %s", path);
    ptxkit_program_compiled_free(&out);
    ptxkit_program_destroy(program);
    ptxkit_context_destroy(ctx);
    return f->error[0] ? 1 : 0;
}

static int measure(bool user, int device, startup_figures *f) {
    memset(f, 0, sizeof *f);
    double t = cli_now_ms();
    ptxkit_context *ctx = NULL;
    ptxkit_status st = ptxkit_context_create(device, &ctx);
    f->open_ms = cli_now_ms() - t;
    if (st != PTXKIT_SUCCESS) {
        snprintf(f->error, sizeof f->error, "no usable GPU: %s", ptxkit_last_error());
        return 1;
    }
    st = user ? first_user_kernel(ctx, f) : first_family_kernel(ctx, f);
    if (st != PTXKIT_SUCCESS) { /* the command's own finding, else the library's message */
        char detail[sizeof f->error];
        snprintf(detail, sizeof detail, "%s", f->error[0] ? f->error : ptxkit_last_error());
        snprintf(f->error, sizeof f->error, "%s: %.400s", ptxkit_status_string(st), detail);
    }
    report_note_device(ctx); /* after the measurement: the report's metadata */
    ptxkit_context_destroy(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}

/* One measurement in a child forked from this process, which has not
 * touched CUDA: for the driver and NVRTC the child is a fresh process. */
typedef enum child_work { CHILD_FAMILY, CHILD_USER, CHILD_FLOOR, CHILD_FLOOR_CUBIN } child_work;

static int child_measure(child_work work, int device, const char *cubin, startup_figures *f) {
    switch (work) {
    case CHILD_FLOOR: return measure_floor(device, cubin, f);
    case CHILD_FLOOR_CUBIN: return write_floor_cubin(device, cubin, f);
    default: return measure(work == CHILD_USER, device, f);
    }
}

static int measure_in_child(child_work work, int device, const char *cubin, startup_figures *f) {
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(f->error, sizeof f->error, "pipe failed");
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        startup_figures mine;
        int code = child_measure(work, device, cubin, &mine);
        ssize_t written = write(fds[1], &mine, sizeof mine);
        _exit(written == (ssize_t)sizeof mine ? code : 1);
    }
    close(fds[1]);
    memset(f, 0, sizeof *f);
    ssize_t got = pid > 0 ? read(fds[0], f, sizeof *f) : -1;
    close(fds[0]);
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof *f) {
        snprintf(f->error, sizeof f->error, "the measuring process died (status %d)", status);
        return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) (n > 0) and returns its median. */
static double sorted_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_startup(int argc, char **argv) {
    bool user = false;
    int runs = 0;
    const arg_option options[] = {{.name = "user", .kind = ARG_FLAG, .value = &user},
                                  {.name = "runs", .kind = ARG_INT, .value = &runs, .lo = 1, .hi = 1000},
                                  {0}};
    const arg_spec spec = {
        .command = "bench startup",
        .usage = "usage: ptxkit bench startup [--user] [--runs K] [--device N] [--csv|--json] [--json FILE] [--csv FILE]\n"
                 "                            [--md FILE]\n",
        .help = "From context open (excluded) to the first kernel finished, in a fresh process: a built-in\n"
                "family (ptxkit_copy), or with --user an application's kernel (program, kernel_get, launch,\n"
                "synchronize); and whether NVRTC was loaded. --runs K measures K fresh processes in turn (a table,\n"
                "and the median, fastest and slowest of runs 2..K). The figure that counts is a fresh process\n"
                "with a warm disk cache:\n"
                "  ptxkit cache --purge && ptxkit bench startup --runs 6          (run 1 compiles)\n"
                "  ptxkit cache --purge && ptxkit bench startup --user --runs 6\n",
        .common = ARGS_DEVICE | ARGS_TABLES,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    const char *what = user ? "user kernel (program + kernel_get + launch + synchronize)"
                            : "built-in family (ptxkit_copy, JIT path)";
    if (!runs) {
        /* in this process: the process must be fresh, so this is its one measurement */
        startup_figures f;
        if (measure(user, common.device, &f) != 0) {
            fprintf(stderr, "ptxkit bench startup: %s\n", f.error);
            return 1;
        }
        char dir[4096];
        size_t files = 0, cached = 0;
        ptxkit_cache_dir_get(dir, sizeof dir);
        ptxkit_cache_stats_get(&files, &cached);
        printf("first kernel: %s\n", what);
        printf("context open (primary context retain): %.2f ms\n", f.open_ms);
        printf("%s: %.3f ms\n", user ? "an allocation and ptxkit_program_create" : "two 1 MiB allocations", f.setup_ms);
        printf("first %s, from call to kernel finished (kernel lookup + launch + sync): %.3f ms\n",
               user ? "ptxkit_program_kernel_get" : "ptxkit_copy", f.first_ms - f.setup_ms);
        printf("of which getting the kernel (%s): %.3f ms\n", user ? "ptxkit_program_kernel_get" : "inside ptxkit_copy", f.get_ms);
        printf("context open to first kernel finished, excluding context creation: %.3f ms\n", f.first_ms);
        printf("NVRTC loaded in the process: %s\n", f.nvrtc_loaded ? "yes" : "no");
        printf("module load: %s\n", f.module_load);
        printf("registry hit (%s of a loaded kernel): %.3f us\n", user ? "ptxkit_program_kernel_get" : "kernel_get", f.hit_us);
        printf("kernel cache: %s, %zu entries\n", dir[0] ? dir : "disabled", files);
        return 0;
    }
    static startup_figures figures[1000], floors[1000];
    /* --user: the driver-API floor runs in its own fresh process after each
     * ptxkit run, on a CUBIN of the same kernel written beforehand */
    char cubin[] = "/tmp/ptxkit-startup-floor-XXXXXX";
    bool floor = false;
    if (user) {
        int fd = mkstemp(cubin);
        startup_figures made;
        if (fd < 0 || close(fd) != 0 || measure_in_child(CHILD_FLOOR_CUBIN, common.device, cubin, &made) != 0) {
            fprintf(stderr, "ptxkit bench startup: %s\n", fd < 0 ? "cannot create a temporary file" : made.error);
            if (fd >= 0) unlink(cubin);
            return 1;
        }
        floor = true;
    }
    char title[256];
    snprintf(title, sizeof title, "first kernel of a fresh process: %s, %d processes in turn", what, runs);
    const char *headers[] = {"run", "context_open_ms", "first_kernel_ms", "kernel_call_ms", "kernel_get_ms", "nvrtc_loaded",
                             "module_load"};
    cli_table *t = table_new(title, 7, headers);
    table_types(t, "nnnnnss");
    double warm[1000], floor_warm[1000], ratio[1000];
    int warm_count = 0, warm_nvrtc = 0;
    rc = 0;
    for (int r = 0; r < runs && rc == 0; r++) {
        startup_figures *f = &figures[r];
        if (measure_in_child(user ? CHILD_USER : CHILD_FAMILY, common.device, NULL, f) != 0 ||
            (floor && measure_in_child(CHILD_FLOOR, common.device, cubin, &floors[r]) != 0)) {
            fprintf(stderr, "ptxkit bench startup: run %d: %s\n", r + 1, f->error[0] ? f->error : floors[r].error);
            rc = 1;
            break;
        }
        table_addf(t, "%d\t%.2f\t%.3f\t%.3f\t%.3f\t%s\t%s", r + 1, f->open_ms, f->first_ms, f->first_ms - f->setup_ms,
                   f->get_ms, f->nvrtc_loaded ? "yes" : "no", f->module_load);
        if (r > 0) {
            floor_warm[warm_count] = floors[r].first_ms;
            ratio[warm_count] = floor && floors[r].first_ms > 0 ? f->first_ms / floors[r].first_ms : 0;
            warm[warm_count++] = f->first_ms;
            warm_nvrtc += f->nvrtc_loaded;
        }
    }
    if (floor) unlink(cubin);
    if (rc != 0) {
        table_free(t);
        return rc;
    }
    /* the children measured; the report's metadata names their GPU, asked for
     * now that no measurement is left to disturb */
    report_note_device_of(common.device);
    table_print(t, common.format, stdout);
    table_free(t);
    if (floor) {
        snprintf(title, sizeof title,
                 "the driver-API floor, each run a fresh process after ptxkit's: cuMemAlloc + cuModuleLoad(CUBIN "
                 "file) + cuModuleGetFunction + cuLaunchKernel + cuCtxSynchronize");
        const char *floor_headers[] = {"run", "context_open_ms", "first_kernel_ms", "kernel_call_ms", "kernel_get_ms",
                                       "ptxkit_over_floor"};
        cli_table *ft = table_new(title, 6, floor_headers);
        table_id(ft, "bench_startup_floor");
        table_types(ft, "nnnnnn");
        for (int r = 0; r < runs; r++)
            table_addf(ft, "%d\t%.2f\t%.3f\t%.3f\t%.3f\t%.2f", r + 1, floors[r].open_ms, floors[r].first_ms,
                       floors[r].first_ms - floors[r].setup_ms, floors[r].get_ms,
                       floors[r].first_ms > 0 ? figures[r].first_ms / floors[r].first_ms : 0.0);
        table_print(ft, common.format, stdout);
        table_free(ft);
    }
    if (warm_count) { /* the figure that counts, with its spread */
        double floor_median = floor ? sorted_median(floor_warm, warm_count) : 0;
        double ratio_median = floor ? sorted_median(ratio, warm_count) : 0;
        double median = sorted_median(warm, warm_count);
        snprintf(title, sizeof title,
                 "runs 2..%d (the disk cache filled by then): context open to first kernel finished, ms", runs);
        const char *summary_headers[] = {"runs", "samples", "median_ms", "min_ms", "max_ms", "nvrtc_loaded_runs",
                                         "floor_median_ms", "over_floor_median", "over_floor_min", "over_floor_max"};
        cli_table *w = table_new(title, floor ? 10 : 6, summary_headers);
        table_id(w, "bench_startup_summary");
        table_types(w, floor ? "snnnnnnnnn" : "snnnnn");
        if (floor)
            table_addf(w, "2..%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%.3f\t%.2f\t%.2f\t%.2f", runs, warm_count, median, warm[0],
                       warm[warm_count - 1], warm_nvrtc, floor_median, ratio_median, ratio[0], ratio[warm_count - 1]);
        else
            table_addf(w, "2..%d\t%d\t%.3f\t%.3f\t%.3f\t%d", runs, warm_count, median, warm[0], warm[warm_count - 1],
                       warm_nvrtc);
        table_print(w, common.format, stdout);
        table_free(w);
    }
    return 0;
}
