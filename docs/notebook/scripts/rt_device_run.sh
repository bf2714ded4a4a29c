#!/usr/bin/env bash
# One batch on a GPU machine for the reduce-overhead and transpose-tuning
# work: the benchmarks first (they are what the batch is for), then the GPU
# suites of reduce, tune and memlab. Runs prebuilt binaries from BIN (default
# devbin/: ptxkit, ptxkit-cub-reduce, test_gpu_{reduce,tune,memlab} and,
# where the machine lacks it, libcmocka.so.0), built elsewhere with
#   meson setup B -Dcub_compare=enabled && ninja -C B
# Logs go to OUT (default ./rt-out): reduce.txt, transpose.txt, tests.txt,
# summary.txt. Usage: docs/notebook/scripts/rt_device_run.sh [STAGES], STAGES a subset of
# "reduce transpose tests" (default: all three, in that order).
set -u
BIN=${BIN:-devbin}
OUT=${OUT:-./rt-out}
STAGES=${1:-"reduce transpose tests"}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PTXKIT_CUB_BENCH="$PWD/$BIN/ptxkit-cub-reduce"
unset PTXKIT_TUNE PTXKIT_TUNE_DB
P="$BIN/ptxkit"
export PTXKIT_CACHE_DIR=/tmp/rt-kc          # kernels and tune.db of the benchmarks
rm -rf "$PTXKIT_CACHE_DIR" /tmp/rt-kc-tests
t0=$(date +%s)
stamp() { echo "== $* ($(( $(date +%s) - t0 )) s)"; }

{ nvidia-smi -L; "$P" info; } >"$OUT/summary.txt" 2>&1

case " $STAGES " in *" reduce "*)
    # The documented command with default settings, three fresh processes.
    for i in 1 2 3; do
        stamp "reduce run $i: ptxkit bench reduce --compare --csv"
        timeout 120 "$P" bench reduce --compare --csv
    done >"$OUT/reduce.txt" 2>&1
;; esac

case " $STAGES " in *" transpose "*)
    {
        for v in float32.unaligned float64.unaligned float32 float64; do
            stamp "ptxkit tune transpose --variant $v"
            timeout 90 "$P" tune transpose --variant "$v" --budget 20
        done
        "$P" tune --show
        for i in 1 2 3; do
            stamp "transpose run $i (tuned database): ptxkit bench transpose --shape 4097x4095 --shape 4096x4096 --shape 8192x8192 --csv"
            timeout 60 "$P" bench transpose --shape 4097x4095 --shape 4096x4096 --shape 8192x8192 --csv
        done
        for v in float32.unaligned float64.unaligned; do
            stamp "ptxkit bench blocks transpose --variant $v --n 2^24 (4097 x 4095)"
            timeout 60 "$P" bench blocks transpose --variant "$v" --n 2^24
        done
        stamp "PTXKIT_TUNE=off ptxkit bench transpose --shape 4097x4095 --csv (built-in defaults)"
        PTXKIT_TUNE=off timeout 60 "$P" bench transpose --shape 4097x4095 --csv
    } >"$OUT/transpose.txt" 2>&1
;; esac

case " $STAGES " in *" tests "*)
    for t in reduce tune memlab; do
        stamp "test_gpu_$t"
        PTXKIT_CACHE_DIR=/tmp/rt-kc-tests timeout 200 "$BIN/test_gpu_$t"
        echo "exit status $?"
    done >"$OUT/tests.txt" 2>&1
;; esac
stamp "done" >>"$OUT/summary.txt"

# The short version, last (the reply keeps the end of the output).
python3 - "$OUT" <<'PY' >>"$OUT/summary.txt" 2>&1
import csv, io, os, re, sys
out = sys.argv[1]
def runs(path, marker):
    if not os.path.exists(path): return []
    text = open(path).read()
    parts = re.split(r"^== .*$", text, flags=re.M)
    heads = re.findall(r"^== (.*)$", text, flags=re.M)
    return [(h, p) for h, p in zip(heads, parts[1:]) if marker in h]
def rows(block):
    lines = [l for l in block.splitlines() if "," in l and not l.startswith("ptxkit")]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))
r = runs(os.path.join(out, "reduce.txt"), "reduce run")
if r:
    worst = {}
    for _, block in r:
        for row in rows(block):
            if not row.get("speedup") or row["speedup"] == "-": continue
            k = (row["op"], row["type"], int(row["n"]))
            worst.setdefault(k, []).append((float(row["time_us"]), float(row["cub_us"]), float(row["speedup"])))
    print("reduce vs CUB over %d runs: op type log2n ptxkit_us(min-max) cub_us(min-max) speedup(min-max)" % len(r))
    for k in sorted(worst):
        v = worst[k]
        print("%s %s 2^%d %.2f-%.2f %.2f-%.2f %.3f-%.3f%s" % (k[0], k[1], k[2].bit_length() - 1,
              min(x[0] for x in v), max(x[0] for x in v), min(x[1] for x in v), max(x[1] for x in v),
              min(x[2] for x in v), max(x[2] for x in v), "  <-- LOSES" if min(x[2] for x in v) < 1 else ""))
t = runs(os.path.join(out, "transpose.txt"), "transpose run") + runs(os.path.join(out, "transpose.txt"), "PTXKIT_TUNE=off")
for h, block in t:
    print(h)
    for row in rows(block):
        if row.get("kernel") in ("ptxkit_transpose", "padded 64 v4 b256", "padded 64 v16 b1024", "padded 128 v4 b1024", "cuMemcpyDtoD"):
            print("  %sx%s %s %s tile %s block %s vec %s: %s GB/s %s%%" % (row["rows"], row["cols"], row["dtype"],
                  row["kernel"], row["tile"], row["block"], row["vector_bytes"], row["GBps"], row["pct_dtod"]))
PY
grep -E "^== |exit status|PASSED|FAILED|ERROR" "$OUT/tests.txt" 2>/dev/null >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
