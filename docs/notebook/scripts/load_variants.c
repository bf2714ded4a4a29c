// fresh-process costs of loading a cubin: file vs data vs data+options, with/without attributes
#include <cuda.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static void *read_file(const char *p, size_t *n) {
    int fd = open(p, O_RDONLY | O_CLOEXEC); struct stat st; fstat(fd, &st);
    char *b = malloc(st.st_size + 1); read(fd, b, st.st_size); close(fd); b[st.st_size] = 0; *n = st.st_size; return b;
}
static int child(int v, const char *path, double out[3]) {
    CUdevice d; CUcontext c; CUdeviceptr p;
    cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
    cuMemAlloc(&p, 128);
    double t0 = now_us();
    CUmodule m; CUfunction f; CUresult r;
    if (v == 0) r = cuModuleLoad(&m, path);
    else {
        size_t n; void *img = read_file(path, &n);
        if (v == 1 || v == 3) r = cuModuleLoadData(&m, img);
        else {
            char info[4096] = "", err[8192] = ""; float wall = 0;
            CUjit_option o[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
            void *val[] = {info, (void *)(size_t)sizeof info, err, (void *)(size_t)sizeof err, NULL};
            r = cuModuleLoadDataEx(&m, img, 5, o, val); (void)wall;
        }
        free(img);
    }
    if (r) return 1;
    cuModuleGetFunction(&f, m, "startup_fill");
    double t1 = now_us();
    if (v >= 3) { int a, b; cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f); cuFuncGetAttribute(&b, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f); }
    double t2 = now_us();
    unsigned val = 7; void *args[] = {&p, &val};
    cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, 0); cuCtxSynchronize();
    double t3 = now_us();
    out[0] = t1 - t0; out[1] = t2 - t1; out[2] = t3 - t2;
    return 0;
}
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
    const char *names[] = {"cuModuleLoad(file)", "read+cuModuleLoadData", "read+LoadDataEx(5 opts)", "read+LoadData+2 attrs", "read+LoadDataEx+2 attrs"};
    enum { V = 5, N = 21 };
    static double res[V][N][3];
    for (int i = 0; i < N; i++)
        for (int v = 0; v < V; v++) {
            int fds[2]; pipe(fds);
            pid_t pid = fork();
            if (!pid) { double o[3] = {0}; int rc = child(v, argv[1], o); write(fds[1], o, sizeof o); _exit(rc); }
            close(fds[1]); read(fds[0], res[v][i], sizeof res[v][i]); close(fds[0]); waitpid(pid, 0, 0);
        }
    for (int v = 0; v < V; v++) {
        double tot[N], a[N], b[N], c[N];
        for (int i = 0; i < N; i++) { a[i] = res[v][i][0]; b[i] = res[v][i][1]; c[i] = res[v][i][2]; tot[i] = a[i] + b[i] + c[i]; }
        qsort(a, N, 8, cmp); qsort(b, N, 8, cmp); qsort(c, N, 8, cmp); qsort(tot, N, 8, cmp);
        printf("%-26s load+get %6.1f  attrs %5.1f  launch+sync %5.1f  total median %6.1f (q1 %6.1f q3 %6.1f) us\n", names[v], a[N/2], b[N/2], c[N/2], tot[N/2], tot[N/4], tot[3*N/4]);
    }
    return 0;
}
