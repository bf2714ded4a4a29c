#!/usr/bin/env bash
# CONTRIBUTING.md says which files a new kernel family touches. This adds a
# trivial family with precompiled PTX ("scale": one folder families/scale/
# with a kernel, a defaults header, its host file with its descriptor; a
# GPU test) to a scratch copy of the tree, touching only paths of that
# list, at most five, and there
#   - builds ptxkit-genptx and generates families/scale/scale.ptx with it, as a
#     contributor would (meson warns that the file is missing until then),
#   - builds the ptxkit command, the family-table test and the new test,
#   - checks that ptxkit compile lists the family, compiles it through NVRTC
#     with its defaults header's block size (the PTX's .maxntid) and takes
#     -D from its descriptor (--strict refuses a block size outside it),
#   - runs the family-table test (its PTX is embedded, its defaults header
#     is a family's) and the new test (which skips without a GPU),
#   - checks that nothing outside the documented list changed in the copy
#     (a path ending in / is a folder: anything under it), and that the
#     change took at most five paths (a folder counts once).
# Exit 77 (skipped) without git, meson, ninja or NVRTC, or outside a git
# checkout. usage: add_family.sh SOURCE_ROOT PTXKIT
set -u
src=$1
ptxkit=$2
name=scale
skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

for tool in git meson ninja tar sha1sum; do
    command -v "$tool" >/dev/null 2>&1 || skip "no $tool"
done
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip "$src is not a git checkout"
"$ptxkit" compile copy --arch sm_90 >/dev/null 2>&1 || skip "ptxkit compile copy fails here (no NVRTC?)"

work=$(mktemp -d /tmp/ptxkit-add-family-XXXXXX) || fail "mktemp"
trap 'rm -rf "$work"' EXIT
tree=$work/tree
build=$work/build
mkdir "$tree"
export PTXKIT_CACHE_DIR=$work/cache

# The documented list, NAME made $name.
documented=$(sed -n '/<!-- family-files/,/<!-- end family-files/p' "$src/CONTRIBUTING.md" |
             grep -E '^[A-Za-z_./]+[[:space:]]' | awk '{print $1}' | sed "s/NAME/$name/g")
[ -n "$documented" ] || fail "CONTRIBUTING.md has no family-files block"

# The tree as git sees it (tracked and untracked files not ignored, as they
# are in the working tree).
(cd "$src" && git ls-files -z --cached --others --exclude-standard) |
    while IFS= read -r -d '' f; do [ -f "$src/$f" ] && printf '%s\0' "$f"; done |
    tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf - || fail "copying the tree"
manifest() { (cd "$tree" && find . -type f -print0 | sort -z | xargs -0 sha1sum); }
manifest >"$work/before"

# ---- the new family, touching only documented files ----
dir=$tree/families/$name
mkdir "$dir"
cat >"$dir/${name}_defaults.h" <<'END'
/* scale's block size when none is injected: scale.cu and scale.c. */
#ifndef PTXKIT_SCALE_DEFAULTS_H
#define PTXKIT_SCALE_DEFAULTS_H
#define SCALE_DEFAULT_BLOCK 128
#endif
END
cat >"$dir/$name.cu" <<'END'
// out[i] = in[i] * factor for i < n. Injected: BLOCK_SIZE, LOAD_OP (ptxkit_load.cuh).
#include <ptxkit/load.cuh>
#include "scale_defaults.h"
#ifndef BLOCK_SIZE
#define BLOCK_SIZE SCALE_DEFAULT_BLOCK
#endif
typedef unsigned long long u64;
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    ptxkit_scale_u32(unsigned *out, const unsigned *in, u64 n, unsigned factor) {
    for (u64 i = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < n; i += (u64)gridDim.x * BLOCK_SIZE)
        out[i] = ptxkit::ld_u32(in + i) * factor;
}
END
cat >"$dir/$name.h" <<'END'
/* scale: the internal call its test makes. */
#ifndef PTXKIT_OPS_SCALE_H
#define PTXKIT_OPS_SCALE_H
#include "ptxkit.h"
#include "runtime/launch.h"
ptxkit_status scale_u32(ptxkit_context *ctx, ptxkit_dptr out, ptxkit_dptr in, size_t n, unsigned factor,
                        const launch_options *options, ptxkit_stream *stream);
