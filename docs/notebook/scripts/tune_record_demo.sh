#!/usr/bin/env bash
# The tuning record on a GPU (docs/notebook/2026-11-benchmarks.md section 10): one tuning problem
# run uninterrupted, then run again in a fresh database and killed with
# SIGKILL (nothing is flushed at exit) once its record holds half as many
# configurations as the uninterrupted run's, then resumed; the
# configurations each run timed come from the record files. Then --export
# of the resumed database and --import into an empty one, compared through
# --show. Each run has its own kernel cache, so each compiles cold.
# Usage: docs/notebook/scripts/tune_record_demo.sh   (from the build's parent directory)
set -u
P=${P:-./build/tools/ptxkit}
ARGS=${ARGS:-"reduce --variant sum.float32 --sizes 2^24 --max-variants 120 --budget 300"}
W=$(mktemp -d /tmp/ptxkit-record-demo-XXXXXX)
now() { date +%s.%N; }
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
timed_in() { grep -c '"outcome":"ok"' "$1" 2>/dev/null || echo 0; }

echo "== ptxkit tune $ARGS"
echo "-- uninterrupted (fresh database, record and kernel cache)"
export PTXKIT_CACHE_DIR=$W/cache-u PTXKIT_TUNE_DB=$W/u/tune.db
s=$(now); $P tune $ARGS; e=$(now)
echo "uninterrupted: $(lines $W/u/tune.record.jsonl) configurations recorded ($(timed_in $W/u/tune.record.jsonl) timed ok) in $(awk "BEGIN{printf \"%.1f\", $e - $s}") s"

half=$(( $(lines $W/u/tune.record.jsonl) / 2 ))
echo "-- run 1, killed once its record holds $half configurations (fresh database, record and kernel cache)"
export PTXKIT_CACHE_DIR=$W/cache-r PTXKIT_TUNE_DB=$W/r/tune.db
s=$(now)
$P tune $ARGS & pid=$!
while kill -0 $pid 2>/dev/null && [ "$(lines $W/r/tune.record.jsonl)" -lt "$half" ]; do sleep 0.02; done
kill -KILL $pid 2>/dev/null; wait $pid; rc=$?; e=$(now)
n1=$(lines $W/r/tune.record.jsonl)
echo "run 1: exit $rc after $(awk "BEGIN{printf \"%.1f\", $e - $s}") s; $n1 configurations in the record; database: $([ -f $W/r/tune.db ] && echo written || echo none)"
echo "-- run 2, the same command: resumes from the record"
s=$(now); $P tune $ARGS; e=$(now)
n2=$(lines $W/r/tune.record.jsonl)
echo "run 2: $((n2 - n1)) configurations appended (timed or failed now), $n1 taken from the record, in $(awk "BEGIN{printf \"%.1f\", $e - $s}") s"
echo "-- the record, as tune --show prints it (last lines)"
$P tune --show --record | tail -4

echo "-- export, then import into an empty database"
export PTXKIT_TUNE_DB=$W/r/tune.db
$P tune --export $W/exported.json && echo "exported: $(grep -c '"family"' $W/exported.json) entries"
$P tune --show --csv >$W/show-before.csv
PTXKIT_TUNE_DB=$W/empty/tune.db $P tune --import $W/exported.json
PTXKIT_TUNE_DB=$W/empty/tune.db $P tune --show --csv >$W/show-after.csv
PTXKIT_TUNE_DB=$W/empty/tune.db $P tune --export $W/reexported.json
if diff $W/show-before.csv $W/show-after.csv; then echo "tune --show of the imported database: identical ($(($(lines $W/show-after.csv) - 1)) entries)"; fi
cat $W/show-after.csv
# the entries of both exports, without the metadata (date, command) and the database path
sed -n '/"entries"/,$p' $W/exported.json >$W/e1
sed -n '/"entries"/,$p' $W/reexported.json >$W/e2
cmp -s $W/e1 $W/e2 && echo "the two exports' entries: byte for byte the same"
rm -rf "$W"
