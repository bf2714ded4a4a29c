#!/usr/bin/env bash
# One batch on a GPU machine for issue 12 (async copies, barriers, L2
# residency): build without the CUB comparison, the GPU suites it touches,
# the benchmarks docs/notebook/2026-11-benchmarks.md quotes, then compute-sanitizer (memcheck,
# racecheck, synccheck) over test_gpu_async in its small mode. Every stage
# runs under a time limit that keeps the whole batch inside DEADLINE
# seconds (default 190). Logs go to OUT (default ./async-out).
# Stages: build, tests, bench (bench async at 256 MiB, redux, l2, stencil),
# sanitize (the three tools over the whole small suite), syncmatrix
# (synccheck over each test alone, the barrier phases one fill and one wait
# spelling at a time, first reports in full; SC_ONLY=REGEX keeps the
# entries whose name matches), l2bench (bench async on an
# L2-resident 16 MiB array, bench l2, bench stencil), ncu (Nsight Compute
# on the stencil at full occupancy: sync against cp.async 2 and 4 stages),
# bench3 (each benchmark section 11 quotes, in RUNS=3 fresh processes).
# Usage: docs/notebook/scripts/async_device_run.sh [STAGES]  (default: "build tests bench sanitize")
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
if has syncmatrix; then
    stamp syncmatrix
    export PTXKIT_TEST_ASYNC_SMALL=1
    sc() { # name, then env assignments and the cmocka filter
        local name=$1 filter=$2; shift 2
        [[ -n "${SC_ONLY:-}" && ! "$name" =~ $SC_ONLY ]] && return 0
        echo "-- synccheck $name"
        env "$@" timeout "$(budget 20)" compute-sanitizer --tool synccheck --print-limit 2 \
            ./build/tests/test_gpu_async tests/async_kernels.cu "$filter" 2>&1 | grep -vE "^\[ (RUN|  OK) " | head -${SC_LINES:-24}
    }
    {
        sc copy test_copy_widths
        sc pipelines test_pipelines
        sc "phases fill 0 helper wait" test_barrier_phases PTXKIT_TEST_ASYNC_FILL=0 PTXKIT_TEST_ASYNC_WAIT=helper
        sc "phases fill 0 test_wait" test_barrier_phases PTXKIT_TEST_ASYNC_FILL=0 PTXKIT_TEST_ASYNC_WAIT=test
        sc "phases fill 1 helper wait" test_barrier_phases PTXKIT_TEST_ASYNC_FILL=1 PTXKIT_TEST_ASYNC_WAIT=helper
        sc "phases fill 2 helper wait" test_barrier_phases PTXKIT_TEST_ASYNC_FILL=2 PTXKIT_TEST_ASYNC_WAIT=helper
        sc "phases fill 3 helper wait" test_barrier_phases PTXKIT_TEST_ASYNC_FILL=3 PTXKIT_TEST_ASYNC_WAIT=helper
        sc "phases fill 4 helper wait" test_barrier_phases PTXKIT_TEST_ASYNC_FILL=4 PTXKIT_TEST_ASYNC_WAIT=helper
        sc split_arrive test_split_arrive
        sc bulk test_bulk_copies
    } >"$OUT/syncmatrix.log" 2>&1
    grep -E "^-- |ERROR SUMMARY|PASSED|FAILED" "$OUT/syncmatrix.log"
    unset PTXKIT_TEST_ASYNC_SMALL
fi
if has l2bench; then
    stamp l2bench
    {
        stamp "bench async, 16 MiB (L2-resident)"; timeout "$(budget 30)" $P bench async --size 16M
        stamp "bench l2"; timeout "$(budget 25)" $P bench l2 --svg "$OUT/l2.svg"
        stamp "bench stencil"; timeout "$(budget 30)" $P bench stencil
        stamp "l2bench done"
    } >"$OUT/bench2.txt" 2>&1
fi
if has bench3; then
    stamp bench3
    # each figure docs/notebook/2026-11-benchmarks.md section 11 quotes, in RUNS fresh processes, default settings, no environment
    (
        unset PTXKIT_CACHE_DIR
        for i in $(seq ${RUNS:-3}); do
            stamp "set $i: bench async"; timeout "$(budget 60)" $P bench async
            stamp "set $i: bench async --size 16M"; timeout "$(budget 40)" $P bench async --size 16M
            stamp "set $i: bench redux"; timeout "$(budget 20)" $P bench redux
            stamp "set $i: bench l2"; timeout "$(budget 30)" $P bench l2
            stamp "set $i: bench stencil"; timeout "$(budget 30)" $P bench stencil
        done
        stamp "bench3 done"
    ) >"$OUT/bench3.txt" 2>&1
    grep -E "^== " "$OUT/bench3.txt"
fi
if has ncu; then
    stamp ncu
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
    timeout "$(budget 40)" "$NCU" --clock-control none -k regex:stencil --section SpeedOfLight --section Occupancy \
        --section WarpStateStats $P bench stencil --occupancy 0 --variants 0,2,4 --reps 1 >"$OUT/ncu.txt" 2>&1
    grep -E "stencil|DRAM Throughput|Memory Throughput|Achieved Occupancy|Duration|Stall|Warp Cycles Per Issued" "$OUT/ncu.txt" | head -60
fi
stamp done