#endif
END
cat >"$dir/$name.c" <<'END'
/* scale: out[i] = in[i] * factor (scale.cu), JIT or its PTX. */
#include "family.h"
#include "scale/scale.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/status.h"
#include "scale_defaults.h"

ptxkit_status scale_u32(ptxkit_context *ctx, ptxkit_dptr out, ptxkit_dptr in, size_t n, unsigned factor,
                        const launch_options *options, ptxkit_stream *stream) {
    launch_options opt;
    ptxkit_status st = check_launch_options(ctx, options, &opt);
    if (st != PTXKIT_SUCCESS || n == 0) return st;
    if (!out || !in) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "scale_u32: NULL device pointer");
    kernel_spec spec = {.family = "scale", .entry = "ptxkit_scale_u32"};
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *kernel;
    int block;
    st = family_kernel_get(ctx, &opt, &spec, SCALE_DEFAULT_BLOCK, &kernel, &block);
    if (st == PTXKIT_SUCCESS) {
        size_t blocks = (n + (size_t)block - 1) / (size_t)block;
        unsigned grid = blocks > 65535 ? 65535 : (unsigned)blocks;
        CUdeviceptr d = out, s = in;
        unsigned long long count = n;
        void *args[] = {&d, &s, &count, &factor};
        st = kernel_launch(kernel, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, stream, args);
    }
    context_leave(ctx);
    return st;
}

static const family_define scale_defines[] = {{"BLOCK_SIZE", TUNE_BLOCK}, {"LOAD_OP", TUNE_LOAD}, {NULL, 0}};

const family_desc scale_family = {
    .name = "scale",
    .description = "scale_u32: out[i] = in[i] * factor",
    .entries = "ptxkit_scale_u32",
    .defines = scale_defines,
};
END
cat >"$tree/tests/test_gpu_$name.c" <<'END'
/* scale_u32 against the host's products, on the JIT path and the PTX, with
 * a poisoned tail after the output. */
#include <stdlib.h>
#include <string.h>

#include "scale/scale.h"
#include "test_util.h"

static void scales_exactly_n(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    static const size_t sizes[] = {0, 1, 127, 129, 1000003};
    static const ptxkit_path paths[] = {PTXKIT_PATH_JIT, PTXKIT_PATH_PTX};
    uint64_t rng = test_seed();
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int p = 0; p < 2; p++) {
            size_t n = sizes[s], bytes = (n + 64) * 4;
            unsigned *in = malloc(bytes), *got = malloc(bytes);
            assert_true(in && got);
            test_fill_random(in, bytes, &rng);
            memset(got, 0xCD, bytes);
            ptxkit_dptr d_in, d_out;
            assert_int_equal(ptxkit_memory_alloc(ctx, bytes, &d_in), PTXKIT_SUCCESS);
            assert_int_equal(ptxkit_memory_alloc(ctx, bytes, &d_out), PTXKIT_SUCCESS);
            assert_int_equal(ptxkit_memory_write(ctx, d_in, in, bytes), PTXKIT_SUCCESS);
            assert_int_equal(ptxkit_memory_write(ctx, d_out, got, bytes), PTXKIT_SUCCESS);
            launch_options o = {.path = paths[p], .load_op = PTXKIT_LOAD_CG};
            assert_int_equal(scale_u32(ctx, d_out, d_in, n, 2654435761u, &o, NULL), PTXKIT_SUCCESS);
            assert_int_equal(ptxkit_memory_read(ctx, got, d_out, bytes), PTXKIT_SUCCESS);
            for (size_t i = 0; i < n + 64; i++) assert_int_equal(got[i], i < n ? in[i] * 2654435761u : 0xCDCDCDCDu);
            ptxkit_memory_free(ctx, d_in);
            ptxkit_memory_free(ctx, d_out);
            free(in);
            free(got);
        }
}

