#!/usr/bin/env bash
# CONTRIBUTING.md says which files a new kernel family touches. This adds a
# trivial family ("fill": one kernel, a defaults header, its src/ops file
# with its descriptor, a GPU test) to a scratch copy of the tree, touching
# only files of that list, builds the ptxkit command and the new test there,
# and checks that
#   - the family is in the table (`ptxkit compile --help` lists it),
#   - NVRTC compiles it with the default of its defaults header (the PTX's
#     .maxntid), and `ptxkit compile` checks -D against its descriptor,
#   - its test builds and passes (skips without a GPU),
#   - nothing outside the documented list changed in the copy.
# Exit 77 (skipped) without git, meson, ninja or NVRTC, or outside a git
# checkout. usage: add_family.sh SOURCE_ROOT PTXKIT
set -u
src=$1
ptxkit=$2
name=fill
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
mkdir "$tree"
export PTXKIT_CACHE_DIR=$work/cache

# The documented list, NAME made $name.
documented=$(sed -n '/<!-- family-files/,/<!-- end family-files/p' "$src/CONTRIBUTING.md" |
             grep -E '^[A-Za-z_./]+/?[A-Za-z_.]*[[:space:]]' | awk '{print $1}' | sed "s/NAME/$name/g")
[ -n "$documented" ] || fail "CONTRIBUTING.md has no family-files block"

# The tree as git sees it (tracked and untracked files not ignored, as they
# are in the working tree).
(cd "$src" && git ls-files -z --cached --others --exclude-standard) |
    while IFS= read -r -d '' f; do [ -f "$src/$f" ] && printf '%s\0' "$f"; done |
    tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf - || fail "copying the tree"
manifest() { (cd "$tree" && find . -type f -print0 | sort -z | xargs -0 sha1sum); }
manifest >"$work/before"

# ---- the new family, touching only documented files ----
cat >"$tree/cu_sources/${name}_defaults.h" <<'EOF'
/* fill's block size when none is injected: fill.cu and src/ops/fill.c. */
#ifndef PTXKIT_FILL_DEFAULTS_H
#define PTXKIT_FILL_DEFAULTS_H
#define FILL_DEFAULT_BLOCK 128
#endif
EOF
cat >"$tree/cu_sources/$name.cu" <<'EOF'
// out[i] = value for i < n. Injected: BLOCK_SIZE.
#include "fill_defaults.h"
#ifndef BLOCK_SIZE
#define BLOCK_SIZE FILL_DEFAULT_BLOCK
#endif
typedef unsigned long long u64;
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) ptxkit_fill_u32(unsigned *out, u64 n, unsigned value) {
    for (u64 i = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < n; i += (u64)gridDim.x * BLOCK_SIZE) out[i] = value;
}
EOF
cat >"$tree/src/ops/$name.h" <<'EOF'
/* fill: the internal call its test makes. */
#ifndef PTXKIT_OPS_FILL_H
#define PTXKIT_OPS_FILL_H
#include "runtime/runtime.h"
ptxkit_status fill_u32(ptxkit_context *ctx, ptxkit_dptr out, size_t n, unsigned value, ptxkit_stream *stream);
#endif
EOF
cat >"$tree/src/ops/$name.c" <<'EOF'
/* fill: out[i] = value (cu_sources/fill.cu), JIT only. */
#include "fill_defaults.h"
#include "ops/family.h"
#include "ops/fill.h"

ptxkit_status fill_u32(ptxkit_context *ctx, ptxkit_dptr out, size_t n, unsigned value, ptxkit_stream *stream) {
    ptxkit_launch_options opt;
    ptxkit_status st = check_launch_options(ctx, NULL, &opt);
    if (st != PTXKIT_SUCCESS || n == 0) return st;
    if (!out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "fill_u32: NULL device pointer");
    opt.path = PTXKIT_PATH_JIT; /* no precompiled PTX */
    kernel_spec spec = {.family = "fill", .entry = "ptxkit_fill_u32"};
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUfunction fn;
    int block;
    st = family_kernel_get(ctx, &opt, &spec, FILL_DEFAULT_BLOCK, &fn, &block);
    if (st == PTXKIT_SUCCESS) {
        size_t blocks = (n + (size_t)block - 1) / (size_t)block;
        unsigned grid = blocks > 65535 ? 65535 : (unsigned)blocks;
        CUdeviceptr d = out;
        unsigned long long count = n;
        void *args[] = {&d, &count, &value};
        st = launch_kernel(ctx, fn, grid, 1, 1, (unsigned)block, 1, 1, 0, stream, args);
    }
    context_leave(ctx);
    return st;
}

static const family_define fill_defines[] = {{"BLOCK_SIZE", TUNE_BLOCK}, {NULL, 0}};

