"""The rules of src/ that a reader relies on (DESIGN.md, "One path for every
kernel"), checked over the source text:

- src/ops/ launches through ptxkit_launch only: no cuLaunchKernel, no
  internal launch_kernel, and leaves stream-owned scratch to the runtime's
  pool: no cuStreamWaitEvent and no cuEventRecord;
- the includes among src/'s own headers form no cycle;
- the rooms of src/runtime need each other in one direction only: a room is
  a .c with the .h of the same name (either may be alone), and room A needs
  room B when A's .c or .h includes B's header; this graph has no cycle;
- the layers' order (DESIGN.md): src/multi (several GPUs) stands on the
  runtime, NCCL's loader and the public ops, so it includes driver/ and
  runtime/ headers only, and no lower layer (driver, runtime, tuned, ops,
  tune) includes multi/; only src/driver knows NCCL's shared-object name;
- no file of the tree includes "runtime/runtime.h", the umbrella header the
  runtime had: each file includes the headers of the rooms whose names it
  uses (src/runtime/*.h), so that the includes say what a file depends on.

Usage: check_src_rules.py SRC_DIR; exit 0 when every rule holds."""
import os
import re
import sys

src = sys.argv[1]
failures = []
files = []
for root, _, names in os.walk(src):
    for name in names:
        if name.endswith((".c", ".h", ".in")):
            files.append(os.path.join(root, name))

def code_of(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # comments may name what code must not use
    return re.sub(r"//[^\n]*", " ", text)

for path in files:
    rel = os.path.relpath(path, src)
    code = code_of(path)
    if rel.startswith("ops" + os.sep):
        for word in ("cuLaunchKernel", "launch_kernel", "cuStreamWaitEvent", "cuEventRecord"):
            if re.search(r"\b%s\b" % word, code):
                failures.append("%s uses %s (ops launch through ptxkit_launch and take scratch from the pool)" % (rel, word))

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

# src/multi's place among the layers
lower_layers = ("driver", "runtime", "tuned", "ops", "tune")
for path in files:
    rel = os.path.relpath(path, src)
    layer = rel.split(os.sep)[0]
    includes = re.findall(r'#include\s+"([^"]+)"', code_of(path))
    if layer == "multi":
        for inc in includes:
            if "/" in inc and inc.split("/")[0] not in ("driver", "runtime", "multi"):
                failures.append("%s includes %s (src/multi stands on driver/ and runtime/ and the public API)" % (rel, inc))
    elif layer in lower_layers:
        for inc in includes:
            if inc.startswith("multi/"):
                failures.append("%s includes %s (a lower layer than src/multi)" % (rel, inc))
    if layer != "driver" and re.search(r'"libnccl\.so', code_of(path)):
        failures.append("%s names libnccl.so (only src/driver knows shared-object names)" % rel)

# include graph among src/'s headers
graph = {}
for path in files:
    if not path.endswith(".h"):
        continue
    rel = os.path.relpath(path, src)
    graph[rel] = [inc for inc in re.findall(r'#include\s+"([^"]+)"', code_of(path))
                  if os.path.exists(os.path.join(src, inc))]
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
root = os.path.dirname(os.path.abspath(src))
if os.path.exists(os.path.join(runtime_dir, "runtime.h")):
    failures.append("src/runtime/runtime.h exists: include the header of each room a file uses instead")
for top in ("src", "tools", "tests", "bench", "examples", "include", "include-private", "cu_sources"):
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

for f in failures:
    print("FAIL", f)
print("%d files checked, %d rule violations" % (len(files), len(failures)))
sys.exit(1 if failures else 0)
