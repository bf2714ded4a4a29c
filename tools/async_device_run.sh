#!/usr/bin/env bash
# One batch on a GPU machine for issue 12 (async copies, barriers, L2
# residency): build without the CUB comparison, the GPU suites it touches,
# the benchmarks BENCHMARKS.md quotes, then compute-sanitizer (memcheck,
# racecheck, synccheck) over test_gpu_async in its small mode. Every stage
# runs under a time limit that keeps the whole batch inside DEADLINE
# seconds (default 190). Logs go to OUT (default ./async-out).
# Usage: tools/async_device_run.sh [STAGES]  (default: "build tests bench sanitize")
set -u
STAGES=${1:-"build tests bench sanitize"}
OUT=${OUT:-./async-out}
DEADLINE=${DEADLINE:-190}
mkdir -p "$OUT"
[ -f .devdeps/setup.sh ] && source .devdeps/setup.sh
P=./build/tools/ptxkit
t0=$(date +%s)
stamp() { echo "== $* ($(( $(date +%s) - t0 )) s)"; }
has() { case " $STAGES " in *" $1 "*) return 0;; esac; return 1; }
# seconds a stage may take: its own cap, or what is left before DEADLINE
budget() { local left=$(( DEADLINE - ($(date +%s) - t0) )); [ "$left" -lt "$1" ] && echo $(( left > 1 ? left : 1 )) || echo "$1"; }

if has build; then
    stamp build
    { meson setup build -Dcub_compare=disabled -Dtests=enabled && ninja -C build; } >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
fi
export PTXKIT_CACHE_DIR=$PWD/build/tests/kernel-cache
if has tests; then
    stamp tests
    timeout "$(budget ${TESTS_S:-45})" meson test -C build --suite gpu --print-errorlogs --num-processes 3 \
        ${TESTS:-gpu_async gpu_l2 gpu_user} >"$OUT/tests.log" 2>&1
    grep -E "^ *[0-9]+/[0-9]+ " "$OUT/tests.log"
fi
if has bench; then
    stamp bench
    {
        nvidia-smi -L; $P info
        stamp "bench async"; timeout "$(budget ${ASYNC_S:-45})" $P bench async --svg "$OUT/async.svg"
        stamp "bench redux"; timeout "$(budget 20)" $P bench redux
        stamp "bench l2"; timeout "$(budget 25)" $P bench l2 --svg "$OUT/l2.svg"
        stamp "bench stencil"; timeout "$(budget 25)" $P bench stencil
        stamp "bench done"
    } >"$OUT/bench.txt" 2>&1
fi
if has sanitize; then
    stamp sanitize
    export PTXKIT_TEST_ASYNC_SMALL=1
    for tool in ${SANITIZERS:-memcheck racecheck synccheck}; do
        echo "-- $tool test_gpu_async (small)"
        timeout "$(budget 30)" compute-sanitizer --tool "$tool" --target-processes application-only \
            ./build/tests/test_gpu_async tests/async_kernels.cu 2>&1 | tail -40
    done >"$OUT/sanitize.log" 2>&1
    grep -E "^-- |ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/sanitize.log"
fi
stamp done