const family_desc fill_family = {
    .name = "fill",
    .description = "fill_u32: out[i] = value",
    .entries = "ptxkit_fill_u32",
    .defines = fill_defines,
};
EOF
cat >"$tree/tests/test_gpu_$name.c" <<'EOF'
/* fill_u32 against the value it was given, around a poisoned tail. */
#include <stdlib.h>
#include <string.h>

#include "ops/fill.h"
#include "test_util.h"

static void fills_exactly_n(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    static const size_t sizes[] = {0, 1, 127, 129, 1000003};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s], bytes = (n + 64) * 4;
        unsigned *host = malloc(bytes);
        assert_non_null(host);
        memset(host, 0xCD, bytes);
        ptxkit_dptr d;
        assert_int_equal(ptxkit_malloc(ctx, bytes, &d), PTXKIT_SUCCESS);
        assert_int_equal(ptxkit_memcpy_htod(ctx, d, host, bytes), PTXKIT_SUCCESS);
        assert_int_equal(fill_u32(ctx, d, n, 0x1234567u + (unsigned)s, NULL), PTXKIT_SUCCESS);
        assert_int_equal(ptxkit_memcpy_dtoh(ctx, host, d, bytes), PTXKIT_SUCCESS);
        for (size_t i = 0; i < n + 64; i++) assert_int_equal(host[i], i < n ? 0x1234567u + (unsigned)s : 0xCDCDCDCDu);
        ptxkit_free(ctx, d);
        free(host);
    }
}

int main(void) {
    test_require_gpu();
    const struct CMUnitTest tests[] = {cmocka_unit_test(fills_exactly_n)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_gpu_release();
    return rc;
}
EOF
# one entry in the families list, one in the GPU tests
awk -v entry="  {'name' : '$name'}," '
    /^families = \[/ { in_list = 1 }
    in_list && /^\]/ { print entry; in_list = 0 }
    { print }' "$tree/cu_sources/meson.build" >"$work/m" && cat "$work/m" >"$tree/cu_sources/meson.build"
awk -v entry="  'gpu_$name': 'test_gpu_$name.c'," '
    /^gpu_tests = \{/ { in_list = 1 }
    in_list && /^\}/ { print entry; in_list = 0 }
    { print }' "$tree/tests/meson.build" >"$work/m" && cat "$work/m" >"$tree/tests/meson.build"

# ---- nothing outside the list changed ----
manifest >"$work/after"
changed=$( (diff "$work/before" "$work/after" | sed -n 's/^[<>] [0-9a-f]*  \.\///p') | sort -u)
[ -n "$changed" ] || fail "adding the family changed nothing"
for f in $changed; do
    printf '%s\n' "$documented" | grep -qxF "$f" || fail "adding a family touched $f, which CONTRIBUTING.md does not list"
done
echo "touched: $(echo $changed)"

# ---- it builds and is known ----
build=$work/build
meson setup "$build" "$tree" -Dbuildtype=plain -Dcub_compare=disabled -Dtests=enabled >"$work/setup.log" 2>&1 ||
    { cat "$work/setup.log"; fail "meson setup of the copy"; }
ninja -C "$build" -j2 tools/ptxkit "tests/test_gpu_$name" >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log"; fail "building the copy"; }
new_ptxkit=$build/tools/ptxkit

"$new_ptxkit" compile --help | grep -E "^families:.* $name( |\$)" >/dev/null || fail "ptxkit compile --help does not list $name"
"$new_ptxkit" compile "$name" --arch sm_90 >"$work/fill.ptx" 2>"$work/fill.err" ||
    { cat "$work/fill.err"; fail "ptxkit compile $name"; }
grep -q "^\.visible \.entry ptxkit_fill_u32(" "$work/fill.ptx" || fail "no entry ptxkit_fill_u32 in the PTX"
grep -q "\.maxntid 128, 1, 1" "$work/fill.ptx" || fail "the PTX does not have fill_defaults.h's block size 128"
"$new_ptxkit" compile "$name" --arch sm_90 -D BLOCK_SIZE=256 >"$work/fill256.ptx" 2>/dev/null &&
    grep -q "\.maxntid 256, 1, 1" "$work/fill256.ptx" || fail "-D BLOCK_SIZE=256 does not reach the kernel"
"$new_ptxkit" compile "$name" --arch sm_90 --strict -D BLOCK_SIZE=100 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--strict -D BLOCK_SIZE=100 is not refused from the descriptor's defines"

"$build/tests/test_gpu_$name" >"$work/test.log" 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || { cat "$work/test.log"; fail "test_gpu_$name exits $rc"; }
echo "family $name added, built and compiled through NVRTC (its test: exit $rc)"
