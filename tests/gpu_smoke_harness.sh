#!/bin/sh
# The benchmarks on the harness (tools/ptxkit/bench_harness.c), each run
# small on a GPU: every report must match its schema (as gpu_reports
# checks), and, given the ptxkit of an older build, have the same tables,
# columns, keys and row names as that build's (the measured cells aside).
# usage: tests/gpu_smoke_harness.sh [PTXKIT [OLD_PTXKIT]]
#   PTXKIT defaults to build/tools/ptxkit; run from the source tree.
set -u
new=${1:-build/tools/ptxkit}
old=${2:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
i=0
while IFS= read -r line; do
    case $line in '' | '#'*) continue ;; esac
    i=$((i + 1))
    # shellcheck disable=SC2086
    "$new" $line --json "$dir/new$i.json" --csv "$dir/new$i.csv" >"$dir/out$i.txt" 2>"$dir/err$i.txt"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL ptxkit $line: exit status $rc"; sed 's/^/    /' "$dir/err$i.txt"; failed=1; continue
    fi
    python3 tests/validate_report.py schemas "$dir/new$i.json" --csv "$dir/new$i.csv"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then echo "FAIL ptxkit $line: the report does not match its schema"; failed=1; continue; fi
    if [ -n "$old" ]; then
        # shellcheck disable=SC2086
        "$old" $line --json "$dir/old$i.json" >/dev/null 2>&1
        if ! python3 - "$dir/old$i.json" "$dir/new$i.json" <<'EOF'
import json, sys
old, new = (json.load(open(p)) for p in sys.argv[1:3])
def shape(doc):
    out = []
    for t in doc["tables"]:
        measured = set(t["keys"]) | {c["name"] for c in t["columns"] if c["type"] == "string"}
        names = [r.get(k) for r in t["rows"] for k in t["keys"]] if t["keys"] else len(t["rows"])
        out.append((t["id"], t["keys"], t["metric"], t["columns"], names,
                    [{k: v for k, v in r.items() if k in measured and k != "check"} for r in t["rows"]]))
    return out
if shape(old) != shape(new):
    for a, b in zip(shape(old), shape(new)):
        if a != b: print("  old:", a[:4], "\n  new:", b[:4])
    sys.exit(1)
EOF
        then echo "FAIL ptxkit $line: tables differ from $old"; failed=1; continue; fi
    fi
    echo "ok   ptxkit $line"
done <<'CASES'
bench copy --size 1M --size 3M --reps 3
bench reduce --log2 12,20 --ops sum --types int32,float32 --reps 3 --warmup 1
bench reduce --log2 12 --ops max --types float64 --no-ceiling --reps 3 --warmup 1
bench scan --log2 12,20 --types int32 --reps 3 --warmup 1
bench scan --log2 12,16 --types int32 --kinds inclusive --in-place --offset 3 --reps 3 --warmup 1
bench gemm --shapes 256,100x30x70 --reps 3 --warmup 1 --compare --check
bench constant --mib 8 --taps 5 --reps 2
bench stencil --width 512 --height 64 --occupancy 1 --variants 0,2 --reps 2
bench async --size 1M --tiles 2048 --blocks 128 --stages 2 --reps 2
bench l2 --reps 2
bench access --mib 64 --reps 2 --op default --op cg
bench aos --points 1M --reps 2 --op default
bench transpose --shape 256x320 --reps 3
CASES
exit $failed
