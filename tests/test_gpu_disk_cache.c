/* The disk cache's plain files on a GPU, across fresh processes: a user
 * program's kernels (a template instance by name expression, whose lowered
 * name is stored beside the image, and an extern "C" kernel) are compiled
 * and stored by a first process; a second finds them without loading
 * NVRTC; then each file of the template's entry is damaged in turn (its
 * names, its image, the image swapped with the other entry's) and a fresh
 * process must still get the right kernel, rebuilding the entry. Every
 * process checks the kernels' results against a CPU reference at an
 * awkward size with a poisoned guard. The processes are this binary run
 * again (--child), so each one's CUDA and NVRTC state is its own. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptxkit.h"

static const char source[] =
    "template <unsigned K> __global__ void scale(unsigned *p, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) p[i] = p[i] * K + i;\n"
    "}\n"
    "extern \"C\" __global__ void plain_add(unsigned *p, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) p[i] = p[i] + 7u * i + 1u;\n"
    "}\n";

#define N 1000003u /* a prime: the last block is partial */
#define POISON 0xdeadbeefu

static bool nvrtc_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, "libnvrtc") != NULL;
    if (f) fclose(f);
    return found;
}

/* Launches the kernel of entry on N words (and one poisoned guard word)
 * and compares with the CPU; 0 when right. */
static int run_kernel(ptxkit_context *ctx, ptxkit_program *p, const char *entry, bool is_scale) {
    ptxkit_kernel *k = NULL;
    if (ptxkit_program_kernel_get(ctx, p, entry, NULL, 0, &k) != PTXKIT_SUCCESS) {
        fprintf(stderr, "child: %s: %s\n", entry, ptxkit_last_error());
        return 1;
    }
    unsigned *host = malloc((N + 1) * sizeof *host), *back = malloc((N + 1) * sizeof *back);
    for (unsigned i = 0; i < N; i++) host[i] = i * 2654435761u;
    host[N] = POISON;
    ptxkit_dptr d = 0;
    unsigned n = N;
    void *args[] = {&d, &n};
    int rc = 1;
    if (ptxkit_memory_alloc(ctx, (N + 1) * sizeof *host, &d) == PTXKIT_SUCCESS &&
        ptxkit_memory_write(ctx, d, host, (N + 1) * sizeof *host) == PTXKIT_SUCCESS &&
        ptxkit_kernel_launch(k, (ptxkit_dim3){(N + 255) / 256, 1, 1}, (ptxkit_dim3){256, 1, 1}, 0, NULL, args) == PTXKIT_SUCCESS &&
        ptxkit_memory_read(ctx, back, d, (N + 1) * sizeof *back) == PTXKIT_SUCCESS) {
        rc = 0;
        for (unsigned i = 0; i < N && rc == 0; i++) {
            unsigned want = is_scale ? host[i] * 3u + i : host[i] + 7u * i + 1u;
            if (back[i] != want) {
                fprintf(stderr, "child: %s: word %u is %u, expected %u\n", entry, i, back[i], want);
                rc = 1;
            }
        }
        if (back[N] != POISON) {
            fprintf(stderr, "child: %s wrote past the end\n", entry);
            rc = 1;
        }
    } else {
        fprintf(stderr, "child: %s: %s\n", entry, ptxkit_last_error());
    }
    ptxkit_memory_free(ctx, d);
    free(host);
    free(back);
    return rc;
}

/* warm: NVRTC must not be loaded to get there. 77: no GPU. */
static int child(bool warm) {
    ptxkit_context *ctx = NULL;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) {
        printf("skipped: no GPU: %s\n", ptxkit_last_error());
        return 77;
    }
    ptxkit_program *p = NULL;
    if (ptxkit_program_create("disk_cache_test.cu", source, NULL, 0, &p) != PTXKIT_SUCCESS) return 1;
    int rc = run_kernel(ctx, p, "scale<3u>", true) | run_kernel(ctx, p, "plain_add", false);
    if (rc == 0 && warm && nvrtc_mapped()) {
        fprintf(stderr, "child: NVRTC was loaded although both kernels were on disk\n");
        rc = 2;
    }
    ptxkit_program_destroy(p);
    ptxkit_context_destroy(ctx);
    return rc;
}

