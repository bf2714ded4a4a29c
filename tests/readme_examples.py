#!/usr/bin/env python3
"""Writes each ```c block of README.md to its own file (OUTDIR/readme_exampleN.c),
as a user would copy it; the build compiles them against the built libptxkit.
usage: readme_examples.py README.md OUTPUT.c..."""
import sys

text = open(sys.argv[1], encoding="utf-8").read()
blocks = []
for part in text.split("```c\n")[1:]:
    blocks.append(part.split("```", 1)[0])
outputs = sys.argv[2:]
if len(blocks) != len(outputs):
    sys.exit(f"README.md has {len(blocks)} C examples, the build expects {len(outputs)}")
for block, path in zip(blocks, outputs):
    with open(path, "w", encoding="utf-8") as f:
        f.write(block)
