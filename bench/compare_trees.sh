#!/usr/bin/env bash
# Builds two ptxkit trees on a GPU machine and runs the same benchmarks on
# both in alternating fresh processes (default settings, default cache
# directory, no environment), so a change is measured against its base in
# one run: BASE (default .base, e.g. `git archive <rev> | tar -x -C .base`)
# and the working tree. Logs go to $OUT (default ./compare-out), one file per
# tree and benchmark.
# Usage: bench/compare_trees.sh [STAGES] with STAGES from "build tests
# sanitize launch host copy reduce scan transpose gemm" (default all).
# ROUNDS (default 3) fresh processes per benchmark and tree.
set -u
STAGES=${1:-"build tests sanitize launch host copy reduce scan transpose gemm"}
BASE=${BASE:-.base}
OUT=${OUT:-./compare-out}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
[ -f .devdeps/setup.sh ] && source .devdeps/setup.sh
has() { case " $STAGES " in *" $1 "*) return 0;; esac; return 1; }
t0=$(date +%s)
stamp() { echo "== $* ($(( $(date +%s) - t0 )) s)"; }
declare -A TREE=([base]="$BASE" [new]=".")

build_tree() { # name dir
    (cd "$2" && rm -rf build && meson setup build -Dtests=enabled -Dcub_compare=disabled >/dev/null && ninja -C build >/dev/null) \
        >"$OUT/build-$1.log" 2>&1 || { tail -30 "$OUT/build-$1.log"; return 1; }
    if ls .cubbin/libptxkit-cub-* >/dev/null 2>&1; then
        mkdir -p "$2/build/bench" && cp .cubbin/ptxkit-cub-* .cubbin/libptxkit-cub-* "$2/build/bench/" 2>/dev/null
    fi
}

if has build; then
    stamp build
    for t in ${BUILD:-base new}; do build_tree $t "${TREE[$t]}" || exit 1; done
fi
if has tests; then
    stamp tests
    meson test -C build --suite gpu --print-errorlogs --num-processes 4 ${TESTS:-} >"$OUT/tests.log" 2>&1
    grep -E "^ *[0-9]+/[0-9]+ " "$OUT/tests.log" | sort -u -k2 >"$OUT/tests-summary.txt"
    cat "$OUT/tests-summary.txt"
fi
if has sanitize; then
    stamp sanitize
    # the suites' small modes keep the sanitizers' slowdown within the limit
    export PTXKIT_TEST_SCAN_MAX_LOG2=${SCAN_MAX_LOG2:-20} PTXKIT_TEST_GEMM_SMALL=1 PTXKIT_TEST_ASYNC_SMALL=1
    for t in ${SANITIZE:-test_gpu_graph test_gpu_runtime test_gpu_copy test_gpu_user test_gpu_scan test_gpu_gemm}; do
        [ -x build/tests/$t ] || continue
        for tool in ${TOOLS:-memcheck racecheck}; do
            echo "-- $tool $t"
            # API errors are the bad-input tests' own (a missing entry point,
            # a fault planted on purpose): memory errors and hazards are what count
            timeout ${SANITIZE_TIMEOUT:-240} compute-sanitizer --tool $tool --report-api-errors no \
                --target-processes application-only ./build/tests/$t 2>&1 | grep -vE "^\[ +(RUN|OK) +\]" | tail -12
        done
    done >"$OUT/sanitize.log" 2>&1
    unset PTXKIT_TEST_SCAN_MAX_LOG2 PTXKIT_TEST_GEMM_SMALL PTXKIT_TEST_ASYNC_SMALL
fi
# each benchmark: ROUNDS fresh processes per tree, base and new alternating
run_both() { # name command...
    local name=$1; shift
    for i in $(seq "$ROUNDS"); do
        for t in base new; do
            stamp "$name $t run $i" >>"$OUT/$name-$t.txt"
            (cd "${TREE[$t]}" && timeout 300 "$@") >>"$OUT/$name-$t.txt" 2>&1
        done
    done
}
P=build/tools/ptxkit
if has launch; then
    stamp launch
    run_both launch $P bench launch
    run_both startup $P bench startup --runs 5
    run_both startup-user $P bench startup --user --runs 5
fi
if has host; then # both libraries in one process, taking turns (bench/host_cost.c)
    stamp host
    cc -O2 -Iinclude bench/host_cost.c -ldl -o build/host_cost || exit 1
    for i in $(seq "$ROUNDS"); do
        stamp "host run $i" >>"$OUT/host.txt"
        timeout 300 build/host_cost "$PWD/$BASE/build/libptxkit.so" "$PWD/build/libptxkit.so" >>"$OUT/host.txt" 2>&1
    done
fi
has copy && { stamp copy; run_both copy $P bench copy --size 1073741824; }
# REDUCE_ARGS / SCAN_ARGS / GEMM_ARGS narrow a run to fit a time limit
has reduce && { stamp reduce; run_both reduce $P bench reduce --compare --csv ${REDUCE_ARGS:-}; }
has scan && { stamp scan; run_both scan $P bench scan --compare --csv ${SCAN_ARGS:-}; }
has transpose && { stamp transpose; run_both transpose $P bench transpose --shape 4097x4095 --shape 8192x8192 --csv; }
has gemm && { stamp gemm; run_both gemm $P bench gemm --compare --check ${GEMM_ARGS:-}; }
stamp done
