#!/usr/bin/env python3
"""The public interface's grammar (ptxkit.h, "Names"), checked over the three
public headers include/ptxkit.h, ptxkit_ops.h and ptxkit_tune.h, and, given
the built shared library, over what it exports.

What it checks:
- every function is ptxkit_<object>_<words>_<verb>: <object> from OBJECTS,
  the last word(s) a verb from VERBS, or the name is one of OPS (an
  operation, named by what it does) or EXCEPTIONS (with the reason);
- a _get returns a value or has a non-const pointer parameter (an out
  parameter), and no word of its name asks for work (create, compile,
  load, launch, alloc, free, destroy);
- a _set has at least two parameters (the object and the value);
- every _destroy returns void and takes one parameter, the object: it
  carries its context, and the caller passes NULL freely (that it accepts
  NULL is each function's contract, tested by the CPU tests, not here);
- no function is declared twice, and the three headers exist, each with its
  own include guard;
- at most MAX_STABLE functions outside the experimental tier
  (#ifdef PTXKIT_EXPERIMENTAL ... #endif);
- with LIB (the shared library): nm -D exports no ptxkit_private_ and no
  *ladder* name, and the exported ptxkit_ functions are exactly those the
  headers declare (stable or experimental).
What it cannot check: that a _get has no side effect beyond its name, that
_destroy really accepts NULL, argument order (selectors, outputs, inputs,
sizes, configuration, stream): review keeps those.

PENDING lists names that other branches of the 0.3 work rename or remove;
they are reported, not failed, and not counted. Empty it once they are
merged.

usage: check_api.py SOURCE_ROOT [LIB [NM]]; exit 0 when every rule holds."""
import os
import re
import subprocess
import sys

MAX_STABLE = 120
HEADERS = ("ptxkit.h", "ptxkit_ops.h", "ptxkit_tune.h")
OBJECTS = """status last_error versions jit environment cache device context memory host stream event graph
load_op dtype copy reduce reduce_op scan scan_kind transpose gemm gemm_op program module kernel l2
tune tune_report tune_db tune_record tune_blocks tunable config comm shard""".split()
VERBS = """get set create destroy attach enter leave synchronize query record wait_event alloc free
register unregister write read copy set8 set32 launch launch_ex launch_checked capture_begin capture_end
update reset merge append check name string size parse define is_error available supported prepare
add_options add_include_dirs add_param add_rule compile load tune measure experiment run purge
allreduce reduce scan transform gather scatter split wrap create_all create_rank create_from_file probe sweep_tiles
""".split()
# operations: named by what they do, their object is the verb
OPS = {"ptxkit_copy", "ptxkit_reduce", "ptxkit_scan", "ptxkit_transpose", "ptxkit_gemm", "ptxkit_tune",
       "ptxkit_reduce_to_host"}
EXCEPTIONS = {
    "ptxkit_last_error": "the error channel's one reader, read after every failure: a noun, as errno",
    "ptxkit_host_func_launch": "a host function is launched on a stream, as a kernel is",
}
WORK = {"create", "compile", "load", "launch", "alloc", "free", "destroy"}
# owned by the other 0.3 branches (ladders, errors, config): they go or are
# renamed there; reported, not counted, until the merge
PENDING = {}


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", text, flags=re.S))


def declarations(text):
    """[(name, return type, [params], experimental)] of a header's functions."""
    out = []
    exp_depth = None
    depth = 0
    stmt = []
    for line in strip_comments(text).splitlines():
        s = line.strip()
        if s.startswith("#"):
            if re.match(r"#\s*if", s):
                depth += 1
                if re.match(r"#\s*ifdef\s+PTXKIT_EXPERIMENTAL\b", s):
                    exp_depth = depth
            elif re.match(r"#\s*endif", s):
                if exp_depth == depth:
                    exp_depth = None
                depth -= 1
            continue
        if not stmt and (s in ("", "}") or s.startswith('extern "C"')):
            continue
        stmt.append(s)
        joined = " ".join(stmt)
        if joined.count("(") == joined.count(")") and joined.count("{") == joined.count("}") and \
                joined.endswith(";"):
            stmt = []
            if joined.startswith("typedef") or "{" in joined:
                continue
            # a GNU attribute (printf format checks) is not a parameter
            joined = re.sub(r"\s*__attribute__\s*\(\(.*\)\)\s*;$", ";", joined)
            m = re.match(r"(.*?)\b(ptxkit_\w+)\s*\((.*)\)\s*;$", joined)
            if not m:
                continue
            params = [p.strip() for p in re.split(r",(?![^(]*\))", m.group(3)) if p.strip()]
            if params == ["void"]:
                params = []
            out.append((m.group(2), m.group(1).strip(), params, exp_depth is not None))
        elif joined.endswith(";") or joined.endswith("}") and joined.count("{") == joined.count("}"):
            stmt = []
    return out


