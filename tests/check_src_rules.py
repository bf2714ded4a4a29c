"""The rules of src/ that a reader relies on (DESIGN.md, "One path for every
kernel"), checked over the source text:

- src/ops/ launches through ptxkit_launch only: no cuLaunchKernel, no
  internal launch_kernel, and leaves stream-owned scratch to the runtime's
  pool: no cuStreamWaitEvent and no cuEventRecord;
- the includes among src/'s own headers form no cycle.

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

# include graph among src/'s headers
graph = {}
for path in files:
    if not path.endswith(".h"):
        continue
    rel = os.path.relpath(path, src)
    graph[rel] = [inc for inc in re.findall(r'#include\s+"([^"]+)"', code_of(path))
                  if os.path.exists(os.path.join(src, inc))]
state = {}
def visit(node, stack):
    state[node] = 1
    for nxt in graph.get(node, []):
        if state.get(nxt) == 1:
            failures.append("include cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
        elif nxt not in state:
            visit(nxt, stack + [nxt])
    state[node] = 2
for node in sorted(graph):
    if node not in state:
        visit(node, [node])

for f in failures:
    print("FAIL", f)
print("%d files checked, %d rule violations" % (len(files), len(failures)))
sys.exit(1 if failures else 0)