static int run_child(const char *mode) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execl("/proc/self/exe", "test_gpu_disk_cache", "--child", mode, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

static char cache_dir[] = "/tmp/ptxkit-gpu-disk-cache-XXXXXX";

/* The path (without suffix) of the entry whose names file holds a mangled
 * name (the template's), and of the other one with a CUBIN. */
static bool find_entries(char *scale, char *plain, size_t size) {
    scale[0] = plain[0] = 0;
    DIR *top = opendir(cache_dir);
    struct dirent *d;
    while (top && (d = readdir(top)) != NULL) {
        if (strlen(d->d_name) != 2) continue;
        char shard[600];
        snprintf(shard, sizeof shard, "%s/%s", cache_dir, d->d_name);
        DIR *sd = opendir(shard);
        struct dirent *e;
        while (sd && (e = readdir(sd)) != NULL) {
            size_t len = strlen(e->d_name);
            if (len != 32 + 6 || strcmp(e->d_name + 32, ".names") != 0) continue;
            char path[800], text[256] = "";
            snprintf(path, sizeof path, "%s/%s", shard, e->d_name);
            FILE *f = fopen(path, "r");
            if (f) {
                if (!fgets(text, sizeof text, f)) text[0] = 0;
                fclose(f);
            }
            char *target = strncmp(text, "_Z", 2) == 0 ? scale : strcmp(text, "plain_add\n") == 0 ? plain : NULL;
            if (target) snprintf(target, size, "%s/%.32s", shard, e->d_name);
        }
        if (sd) closedir(sd);
    }
    if (top) closedir(top);
    return scale[0] && plain[0];
}

static bool file_has(const char *stem, const char *suffix, const char *text) {
    char path[900], buf[4096];
    snprintf(path, sizeof path, "%s.%s", stem, suffix);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, text) != NULL;
}

static void put(const char *stem, const char *suffix, const void *data, size_t size) {
    char path[900];
    snprintf(path, sizeof path, "%s.%s", stem, suffix);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
    }
}

static int fail(const char *why) {
    fprintf(stderr, "FAIL: %s\n", why);
    return 1;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--child") == 0) return child(strcmp(argv[2], "warm") == 0);
    if (!mkdtemp(cache_dir)) return 1;
    setenv("PTXKIT_CACHE_DIR", cache_dir, 1);
    unsetenv("PTXKIT_CACHE");
    int rc = run_child("cold");
    if (rc == 77) goto done;
    if (rc != 0) {
        rc = fail("the first process (compiles and stores)");
        goto done;
    }
    char scale[700], plain[700];
    if (!find_entries(scale, plain, sizeof scale)) {
        rc = fail("no cache entries with the lowered names _Z... and plain_add beside their images");
        goto done;
    }
    if (!file_has(scale, "meta", "kind cubin\n") || !file_has(scale, "meta", "origin program\n") ||
        !file_has(scale, "cubin", "\x7f" "ELF")) {
        rc = fail("the template's entry is not a CUBIN of origin program");
        goto done;
    }
    if ((rc = run_child("warm")) != 0) {
        rc = fail("the second process (from disk, without NVRTC)");
        goto done;
    }
    /* each damage: a miss that a fresh process rebuilds, the right kernel */
    put(scale, "names", "_Z5wrongv\n", 10);
    if (run_child("any") != 0 || !file_has(scale, "names", "_Z5scale")) {
        rc = fail("a wrong lowered name in the names file");
        goto done;
    }
    char cubin[900];
    snprintf(cubin, sizeof cubin, "%s.cubin", scale);
    FILE *f = fopen(cubin, "r+b");
    if (f) {
        fseek(f, 200, SEEK_SET);
        fputc(0x5a, f);
        fclose(f);
    }
    if (run_child("any") != 0) {
        rc = fail("a damaged image");
        goto done;
    }
    char other[900];
    snprintf(other, sizeof other, "%s.cubin", plain);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", other, cubin);
    if (system(cmd) != 0 || run_child("any") != 0) {
        rc = fail("the other entry's image in the template's place");
        goto done;
    }
    if (run_child("warm") != 0) {
        rc = fail("the rebuilt entries, read without NVRTC");
        goto done;
    }
    printf("disk cache: stored, read without NVRTC, and every damage rebuilt\n");
    rc = 0;
done:
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cache_dir);
    return rc;
}