def grammar(name, ret, params):
    """The list of rules the declaration breaks."""
    bad = []
    if name in OPS or name in EXCEPTIONS:
        return bad
    rest = name[len("ptxkit_"):]
    objects = [o for o in OBJECTS if rest == o or rest.startswith(o + "_")]
    if not objects:
        return [f"{name}: no known object (ptxkit_<object>_<verb>; objects: check_api.py OBJECTS)"]
    words = rest[len(max(objects, key=len)) + 1:]
    if words.endswith("_async"):  # queued on a stream: the twin of the call without it
        words = words[:-len("_async")]
    if not words:
        return [f"{name}: no verb"]
    if not any(words == v or words.endswith("_" + v) for v in VERBS):
        bad.append(f"{name}: '{words}' does not end with a known verb (check_api.py VERBS)")
    parts = words.split("_")
    if parts[-1] == "get":
        out_param = any("*" in p and not p.startswith("const ") and not re.match(r"const\s", p) for p in params)
        if ret == "void" and not out_param:
            bad.append(f"{name}: a _get returns nothing and has no out parameter")
        if len(parts) > 1 and parts[-2] in WORK:
            bad.append(f"{name}: a _get whose name asks for work ({parts[-2]})")
    if parts[-1] == "set" and len(params) < 2:
        bad.append(f"{name}: a _set without a value")
    if parts[-1] == "destroy":
        if ret != "void":
            bad.append(f"{name}: _destroy returns {ret}, not void")
        if len(params) != 1:
            bad.append(f"{name}: _destroy takes {len(params)} parameters, not the object alone")
    return bad


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    failures, notes = [], []
    decls = {}
    for h in HEADERS:
        path = os.path.join(root, "include", h)
        if not os.path.exists(path):
            failures.append(f"include/{h} is missing")
            continue
        text = open(path).read()
        guard = re.search(r"#ifndef (\w+)\s*\n#define \1\b", text)
        if not guard:
            failures.append(f"include/{h}: no include guard")
        for name, ret, params, exp in declarations(text):
            if name in decls:
                failures.append(f"{name}: declared twice ({decls[name][0]} and {h})")
                continue
            decls[name] = (h, ret, params, exp)
    for name, (h, ret, params, exp) in sorted(decls.items()):
        if name in PENDING:
            notes.append(f"pending ({PENDING[name]} branch): {name}")
            continue
        failures += grammar(name, ret, params)
    for name in sorted(set(PENDING) - set(decls)):
        notes.append(f"PENDING names {name}, which no header declares any more: remove it from PENDING")
    stable = [n for n, d in decls.items() if not d[3] and n not in PENDING]
    experimental = [n for n, d in decls.items() if d[3] and n not in PENDING]
    per = {h: sum(1 for n in stable if decls[n][0] == h) for h in HEADERS}
    print(f"stable functions: {len(stable)} (" + ", ".join(f"{h} {c}" for h, c in per.items()) +
          f"); experimental: {len(experimental)}; pending: {len(set(PENDING) & set(decls))}")
    if len(stable) > MAX_STABLE:
        failures.append(f"{len(stable)} stable functions, more than {MAX_STABLE}: move some to the experimental tier")

    if len(sys.argv) > 2:
        lib = sys.argv[2]
        nm = sys.argv[3] if len(sys.argv) > 3 else "nm"
        out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
        exported = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[2].startswith("ptxkit_"):
                exported.add(f[2])
        for n in sorted(exported):
            if n in PENDING:
                continue
            if n.startswith("ptxkit_private_"):
                failures.append(f"{lib} exports {n}: no ptxkit_private_ name may be exported")
            if "ladder" in n:
                failures.append(f"{lib} exports {n}: the ladders are lab programs, not library functions")
        for n in sorted(exported - set(decls)):
            if n not in PENDING:
                failures.append(f"{lib} exports {n}, which no public header declares")
        for n in sorted(set(decls) - exported):
            failures.append(f"{n} is declared ({decls[n][0]}) but {lib} does not export it")
        print(f"exported ptxkit_ functions: {len(exported)}")
    for n in notes:
        print("note: " + n)
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
