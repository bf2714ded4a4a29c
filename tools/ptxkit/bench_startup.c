/* ptxkit bench startup: what a process pays for its first kernel. From a
 * freshly opened context, the time until the first kernel has finished
 * (NVRTC compile on a cold disk cache, a CUBIN load on a warm one), and
 * whether NVRTC was loaded into the process to get there; then what a
 * registry hit costs.
 *
 * The default measures a built-in family (ptxkit_copy on the JIT path);
 * --user measures an application's kernel (ptxkit_program_create,
 * ptxkit_kernel_get, ptxkit_launch, synchronize). Each must be the first
 * kernel of its process, so they are separate runs; --runs K measures K
 * fresh processes one after another (forked before this process touches
 * CUDA), the first of which may fill the disk cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "report.h"
#include "ptxkit_private.h"

static const char user_source[] =
    "extern \"C\" __global__ void startup_fill(unsigned *out, unsigned v) { out[threadIdx.x] = v + threadIdx.x; }\n";

typedef struct startup_figures {
    double open_ms;        /* ptxkit_context_open */
    double setup_ms;       /* allocations (and, for --user, creating the program) */
    double first_ms;       /* from after the context was opened to the first kernel finished */
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
    ptxkit_launch_options o = {.path = PTXKIT_PATH_JIT, .load_op = PTXKIT_LOAD_CG};
    ptxkit_status st = ptxkit_malloc(ctx, bytes, &a);
    if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, bytes, &b);
    f->setup_ms = cli_now_ms() - t0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_copy(ctx, b, a, bytes, &o, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    f->first_ms = cli_now_ms() - t0;
    f->nvrtc_loaded = library_mapped("libnvrtc");
    /* a registry hit: the lookup every later launch of the family pays */
    enum { HITS = 100000 };
    double t3 = cli_now_ms();
    const char *jit_log = "";
    if (st == PTXKIT_SUCCESS) st = ptxkit_private_registry_hits(ctx, HITS, &jit_log);
    f->hit_us = (cli_now_ms() - t3) * 1e3 / HITS;
    first_line(f->module_load, sizeof f->module_load, jit_log);
    ptxkit_free(ctx, a);
    ptxkit_free(ctx, b);
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
    ptxkit_status st = ptxkit_malloc(ctx, 32 * sizeof(unsigned), &out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_create("startup.cu", user_source, NULL, 0, &program);
    f->setup_ms = cli_now_ms() - t0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_get(ctx, program, "startup_fill", NULL, 0, &kernel);
    void *args[] = {&out, &value};
    if (st == PTXKIT_SUCCESS) st = ptxkit_launch(kernel, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    f->first_ms = cli_now_ms() - t0;
    f->nvrtc_loaded = library_mapped("libnvrtc");
    first_line(f->module_load, sizeof f->module_load, ptxkit_kernel_jit_log_get(kernel));
    /* the kernel ran: check what it wrote (outside the timing) */
    unsigned got[32];
    if (st == PTXKIT_SUCCESS) st = ptxkit_memcpy_dtoh(ctx, got, out, sizeof got);
    for (unsigned i = 0; st == PTXKIT_SUCCESS && i < 32; i++)
        if (got[i] != value + i) {
            snprintf(f->error, sizeof f->error, "the startup kernel wrote %u at %u", got[i], i);
            st = PTXKIT_ERROR_LAUNCH;
        }
    enum { HITS = 100000 };
    double t3 = cli_now_ms();
    ptxkit_kernel *again = NULL;
    for (int i = 0; i < HITS && st == PTXKIT_SUCCESS; i++) st = ptxkit_kernel_get(ctx, program, "startup_fill", NULL, 0, &again);
    f->hit_us = (cli_now_ms() - t3) * 1e3 / HITS;
    ptxkit_program_destroy(program);
    ptxkit_free(ctx, out);
    return st;
}

static int measure(bool user, int device, startup_figures *f) {
    memset(f, 0, sizeof *f);
    double t = cli_now_ms();
    ptxkit_context *ctx = NULL;
    ptxkit_status st = ptxkit_context_open(device, &ctx);
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
    ptxkit_context_close(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}

/* One measurement in a child forked from this process, which has not
 * touched CUDA: for the driver and NVRTC the child is a fresh process. */
static int measure_in_child(bool user, int device, startup_figures *f) {
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
        int code = measure(user, device, &mine);
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
        ptxkit_cache_dir(dir, sizeof dir);
        ptxkit_cache_stats(&files, &cached);
        printf("first kernel: %s\n", what);
        printf("context open (primary context retain): %.2f ms\n", f.open_ms);
        printf("%s: %.3f ms\n", user ? "an allocation and ptxkit_program_create" : "two 1 MiB allocations", f.setup_ms);
        printf("first %s, from call to kernel finished (kernel lookup + launch + sync): %.3f ms\n",
               user ? "ptxkit_kernel_get" : "ptxkit_copy", f.first_ms - f.setup_ms);
        printf("context open to first kernel finished, excluding context creation: %.3f ms\n", f.first_ms);
        printf("NVRTC loaded in the process: %s\n", f.nvrtc_loaded ? "yes" : "no");
        printf("module load: %s\n", f.module_load);
        printf("registry hit (%s of a loaded kernel): %.3f us\n", user ? "ptxkit_kernel_get" : "kernel_get", f.hit_us);
        printf("kernel cache: %s, %zu entries\n", dir[0] ? dir : "disabled", files);
        return 0;
    }
    static startup_figures figures[1000];
    char title[256];
    snprintf(title, sizeof title, "first kernel of a fresh process: %s, %d processes in turn", what, runs);
    const char *headers[] = {"run", "context_open_ms", "first_kernel_ms", "kernel_call_ms", "nvrtc_loaded",
                             "module_load"};
    cli_table *t = table_new(title, 6, headers);
    table_types(t, "nnnnss");
    double warm[1000];
    int warm_count = 0, warm_nvrtc = 0;
    for (int r = 0; r < runs; r++) {
        startup_figures *f = &figures[r];
        if (measure_in_child(user, common.device, f) != 0) {
            fprintf(stderr, "ptxkit bench startup: run %d: %s\n", r + 1, f->error);
            table_free(t);
            return 1;
        }
        table_addf(t, "%d\t%.2f\t%.3f\t%.3f\t%s\t%s", r + 1, f->open_ms, f->first_ms, f->first_ms - f->setup_ms,
                   f->nvrtc_loaded ? "yes" : "no", f->module_load);
        if (r > 0) {
            warm[warm_count++] = f->first_ms;
            warm_nvrtc += f->nvrtc_loaded;
        }
    }
    /* the children measured; the report's metadata names their GPU, asked for
     * now that no measurement is left to disturb */
    report_note_device_of(common.device);
    table_print(t, common.format, stdout);
    table_free(t);
    if (warm_count) { /* the figure that counts, with its spread */
        qsort(warm, (size_t)warm_count, sizeof *warm, compare_doubles);
        double median = warm_count % 2 ? warm[warm_count / 2] : (warm[warm_count / 2 - 1] + warm[warm_count / 2]) / 2;
        snprintf(title, sizeof title,
                 "runs 2..%d (the disk cache filled by then): context open to first kernel finished, ms", runs);
        const char *summary_headers[] = {"runs", "samples", "median_ms", "min_ms", "max_ms", "nvrtc_loaded_runs"};
        cli_table *w = table_new(title, 6, summary_headers);
        table_id(w, "bench_startup_summary");
        table_types(w, "snnnnn");
        table_addf(w, "2..%d\t%d\t%.3f\t%.3f\t%.3f\t%d", runs, warm_count, median, warm[0], warm[warm_count - 1],
                   warm_nvrtc);
        table_print(w, common.format, stdout);
        table_free(w);
    }
    return 0;
}
