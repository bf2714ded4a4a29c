"""The rules of src/ and families/ that a reader relies on (DESIGN.md, "One
path for every kernel"), checked over the source text:

- the layers need each other in one direction only: src/driver <
  src/runtime < src/tuned < families/ < src/multi < src/host < src/tune <
  src/private.c; a file
  includes no header of a layer above its own, so the runtime knows no
  family (nor the families' table, family_list.h) and a family no tuner;
- families/ launch through ptxkit_kernel_launch only: no cuLaunchKernel, no
  internal launch_kernel, and leave stream-owned scratch to the runtime's
  pool: no cuStreamWaitEvent and no cuEventRecord;
- a family's folder families/NAME/ includes no other family's files but
  the public headers of reduce and scan (scan builds on reduce's operators)
  and gemm's; its device headers it names by their own names;
- the includes among the headers of src/ and families/ form no cycle;
- the rooms of src/runtime need each other in one direction only: a room is
  a .c with the .h of the same name (either may be alone), and room A needs
  room B when A's .c or .h includes B's header; this graph has no cycle;
- src/multi (several GPUs) sits above the families: it stands on the
  runtime, NCCL's loader and the public ops, and nothing below it includes
  multi/; only src/driver knows NCCL's shared-object name;
- src/host (host-array primitives) sits beside it: the runtime and the
  public ops, chunked over streams; nothing below it includes host/;
- every kernel entry (__global__) of families/ begins with
  ptxkit::grid_dependency_begin() or ptxkit::grid_dependency_begin_unless():
  the runtime launches the families' JIT kernels programmatically on sm_90
  (runtime/kernel.c), which is correct only for a kernel that waits for the
  one ahead before touching memory, or touches none of its memory;
- no file of the tree includes "runtime/runtime.h", the umbrella header the
  runtime had: each file includes the headers of the rooms whose names it
  uses (src/runtime/*.h), so that the includes say what a file depends on.

Usage: check_src_rules.py SOURCE_ROOT; exit 0 when every rule holds."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1])
src = os.path.join(root, "src")
fam = os.path.join(root, "families")
failures = []
files = []
for top in (src, fam):
    for base, _, names in os.walk(top):
        for name in names:
            if name.endswith((".c", ".h", ".in")):
                files.append(os.path.join(base, name))

def code_of(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # comments may name what code must not use
    return re.sub(r"//[^\n]*", " ", text)

def includes(path):
    return re.findall(r'#\s*include\s+"([^"]+)"', code_of(path))

def resolve(path, inc):
    """The file an include names: beside the includer, then under src/ and
    families/ (the build's include path); None for others (ptxkit.h, the
    generated family_list.h)."""
    for base in (os.path.dirname(path), src, fam):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(cand):
            return cand
    return None

# Includes across the layers that are allowed, each with its reason.
ALLOWED_UPWARD = {
    # the file layer is libc only and sits below everything (test files_layer)
    ("src/driver/nvrtc.c", "runtime/files.h"),
    ("src/driver/nccl.c", "runtime/files.h"),
    # a captured stream pauses PTXKIT_TUNE=auto's thread-local switch, which
    # lives beside the lookups it pauses
    ("src/runtime/stream_scratch.c", "tuned/tuned.h"),
}

LAYERS = ["src/driver", "src/runtime", "src/tuned", "families", "src/multi", "src/host", "src/tune", "src"]

def layer_of(path):
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    for rank, prefix in enumerate(LAYERS):
        if rel.startswith(prefix + "/"):
            return rank
    return len(LAYERS)

for path in files:
    rel = os.path.relpath(path, root)
    rank = layer_of(path)
    for inc in includes(path):
        target = resolve(path, inc)
        if inc == "family_list.h":
            target = os.path.join(fam, "family_list.h.in")
        if target is None:
            continue
        if layer_of(target) > rank and (rel.replace(os.sep, "/"), inc) not in ALLOWED_UPWARD:
            failures.append("%s (%s) includes %s (%s): a layer includes none above it"
                            % (rel, LAYERS[rank] if rank < len(LAYERS) else "?", inc, LAYERS[layer_of(target)]))

for path in files:
    rel = os.path.relpath(path, root)
    if not rel.startswith("families" + os.sep):
        continue
    code = code_of(path)
    for word in ("cuLaunchKernel", "launch_kernel", "cuStreamWaitEvent", "cuEventRecord"):
        if re.search(r"\b%s\b" % word, code):
            failures.append("%s uses %s (families launch through ptxkit_kernel_launch and take scratch from the pool)"
                            % (rel, word))
    parts = rel.split(os.sep)
    if len(parts) == 3:
        own = parts[1]
        for inc in includes(path):
            target = resolve(path, inc)
            if target is None or not target.startswith(fam + os.sep):
                continue
            tparts = os.path.relpath(target, fam).split(os.sep)
            if len(tparts) == 2 and tparts[0] != own and inc not in ("reduce/reduce.h", "gemm/gemm.h"):
                failures.append("%s includes %s, a file of another family's folder" % (rel, inc))

def find_cycles(graph):
    """Each cycle of graph (node -> [nodes]) once, as the path that closes it."""
    cycles, state = [], {}
    def visit(node, stack):
        state[node] = 1
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2
    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles

# only src/driver knows NCCL's shared-object name
for path in files:
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if not rel.startswith("src/driver/") and re.search(r'"libnccl\.so', code_of(path)):
        failures.append("%s names libnccl.so (only src/driver knows shared-object names)" % rel)

# include graph among the headers of src/ and families/
graph = {}
for path in files:
    if not path.endswith(".h"):
        continue
    rel = os.path.relpath(path, root)
    graph[rel] = [os.path.relpath(t, root) for t in (resolve(path, inc) for inc in includes(path)) if t]
for cycle in find_cycles(graph):
    failures.append("include cycle: " + " -> ".join(cycle))

# module graph among src/runtime's rooms
runtime_dir = os.path.join(src, "runtime")
rooms = {}
for name in sorted(os.listdir(runtime_dir)):
    stem, ext = os.path.splitext(name)
    if ext in (".c", ".h"):
        rooms.setdefault(stem, []).append(os.path.join(runtime_dir, name))
modules = {}
for room, paths in rooms.items():
    needs = set()
    for path in paths:
        for inc in re.findall(r'#include\s+"runtime/([^"/]+)\.h"', code_of(path)):
            if inc != room and inc in rooms:
                needs.add(inc)
    modules[room] = sorted(needs)
for cycle in find_cycles(modules):
    failures.append("module cycle among src/runtime's rooms: " + " -> ".join(cycle))

# the umbrella header stays gone, in every part of the tree that includes src/'s headers
if os.path.exists(os.path.join(runtime_dir, "runtime.h")):
    failures.append("src/runtime/runtime.h exists: include the header of each room a file uses instead")
for top in ("src", "families", "lab", "tools", "tests", "bench", "examples", "include"):
    for base, _, names in os.walk(os.path.join(root, top)):
        for name in names:
            if not name.endswith((".c", ".h", ".in", ".cu", ".cuh", ".sh")):
                continue
            path = os.path.join(base, name)
            try:
                text = open(path, encoding="utf-8").read()
            except UnicodeDecodeError:
                continue
            if re.search(r'#\s*include\s+"runtime/runtime\.h"', text):
                failures.append("%s includes runtime/runtime.h: include the headers of the rooms it uses"
                                % os.path.relpath(path, root))

# the families' kernel entries wait for the kernel ahead first
for base, _, names in os.walk(fam):
    for name in sorted(names):
        if not name.endswith((".cu", ".cuh")):
            continue
        path = os.path.join(base, name)
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"__global__", text):
            body = text.find("{", m.end())
            first = re.sub(r"\\\n", " ", text[body + 1:body + 400]).split(";", 1)[0].strip()
            if body < 0 or not (first == "ptxkit::grid_dependency_begin()" or
                                first.startswith("ptxkit::grid_dependency_begin_unless(")):
                line = text.count("\n", 0, m.start()) + 1
                failures.append("%s:%d: a kernel entry whose first statement is not ptxkit::grid_dependency_begin() "
                                "or ptxkit::grid_dependency_begin_unless() "
                                "(the families' kernels are launched programmatically on sm_90)"
                                % (os.path.relpath(path, root), line))

for f in failures:
    print("FAIL", f)
print("%d files checked, %d rule violations" % (len(files), len(failures)))
sys.exit(1 if failures else 0)
