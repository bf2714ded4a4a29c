/* A fake libcuda.so.1 (build: gcc -shared -fPIC startup_fakecuda.c -o libcuda.so.1) whose calls cost nothing: ptxkit's own host path, timed or traced (strace -f) on a machine without a GPU (startup_e2e.c). */
#include <string.h>
#include <stdint.h>
#include <stddef.h>
typedef int CUresult;
static int ok(void) { return 0; }
static int cuInit(unsigned f) { (void)f; return 0; }
static int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
static int cuDeviceGetCount(int *c) { *c = 1; return 0; }
static int cuDeviceGet(int *d, int o) { *d = o; return 0; }
static int cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = (void *)0x1000; return 0; }
static int cuDeviceGetName(char *n, int len, int d) { (void)d; strncpy(n, "FAKE H200", (size_t)len); return 0; }
static int cuDeviceTotalMem(size_t *b, int d) { (void)d; *b = (size_t)140 << 30; return 0; }
static int cuDeviceGetAttribute(int *v, int a, int d) {
    (void)d;
    switch (a) {
    case 75: *v = 9; break;  /* CC major */
    case 76: *v = 0; break;  /* CC minor */
    case 16: *v = 132; break;
    case 10: *v = 32; break;
    default: *v = 65536; break;
    }
    if (a == 1 || a == 2 || a == 3) *v = 1024; /* block dims / max threads */
    return 0;
}
static void *stack[16]; static int depth;
static int cuCtxPushCurrent(void *c) { stack[depth++ & 15] = c; return 0; }
static int cuCtxPopCurrent(void **c) { if (depth) depth--; if (c) *c = stack[depth & 15]; return 0; }
static int cuCtxGetCurrent(void **c) { *c = depth ? stack[(depth - 1) & 15] : NULL; return 0; }
static int cuCtxSetCurrent(void *c) { if (!depth) depth = 1; stack[(depth - 1) & 15] = c; return 0; }
static int cuMemAlloc(uintptr_t *p, size_t b) { (void)b; *p = 0x100000; return 0; }
static int cuModuleLoadDataEx(void **m, const void *i, unsigned n, int *o, void **v) { (void)i; (void)o; if (n >= 5) v[4] = 0; *m = (void *)0x2000; return 0; }
static int cuModuleLoadData(void **m, const void *i) { (void)i; *m = (void *)0x2000; return 0; }
static int cuModuleLoad(void **m, const char *f) { (void)f; *m = (void *)0x2000; return 0; }
static int cuModuleGetFunction(void **f, void *m, const char *n) { (void)m; (void)n; *f = (void *)0x3000; return 0; }
static int cuFuncGetAttribute(int *v, int a, void *f) { (void)f; *v = a == 0 ? 1024 : 49152; return 0; }
static int cuGetErrorName(int r, const char **s) { (void)r; *s = "FAKE_ERROR"; return 0; }
static int cuGetErrorString(int r, const char **s) { (void)r; *s = "fake error"; return 0; }
static int cuMemcpyDtoH(void *d, uintptr_t s, size_t b) { (void)s; for (size_t i = 0; i < b / 4; i++) ((unsigned *)d)[i] = 1000 + (unsigned)i; return 0; }
#define E(n) {#n, (void *)n},
static const struct { const char *name; void *fn; } table[] = {
    E(cuInit) E(cuDriverGetVersion) E(cuDeviceGetCount) E(cuDeviceGet) E(cuDevicePrimaryCtxRetain) E(cuDeviceGetName)
    E(cuDeviceTotalMem) E(cuDeviceGetAttribute) E(cuCtxPushCurrent) E(cuCtxPopCurrent) E(cuCtxGetCurrent) E(cuCtxSetCurrent)
    E(cuMemAlloc) E(cuModuleLoadDataEx) E(cuModuleLoadData) E(cuModuleLoad) E(cuModuleGetFunction) E(cuFuncGetAttribute)
    E(cuGetErrorName) E(cuGetErrorString) E(cuMemcpyDtoH)
};
int cuGetProcAddress_v2(const char *name, void **pfn, int version, unsigned long long flags, int *status) {
    (void)version; (void)flags;
    *pfn = (void *)ok;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) *pfn = table[i].fn;
    if (status) *status = 0;
    return 0;
}
int cuGetProcAddress(const char *name, void **pfn, int version, unsigned long long flags) { return cuGetProcAddress_v2(name, pfn, version, flags, NULL); }