int main(void) {
    test_require_gpu();
    const struct CMUnitTest tests[] = {cmocka_unit_test(scales_exactly_n)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_gpu_release();
    return rc;
}
END
# one entry in the families list (with precompiled PTX), one in the GPU tests
awk -v entry="  {'name' : '$name', 'ptx' : true}," '
    /^families = \[/ { in_list = 1 }
    in_list && /^\]/ { print entry; in_list = 0 }
    { print }' "$tree/families/meson.build" >"$work/m" && cat "$work/m" >"$tree/families/meson.build"
awk -v entry="  'gpu_$name': 'test_gpu_$name.c'," '
    /^gpu_tests = \{/ { in_list = 1 }
    in_list && /^\}/ { print entry; in_list = 0 }
    { print }' "$tree/tests/meson.build" >"$work/m" && cat "$work/m" >"$tree/tests/meson.build"

# ---- it builds, its PTX is generated, and it is known ----
meson setup "$build" "$tree" -Dbuildtype=plain -Dcub_compare=disabled -Dtests=enabled >"$work/setup.log" 2>&1 ||
    { cat "$work/setup.log"; fail "meson setup of the copy"; }
grep -q "families/$name/$name.ptx does not exist yet" "$work/setup.log" ||
    fail "meson setup does not say that families/$name/$name.ptx is missing"
ninja -C "$build" -j2 tools/ptxkit-genptx >"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; fail "building genptx"; }
"$build/tools/ptxkit-genptx" "$tree/families" "$name" >"$work/genptx.log" 2>&1 ||
    { cat "$work/genptx.log"; fail "ptxkit-genptx $name"; }
grep -q "ld\.global\.u32" "$dir/$name.ptx" || fail "families/$name/$name.ptx has no operator-free global load"
meson setup --reconfigure "$build" "$tree" >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; fail "meson reconfigure"; }
ninja -C "$build" -j2 tools/ptxkit tests/test_families "tests/test_gpu_$name" >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log"; fail "building the copy"; }
new_ptxkit=$build/tools/ptxkit
# The command links the shared library: the copy's, found through its build
# RUNPATH, not the one meson test puts on LD_LIBRARY_PATH for $ptxkit.
unset LD_LIBRARY_PATH

"$new_ptxkit" compile --help | grep -E "^families:.* $name( |\$)" >/dev/null || fail "ptxkit compile --help does not list $name"
"$new_ptxkit" compile "$name" --arch sm_90 >"$work/out.ptx" 2>"$work/out.err" ||
    { cat "$work/out.err"; fail "ptxkit compile $name"; }
grep -q "^\.visible \.entry ptxkit_${name}_u32(" "$work/out.ptx" || fail "no entry ptxkit_${name}_u32 in the PTX"
grep -q "\.maxntid 128, 1, 1" "$work/out.ptx" || fail "the PTX does not have ${name}_defaults.h's block size 128"
"$new_ptxkit" compile "$name" --arch sm_90 -D BLOCK_SIZE=256 >"$work/out256.ptx" 2>/dev/null &&
    grep -q "\.maxntid 256, 1, 1" "$work/out256.ptx" || fail "-D BLOCK_SIZE=256 does not reach the kernel"
"$new_ptxkit" compile "$name" --arch sm_90 --strict -D BLOCK_SIZE=100 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--strict -D BLOCK_SIZE=100 is not refused from the descriptor's defines"

"$build/tests/test_families" >"$work/families.log" 2>&1 || { cat "$work/families.log"; fail "test_families in the copy"; }
"$build/tests/test_gpu_$name" >"$work/test.log" 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || { cat "$work/test.log"; fail "test_gpu_$name exits $rc"; }

# ---- nothing outside the list changed ----
manifest >"$work/after"
changed=$( (diff "$work/before" "$work/after" | sed -n 's/^[<>] [0-9a-f]*  \.\///p') | sort -u)
[ -n "$changed" ] || fail "adding the family changed nothing"
paths=""
for f in $changed; do
    path=""
    for d in $documented; do
        case $d in
        */) case $f in "$d"*) path=$d ;; esac ;;
        *) [ "$f" = "$d" ] && path=$d ;;
        esac
    done
    [ -n "$path" ] || fail "adding a family touched $f, which CONTRIBUTING.md does not list"
    paths="$paths
$path"
done
count=$(printf '%s\n' "$paths" | sed '/^$/d' | sort -u | wc -l)
[ "$count" -le 5 ] || fail "adding a family touched $count paths: $(echo $paths)"
echo "touched $count paths: $(printf '%s\n' "$paths" | sed '/^$/d' | sort -u | tr '\n' ' ')"
echo "family $name added, its PTX generated, built and compiled through NVRTC (its GPU test: exit $rc)"
