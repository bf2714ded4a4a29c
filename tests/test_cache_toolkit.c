/* The CUDA toolkit reads the kernel cache: a real CUBIN (NVRTC, else nvcc,
 * for sm_90; no GPU needed) stored through the disk cache's write path is a
 * plain file that cuobjdump and nvdisasm list the kernel of. Exit 77 (skip)
 * without a compiler or without either tool; the tools are looked up on
 * PATH, then in /usr/local/cuda/bin (.ci/run puts them there). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/cache_key.h"
#include "runtime/disk_cache.h"

#define KERNEL "ptxkit_toolkit_probe"
static const char source[] = "extern \"C\" __global__ void " KERNEL "(float *p, int n) {\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < n) p[i] = p[i] * 2.0f + 1.0f;\n"
                             "}\n";

static char work[] = "/tmp/ptxkit-cache-toolkit-XXXXXX";

/* An executable named name on PATH or in /usr/local/cuda/bin, into path. */
static bool find_tool(const char *name, char *path, size_t size) {
    const char *env = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s:/usr/local/cuda/bin", env ? env : "");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        if (!*d) continue;
        snprintf(path, size, "%s/%s", d, name);
        if (access(path, X_OK) == 0) return true;
    }
    return false;
}

/* A whole file into a malloc'd buffer. */
static char *slurp(const char *path, size_t *size) {
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf) *size = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

/* The CUBIN of the probe kernel: NVRTC through the library, else nvcc. */
static char *make_cubin(size_t *size, const char **how) {
    if (ptxkit_jit_available()) {
        ptxkit_program *p = NULL;
        ptxkit_compiled out;
        memset(&out, 0, sizeof out);
        if (ptxkit_program_create("toolkit_probe.cu", source, NULL, 0, &p) == PTXKIT_SUCCESS &&
            ptxkit_program_compile(p, KERNEL, NULL, 0, 90, 0, &out) == PTXKIT_SUCCESS && out.is_cubin) {
            char *image = out.image;
            *size = out.size;
            out.image = NULL;
            ptxkit_program_compiled_free(&out);
            ptxkit_program_destroy(p);
            *how = "NVRTC";
            return image;
        }
        fprintf(stderr, "NVRTC did not compile the probe: %s\n", ptxkit_last_error());
        ptxkit_program_compiled_free(&out);
        ptxkit_program_destroy(p);
        return NULL;
    }
    char nvcc[4200], cu[600], cubin[600], cmd[6000];
    if (!find_tool("nvcc", nvcc, sizeof nvcc)) return NULL;
    snprintf(cu, sizeof cu, "%s/probe.cu", work);
    snprintf(cubin, sizeof cubin, "%s/probe.cubin", work);
    FILE *f = fopen(cu, "w");
    if (!f) return NULL;
    fputs(source, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' -cubin -arch=sm_90 -o '%s' '%s'", nvcc, cubin, cu);
    if (system(cmd) != 0) {
        fprintf(stderr, "%s failed\n", cmd);
        return NULL;
    }
    *how = "nvcc";
    return slurp(cubin, size);
}

/* Runs command; whether its output names the kernel. */
static bool output_names_kernel(const char *command) {
    FILE *p = popen(command, "r");
    if (!p) return false;
    char line[4096];
    bool found = false;
    while (fgets(line, sizeof line, p))
        if (strstr(line, KERNEL)) found = true;
    int rc = pclose(p);
    if (rc != 0) fprintf(stderr, "%s: exit status %d\n", command, rc);
    return found && rc == 0;
}

int main(void) {
    if (!mkdtemp(work)) return 1;
    int rc = 0;
    char cmd[9000];
    size_t size = 0;
    const char *how = "";
    char *image = make_cubin(&size, &how);
    if (!image) {
        printf("skipped: neither NVRTC nor nvcc makes a CUBIN here\n");
        rc = 77;
        goto done;
    }
    if (size < 4 || memcmp(image, "\x7f" "ELF", 4) != 0) {
        fprintf(stderr, "the %s CUBIN is not an ELF file\n", how);
        rc = 1;
        goto done;
    }
    char dir[700];
    snprintf(dir, sizeof dir, "%s/cache", work);
    disk_cache *c = disk_cache_open(dir);
    cache_key key;
    for (int i = 0; i < 16; i++) key.bytes[i] = (unsigned char)(0xa5 ^ i * 37);
    if (!c || disk_cache_write_entry(c, &key, image, size, true, DISK_CACHE_PROGRAM, KERNEL) != PTXKIT_SUCCESS) {
        fprintf(stderr, "storing the CUBIN: %s\n", ptxkit_last_error());
        rc = 1;
        disk_cache_close(c);
        goto done;
    }
    char path[4400], names_path[4400];
    bool paths = disk_cache_file_path(c, &key, "cubin", path, sizeof path) &&
                 disk_cache_file_path(c, &key, "names", names_path, sizeof names_path);
    disk_cache_close(c);
    /* the stored file is the image, byte for byte; the names file is plain text */
    size_t stored_size = 0, names_size = 0;
    char *stored = paths ? slurp(path, &stored_size) : NULL;
    char *names = paths ? slurp(names_path, &names_size) : NULL;
    if (!stored || stored_size != size || memcmp(stored, image, size) != 0 || !names ||
        names_size != strlen(KERNEL "\n") || memcmp(names, KERNEL "\n", names_size) != 0) {
        fprintf(stderr, "the cache's files are not the image and its name as they were given\n");
        rc = 1;
    }
    free(stored);
    free(names);
    char tool[4200];
    int tools = 0;
    if (rc == 0 && find_tool("cuobjdump", tool, sizeof tool)) {
        tools++;
        snprintf(cmd, sizeof cmd, "'%s' -elf '%s'", tool, path);
        if (!output_names_kernel(cmd)) {
            fprintf(stderr, "%s does not list %s\n", cmd, KERNEL);
            rc = 1;
        }
        snprintf(cmd, sizeof cmd, "'%s' -sass '%s'", tool, path);
        if (!output_names_kernel(cmd)) {
            fprintf(stderr, "%s does not list %s\n", cmd, KERNEL);
            rc = 1;
        }
    }
    if (rc == 0 && find_tool("nvdisasm", tool, sizeof tool)) {
        tools++;
        snprintf(cmd, sizeof cmd, "'%s' '%s'", tool, path);
        if (!output_names_kernel(cmd)) {
            fprintf(stderr, "%s does not list %s\n", cmd, KERNEL);
            rc = 1;
        }
    }
    if (rc == 0 && tools == 0) {
        printf("skipped: no cuobjdump or nvdisasm on PATH or in /usr/local/cuda/bin (the %s CUBIN was stored)\n", how);
        rc = 77;
    }
    if (rc == 0) printf("cuobjdump/nvdisasm list %s in the cached %s CUBIN (%zu bytes)\n", KERNEL, how, size);
done:
    free(image);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", work);
    return rc;
}
