/* NVRTC compilation of an embedded kernel family. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

bool spec_define_str(kernel_spec *spec, define_scratch *scratch, const char *name, const char *value) {
    if (spec->define_count >= PTXKIT_MAX_DEFINES || scratch->used >= PTXKIT_MAX_DEFINES) return false;
    char *slot = scratch->text[scratch->used];
    int len = snprintf(slot, sizeof scratch->text[0], "%s=%s", name, value);
    if (len < 0 || (size_t)len >= sizeof scratch->text[0]) return false;
    scratch->used++;
    spec->defines[spec->define_count++] = slot;
    return true;
}

bool spec_define_int(kernel_spec *spec, define_scratch *scratch, const char *name, long long value) {
    char text[32];
    snprintf(text, sizeof text, "%lld", value);
    return spec_define_str(spec, scratch, name, text);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Highest architecture NVRTC can emit CUBIN for that is <= arch; 0 if none. */
static int nvrtc_cubin_arch(const nvrtc_library *rtc, int arch, bool *exact) {
    int count = 0, best = 0;
    *exact = false;
    if (rtc->nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0 || count > 256) return arch;
    int archs[256];
    if (rtc->nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS) return arch;
    for (int i = 0; i < count; i++) {
        if (archs[i] == arch) *exact = true;
        if (archs[i] <= arch && archs[i] > best) best = archs[i];
    }
    return best;
}

void compile_output_free(compile_output *out) {
    if (!out) return;
    free(out->image);
    free(out->log);
    memset(out, 0, sizeof *out);
}

ptxkit_status compile_family(ptxkit_context *ctx, const char *family, const char *const *defines, int define_count,
                             int arch, bool want_ptx, const char *const *extra_options, int extra_count,
                             compile_output *out) {
    memset(out, 0, sizeof *out);
    char why[768];
    const nvrtc_library *rtc = nvrtc_get(why, sizeof why);
    if (!rtc) return record_error(ctx, PTXKIT_ERROR_NO_NVRTC, "%s", why);
    if (define_count < 0 || define_count > PTXKIT_MAX_DEFINES || extra_count < 0 || extra_count > 16)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "compile: too many defines or options");
    char source_name[96];
    snprintf(source_name, sizeof source_name, "%s.cu", family ? family : "");
    const embedded_file *src = family ? embedded_find(source_name) : NULL;
    if (!src) return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "compile: no kernel family '%s' (no cu_sources/%s)",
                                  family ? family : "(null)", source_name);

    /* Every embedded .cuh is offered as a header. */
    size_t file_count;
    const embedded_file *files = embedded_all(&file_count);
    const char *header_text[64], *header_names[64];
    int headers = 0;
    for (size_t i = 0; i < file_count && headers < 64; i++)
        if (ends_with(files[i].name, ".cuh")) {
            header_text[headers] = files[i].text;
            header_names[headers++] = files[i].name;
        }

    bool exact = false;
    int target = nvrtc_cubin_arch(rtc, arch, &exact);
    bool cubin = !want_ptx && exact;
    if (!target) return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "compile: NVRTC %d.%d supports no architecture <= sm_%d",
                                     rtc->major, rtc->minor, arch);

    char arch_option[48];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", cubin ? arch : target);
    char define_options[PTXKIT_MAX_DEFINES][80];
    const char *options[48];
    int n = 0;
    options[n++] = arch_option;
    options[n++] = "--std=c++17";
    options[n++] = "-default-device";
    for (int i = 0; i < define_count; i++) {
        if (!defines[i] || strlen(defines[i]) >= sizeof define_options[0] - 3)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "compile: bad define #%d", i);
        snprintf(define_options[i], sizeof define_options[i], "-D%s", defines[i]);
        options[n++] = define_options[i];
    }
    for (int i = 0; i < extra_count; i++) options[n++] = extra_options[i];

    double t0 = now_ms();
    nvrtcProgram prog;
    nvrtcResult r = rtc->nvrtcCreateProgram(&prog, src->text, source_name, headers, header_text, header_names);
    if (r != NVRTC_SUCCESS)
        return record_error(ctx, PTXKIT_ERROR_COMPILE, "nvrtcCreateProgram(%s): %s", source_name, rtc->nvrtcGetErrorString(r));
    r = rtc->nvrtcCompileProgram(prog, n, options);
    size_t log_size = 0;
    if (rtc->nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
        out->log = malloc(log_size);
        if (out->log && rtc->nvrtcGetProgramLog(prog, out->log) != NVRTC_SUCCESS) out->log[0] = 0;
    }
    if (r != NVRTC_SUCCESS) {
        char flat[512] = "";
        for (int i = 0, used = 0; i < define_count && used < (int)sizeof flat - 1; i++)
            used += snprintf(flat + used, sizeof flat - (size_t)used, " -D%s", defines[i]);
        record_error(ctx, PTXKIT_ERROR_COMPILE, "NVRTC failed to compile %s for %s%s: %s\n%s", source_name, arch_option + 21,
                     flat, rtc->nvrtcGetErrorString(r), out->log ? out->log : "");
        rtc->nvrtcDestroyProgram(&prog);
        compile_output_free(out);
        return PTXKIT_ERROR_COMPILE;
    }
    size_t size = 0;
    r = cubin ? rtc->nvrtcGetCUBINSize(prog, &size) : rtc->nvrtcGetPTXSize(prog, &size);
    if (r == NVRTC_SUCCESS && size > 0 && (out->image = malloc(size)) != NULL)
        r = cubin ? rtc->nvrtcGetCUBIN(prog, out->image) : rtc->nvrtcGetPTX(prog, out->image);
    rtc->nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS || !out->image) {
        compile_output_free(out);
        return record_error(ctx, r == NVRTC_SUCCESS ? PTXKIT_ERROR_OUT_OF_MEMORY : PTXKIT_ERROR_COMPILE,
                            "NVRTC: could not read the compiled image of %s", source_name);
    }
    /* PTX from NVRTC counts its terminating NUL; keep size as the text length. */
    out->size = cubin ? size : strlen(out->image);
    out->is_cubin = cubin;
    out->compile_ms = now_ms() - t0;
    return PTXKIT_SUCCESS;
}
