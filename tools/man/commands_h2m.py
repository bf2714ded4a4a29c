#!/usr/bin/env python3
"""Writes help2man's include file for ptxkit(1): the hand-written sections of
ptxkit.h2m, then a COMMANDS section made of every command's own --help (and
every benchmark's and every ladder's), so the manual page says what the
program says.

usage: commands_h2m.py PTXKIT STATIC.h2m OUTPUT
"""
import re
import subprocess
import sys


def help_of(ptxkit, *args):
    out = subprocess.run([ptxkit, *args, "--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"{ptxkit} {' '.join(args)} --help exited {out.returncode}: {out.stderr}")
    return out.stdout


def listed(text, heading):
    """The names in an indented list under `heading:` of a usage text."""
    names, inside = [], False
    for line in text.splitlines():
        if line.strip() == heading + ":":
            inside = True
        elif inside and re.match(r"^  \S", line):
            names.append(line.split()[0])
        elif inside and line.strip() == "" and names:
            break
    return names


# Commands with subcommands, and the heading their --help lists them under.
SUBCOMMANDS = {"bench": "benchmarks", "ladder": "ladders", "report": "subcommands"}


def roff(text):
    """Preformatted text as roff: backslashes, leading dots and minus signs."""
    lines = []
    for line in text.rstrip("\n").splitlines():
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def main():
    ptxkit, static, output = sys.argv[1:4]
    top = help_of(ptxkit)
    parts = [open(static, encoding="utf-8").read().rstrip("\n"), "", "[COMMANDS]"]
    for command in listed(top, "commands"):
        text = help_of(ptxkit, command)
        parts += [f'.SS "ptxkit {command}"', ".nf", roff(text), ".fi"]
        for sub in listed(text, SUBCOMMANDS[command]) if command in SUBCOMMANDS else []:
            parts += [f'.SS "ptxkit {command} {sub}"', ".nf", roff(help_of(ptxkit, command, sub)), ".fi"]
    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
