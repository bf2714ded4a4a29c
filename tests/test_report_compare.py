#!/usr/bin/env python3
"""`ptxkit report compare` on synthetic `bench reduce` reports, no GPU:
two runs of one build (every time within its spread) pass (exit 0); a
planted 10% regression of one row is flagged (exit 1, that row 'slower');
a faster row is no failure; --threshold above the regression lets it pass;
usage and input errors exit 2. The reports match their JSON Schema (checked
when python3-jsonschema is installed).

usage: test_report_compare.py PTXKIT SCHEMA_DIR
"""
import copy
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    jsonschema = None

COLUMNS = [("op", "string"), ("type", "string"), ("n", "number"), ("time_us", "number"), ("gbps", "number"),
           ("read_gbps", "number"), ("pct_read", "number"), ("samples", "number"), ("min_us", "number"),
           ("max_us", "number"), ("config_source", "string")]


def report(times, spread=0.03):
    """A bench reduce report whose row i takes times[i] us, min and max +-spread."""
    rows = []
    sizes = [4096, 1 << 20, (1 << 24) + 3]
    i = 0
    for t in ("int32", "float32"):
        for n in sizes:
            us = times[i]
            i += 1
            rows.append({"op": "sum", "type": t, "n": n, "time_us": us, "gbps": n * 4 / us / 1e3, "read_gbps": 3000.0,
                         "pct_read": 50.0, "samples": 20, "min_us": us * (1 - spread), "max_us": us * (1 + spread),
                         "config_source": "default"})
    return {
        "schema": "ptxkit-report/2",
        "kind": "bench reduce",
        "metadata": {"command": "bench reduce --json r.json", "library": "0.2.1", "build_type": "release",
                     "date": "2026-11-28T12:00:00Z", "nvrtc": "13.0", "driver": 13000, "tuning_mode": "cached",
                     "device": {"ordinal": 0, "name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132,
                                "datasheet_gbs": 4800.0},
                     "ceilings": [{"name": "read", "bytes": 268435456, "gbs": 4000.0}]},
        "tables": [{"id": "bench_reduce", "title": "ptxkit_reduce", "keys": ["op", "type", "n"], "metric": "time_us",
                    "columns": [{"name": n, "type": t} for n, t in COLUMNS], "rows": rows}],
    }


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    exe, schema_dir = argv
    failures = []
    work = tempfile.mkdtemp(prefix="ptxkit-compare-")

    def write(name, doc):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            json.dump(doc, f) if not isinstance(doc, str) else f.write(doc)
        return path

    def compare(*args):
        p = subprocess.run([exe, "report", "compare"] + list(args), capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def expect(what, got, want, out=""):
        if got != want:
            failures.append("%s: exit %s, expected %s\n%s" % (what, got, want, out))

    rng = random.Random(7)
    base = [10.0, 120.0, 1900.0, 11.0, 130.0, 2100.0]
    a = report(base)
    # a second run of the same build: every time moves by less than its spread
    b = report([t * (1 + rng.uniform(-0.02, 0.02)) for t in base])
    slow = copy.deepcopy(b)
    row = slow["tables"][0]["rows"][4]
    for k in ("time_us", "min_us", "max_us"):
        row[k] = base[4] * 1.10 * (row[k] / row["time_us"]) if k != "time_us" else base[4] * 1.10
    fast = report([t * 0.8 for t in base])

    if jsonschema:
        with open(os.path.join(schema_dir, "bench-reduce.schema.json")) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        for name, doc in (("a", a), ("b", b), ("slow", slow)):
            errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
            if errors:
                failures.append("synthetic report %s does not match the schema: %s" % (name, errors[0].message))
    else:
        print("python3-jsonschema is not installed: the synthetic reports are not validated")

    pa, pb, pslow, pfast = write("a.json", a), write("b.json", b), write("slow.json", slow), write("fast.json", fast)
    rc, out, err = compare(pa, pb)
    expect("two runs of one build", rc, 0, out + err)
    if "6 rows compared: 0 slower" not in out:
        failures.append("two runs: summary line missing:\n" + out)
    rc, out, err = compare(pa, pslow)
    expect("a planted 10% regression", rc, 1, out + err)
    slower = [l for l in out.splitlines() if "slower" in l and "rows compared" not in l]
    if len(slower) != 1 or "type=float32" not in slower[0] or "n=1048576" not in slower[0]:
        failures.append("the regression is not the one slower row:\n" + out)
    rc, out, err = compare(pa, pslow, "--threshold", "15")
    expect("--threshold 15 over a 10% regression", rc, 0, out + err)
    rc, out, err = compare(pa, pfast)
    expect("faster", rc, 0, out + err)
    if out.count("faster") < 6:
        failures.append("faster rows not marked:\n" + out)
    # the comparison as a report of its own
    pj = os.path.join(work, "cmp.json")
    rc, out, err = compare(pa, pslow, "--json", pj)
    expect("--json FILE", rc, 1, out + err)
    with open(pj) as f:
        doc = json.load(f)
    if doc.get("kind") != "report compare" or [r["verdict"] for r in doc["tables"][0]["rows"]].count("slower") != 1:
        failures.append("the compare report:\n" + json.dumps(doc)[:2000])
    if jsonschema:
        with open(os.path.join(schema_dir, "report-compare.schema.json")) as f:
            errors = list(jsonschema.Draft202012Validator(json.load(f)).iter_errors(doc))
        if errors:
            failures.append("the compare report does not match its schema: " + errors[0].message)
    # a row only in one report is said, not a failure
    fewer = copy.deepcopy(b)
    del fewer["tables"][0]["rows"][0]
    rc, out, err = compare(pa, write("fewer.json", fewer))
    expect("a row missing", rc, 0, out + err)
    if "only in A" not in out:
        failures.append("the missing row is not named:\n" + out)
    # usage and input errors: 2
    other = copy.deepcopy(b)
    other["kind"] = "bench scan"
    nothing = copy.deepcopy(b)
    for r in nothing["tables"][0]["rows"]:
        r["n"] += 1
    bad = [((pa,), "one file"), ((pa, pb, pb), "three files"), ((pa, os.path.join(work, "missing.json")), "missing"),
           ((pa, write("text.json", "not json")), "not JSON"), ((pa, write("other.json", {"schema": "x"})), "no report"),
           ((pa, write("scan.json", other)), "different kinds"), ((pa, write("nothing.json", nothing)), "no row in common"),
           ((pa, pb, "--threshold", "-1"), "negative threshold"), ((pa, pb, "--threshold", "x"), "threshold text"),
           ((pa, pb, "--bogus"), "unknown option")]
    for args, what in bad:
        rc, out, err = compare(*args)
        expect(what, rc, 2, out + err)
    for f in os.listdir(work):
        os.remove(os.path.join(work, f))
    os.rmdir(work)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
