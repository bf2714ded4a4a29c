#!/usr/bin/env bash
# One batch on a GPU machine: build, the GPU suites, compute-sanitizer over
# the user-kernel suites, and the benchmarks whose figures docs/notebook/2026-11-benchmarks.md
# quotes (each in several fresh processes, default settings). Logs go to
# $OUT (default ./gpu-out); a summary is printed last.
# Usage: docs/notebook/scripts/gpu_session.sh [STAGES]   STAGES from "build tests sanitize bench" (default all),
# plus "families" (copy, reduce against CUB, ladder, tuned transpose: three
# processes each), "gemm" (bench gemm, float32 and float64, against cuBLAS, two
# processes) and "exchange"
# (tune --export / --import round trip); CUB=disabled builds without the
# CUB comparison helpers.
set -u
STAGES=${1:-"build tests sanitize bench"}
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT"
# Build dependencies a bare GPU machine lacks, unpacked beside the tree (see .devdeps/setup.sh).
[ -f .devdeps/setup.sh ] && source .devdeps/setup.sh
P=./build/tools/ptxkit
t0=$(date +%s)
stamp() { echo "== $* ($(( $(date +%s) - t0 )) s)"; }
has() { case " $STAGES " in *" $1 "*) return 0;; esac; return 1; }

if has build; then
    stamp build
    rm -rf build
    { meson setup build -Dcub_compare=${CUB:-enabled} && ninja -C build; } >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
    # CUB comparison programs built elsewhere with nvcc (they need no GPU to
    # build: tools/devdeps.sh cub) go where `bench --compare` looks
    if [ "${CUB:-enabled}" = disabled ] && ls .cubbin/ptxkit-cub-* >/dev/null 2>&1; then
        mkdir -p build/bench && cp .cubbin/ptxkit-cub-* build/bench/
        cp .cubbin/libptxkit-cub-* build/bench/ 2>/dev/null || true
    fi
fi
if has tests; then
    stamp tests
    meson test -C build --suite gpu --print-errorlogs --num-processes 2 ${TESTS:-} >"$OUT/tests.log" 2>&1
    grep -E "^ *[0-9]+/[0-9]+ " "$OUT/tests.log" | sort -u -k2 >"$OUT/tests-summary.txt"
fi
if has sanitize; then
    stamp sanitize
    export PTXKIT_CACHE_DIR=$PWD/build/tests/kernel-cache
    for t in ${SANITIZE:-test_gpu_user test_gpu_tunable}; do
        for tool in memcheck racecheck; do
            echo "-- $tool $t"
            timeout ${SANITIZE_TIMEOUT:-600} compute-sanitizer --tool $tool --target-processes application-only ./build/tests/$t 2>&1 | tail -3
        done
    done >"$OUT/sanitize.log" 2>&1
    for e in ${SANITIZE_EXAMPLES-template_kernel user_ptx saxpy_tuned}; do
        echo "-- memcheck $e"
        compute-sanitizer --tool memcheck ./build/examples/$e 2>&1 | tail -2
    done >>"$OUT/sanitize.log" 2>&1
    unset PTXKIT_CACHE_DIR
fi
if has bench; then
    stamp bench
    {
        $P cache --purge
        stamp "startup, copy (run 1 compiles, runs 2.. are fresh processes on a warm cache)"
        $P bench startup --runs 5
        stamp "startup, user kernel"
        $P bench startup --user --runs 5
        for i in 1 2 3; do stamp "launch run $i"; $P bench launch; done
        for i in 1 2; do stamp "user-tune run $i"; $P bench user-tune; done
    } >"$OUT/bench-user.txt" 2>&1
    {
        for i in 1 2; do stamp "reduce run $i"; timeout 150 $P bench reduce --compare --csv; done
    } >"$OUT/bench-reduce.txt" 2>&1
    {
        for i in 1 2; do stamp "copy run $i"; $P bench copy --size 1073741824; done
        for v in float32 float64; do stamp "tune transpose $v"; timeout 90 $P tune transpose --variant $v --budget 20; done
        for i in 1 2; do stamp "transpose run $i"; $P bench transpose --shape 4097x4095 --shape 8192x8192; done
    } >"$OUT/bench-families.txt" 2>&1
fi
if has families; then
    # the built-in families' figures docs/notebook/2026-11-benchmarks.md quotes, in three fresh
    # processes each, no environment: copy on every operator, reduce against
    # CUB, the reduction ladder, tuned transpose (tuned as documented first)
    stamp families
    {
        for i in 1 2 3; do stamp "copy run $i"; timeout 60 $P bench copy --size 1073741824; done
        for i in 1 2 3; do stamp "reduce run $i"; timeout 120 $P bench reduce --compare --csv; done
        for i in 1 2 3; do stamp "ladder run $i"; timeout 60 $P ladder; done
        for v in float32.unaligned float64.unaligned; do stamp "tune transpose $v"; timeout 60 $P tune transpose --variant $v --budget 20; done
        for i in 1 2 3; do stamp "transpose run $i"; timeout 60 $P bench transpose --shape 4097x4095 --shape 8192x8192; done
        stamp "families done"
    } >"$OUT/bench-families.txt" 2>&1
fi
if has gemm; then
    stamp gemm
    for i in 1 2; do stamp "bench gemm run $i"; timeout 90 $P bench gemm --shapes 2048,4096,8192 --compare; done \
        >"$OUT/bench-gemm.txt" 2>&1
fi
if has exchange; then
    stamp exchange
    W=$(mktemp -d)
    {
        export PTXKIT_TUNE_DB=$W/a/tune.db
        $P tune copy --sizes 2^20,2^24,2^28 --budget 10
        $P tune transpose --variant float32.unaligned --sizes 2^20,2^24 --budget 10
        $P tune --export $W/a.json && $P tune --show --csv >$W/before.csv
        PTXKIT_TUNE_DB=$W/b/tune.db $P tune --import $W/a.json
        PTXKIT_TUNE_DB=$W/b/tune.db $P tune --show --csv >$W/after.csv
        cat $W/before.csv
        diff $W/before.csv $W/after.csv && echo "imported database: tune --show identical, $(($(wc -l <$W/after.csv) - 1)) entries"
        unset PTXKIT_TUNE_DB
    } >"$OUT/exchange.txt" 2>&1
    rm -rf "$W"
fi
stamp done
cat "$OUT/tests-summary.txt" 2>/dev/null
grep -E "^-- |ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize.log" 2>/dev/null
grep -E "median|NVRTC loaded|over cuLaunchKernel|within 3%|budgeted search pick" "$OUT/bench-user.txt" 2>/dev/null
grep -E "identical" "$OUT/exchange.txt" 2>/dev/null
