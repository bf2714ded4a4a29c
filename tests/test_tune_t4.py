#!/usr/bin/env python3
"""ptxkit tune --export-t4 / --import-t4, no GPU: a synthetic T4 file
(results with ptxkit's key: timed, wrong, failed) is imported into an empty
tuning record; the record exported again validates against the vendored T4
schema and holds the same results; importing twice adds nothing; export ->
import -> export is the identity; `tune --show --record` lists the lines;
a file that does not read imports nothing; usage errors exit 2.
Skipped (77) without python3-jsonschema.

usage: test_tune_t4.py PTXKIT SCHEMA_DIR
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed")
    sys.exit(77)


def ptxkit_key(family, variant, n, outcome, gbs, note, samples):
    return {"device": "NVIDIA H200", "cc": 90, "sm_count": 132, "driver": 13000, "nvrtc_major": 13, "nvrtc_minor": 0,
            "library": "0.2.1", "family": family, "variant": variant, "code": "00000000deadbeef", "n": n,
            "outcome": outcome, "gbs": gbs, "samples": samples, "note": note}


def fixture():
    return {
        "schema_version": "1.0.0",
        "results": [
            {"timestamp": "2026-11-28T10:00:00Z", "configuration": {"block": 256, "items": 4, "vec": 16},
             "objectives": ["time"], "times": {"runtimes": [0.0254]}, "invalidity": "correct", "correctness": 1,
             "measurements": [{"name": "time", "value": 0.0254, "unit": "ms"},
                              {"name": "throughput", "value": 2642.5, "unit": "GB/s"}],
             "ptxkit": ptxkit_key("reduce", "sum.float32", 1 << 24, "ok", 2642.5, "", 5)},
            {"timestamp": "2026-11-28T10:00:01Z", "configuration": {"block": 1024, "items": 16, "vec": 16},
             "objectives": ["time"], "times": {"runtimes": []}, "invalidity": "correctness", "correctness": 0,
             "measurements": [], "ptxkit": ptxkit_key("reduce", "sum.float32", 1 << 24, "wrong", 0, "", 0)},
            {"timestamp": "2026-11-28T10:00:02Z", "configuration": {"TILE": 64, "BIG": 9007199254740},
             "objectives": ["time"], "times": {"runtimes": []}, "invalidity": "compile", "correctness": 0,
             "measurements": [],
             "ptxkit": ptxkit_key("myapp.stencil", "-", 1 << 20, "failed", 0, "compile error: too much shared memory", 0)},
        ],
    }


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    exe, schema_dir = argv
    with open(os.path.join(schema_dir, "t4", "results-schema.json")) as f:
        t4 = json.load(f)
    jsonschema.Draft202012Validator.check_schema(t4)
    work = tempfile.mkdtemp(prefix="ptxkit-t4-")
    env = dict(os.environ, PTXKIT_TUNE_DB=os.path.join(work, "tune.db"))
    env.pop("PTXKIT_TUNE_RECORD", None)
    failures = []

    def ptxkit(*args, record=None):
        e = dict(env)
        if record:
            e["PTXKIT_TUNE_RECORD"] = record
        p = subprocess.run([exe] + list(args), capture_output=True, text=True, env=e)
        return p.returncode, p.stdout, p.stderr

    def path(name):
        return os.path.join(work, name)

    def write(name, doc):
        with open(path(name), "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path(name)

    def load(name):
        with open(path(name)) as f:
            return json.load(f)

    def check(what, ok, detail=""):
        if not ok:
            failures.append("%s\n%s" % (what, detail))

    def valid(doc):
        errors = list(jsonschema.Draft202012Validator(t4).iter_errors(doc))
        return errors[0].message if errors else None

    src = fixture()
    check("the fixture is T4", valid(src) is None, valid(src))
    rc, out, err = ptxkit("tune", "--import-t4", write("in.json", src))
    check("import", rc == 0 and "imported 3 of 3" in out, out + err)
    rc, out, err = ptxkit("tune", "--import-t4", path("in.json"))
    check("importing twice adds nothing", rc == 0 and "imported 0 of 3" in out, out + err)
    rc, out, err = ptxkit("tune", "--export-t4", path("out.json"))
    check("export", rc == 0, out + err)
    exported = load("out.json")
    check("the export validates against the T4 schema", valid(exported) is None, valid(exported))
    check("schema_version", exported.get("schema_version") == "1.0.0")
    check("the same results", exported.get("results") == src["results"],
          json.dumps(exported.get("results"), indent=1)[:3000])
    # export -> import -> export: the identity, in a record of its own
    other = path("other.record.jsonl")
    rc, out, err = ptxkit("tune", "--import-t4", path("out.json"), record=other)
    check("re-import", rc == 0 and "imported 3 of 3" in out, out + err)
    rc, out, err = ptxkit("tune", "--export-t4", path("again.json"), record=other)
    check("re-export", rc == 0 and load("again.json")["results"] == exported["results"], out + err)
    # the record lists them
    rc, out, err = ptxkit("tune", "--show", "--record", "--json", "-")
    doc = json.loads(out) if rc == 0 else {}
    rows = doc.get("tables", [{}])[0].get("rows", [])
    check("tune --show --record: three lines", rc == 0 and len(rows) == 3, out + err)
    if len(rows) == 3:
        check("the timed line", rows[0]["outcome"] == "ok" and abs(rows[0]["time_us"] - 25.4) < 0.01 and
              rows[0]["config"] == {"block": 256, "items": 4, "vec": 16}, json.dumps(rows[0]))
        check("the failed line's note", rows[2]["outcome"] == "failed" and "shared memory" in rows[2]["note"],
              json.dumps(rows[2]))
    # files that do not read import nothing
    foreign = copy.deepcopy(src)
    for r in foreign["results"]:
        del r["ptxkit"]
    no_time = copy.deepcopy(src)
    no_time["results"][0]["times"]["runtimes"] = []
    no_time["results"][0]["measurements"] = []
    no_time["results"][0]["timestamp"] = "2026-11-28T11:00:00Z"
    fraction = copy.deepcopy(src)
    fraction["results"][0]["configuration"]["block"] = 2.5
    bad_code = copy.deepcopy(src)
    bad_code["results"][1]["ptxkit"]["code"] = "xyz"
    bad_name = copy.deepcopy(src)
    bad_name["results"][0]["ptxkit"]["family"] = "bad family"
    bad_name["results"][0]["timestamp"] = "2026-11-28T12:00:00Z"
    broken = [("foreign", foreign), ("no time", no_time), ("fraction", fraction), ("bad code", bad_code),
              ("bad family name", bad_name), ("not json", "not json"), ("not T4", {"results": 3}),
              ("T4 2.0", dict(src, schema_version="2.0.0"))]
    for what, doc in broken:
        rc, out, err = ptxkit("tune", "--import-t4", write("bad.json", doc))
        check("import of %s: exit 1" % what, rc == 1, out + err)
    rc, out, err = ptxkit("tune", "--export-t4", path("after.json"))
    check("nothing imported from the broken files", rc == 0 and load("after.json")["results"] == exported["results"])
    # usage errors
    for args in (["--import-t4", path("in.json"), "reduce"], ["--import-t4", path("in.json"), "--variant", "sum.float32"],
                 ["--export-t4", path("x.json"), "--show"], ["--export-t4", path("x.json"), "reduce"],
                 ["--import-t4", path("in.json"), "--no-save"], ["--export-t4", path("x.json"), "--import-t4", path("in.json")],
                 ["--import-t4", path("in.json"), "nosuchfamily", "--variant", "x", "--sizes", "2^20"]):
        rc, out, err = ptxkit("tune", *args)
        check("ptxkit tune %s: exit 2" % " ".join(args), rc == 2 and "usage" in err, out + err)
    shutil.rmtree(work)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
