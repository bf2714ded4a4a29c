#!/usr/bin/env python3
"""The manual page ptxkit(1) says what the program says: every command and
benchmark has its section, every option a --help names and every PTXKIT_*
variable of the README's table appear in the page (options, not whole
lines: rewording a help text does not make the page wrong). Run on the committed docs/ptxkit.1 (the
page installed where help2man is missing) and on the page built by help2man.

usage: check_manpage.py PTXKIT PAGE README.md
"""
import os
import re
import sys

# The commands and their --help, read the way the page's generator reads them.
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "man"))
from commands_h2m import SUBCOMMANDS, help_of, listed  # noqa: E402


def main():
    ptxkit, page_path, readme_path = sys.argv[1:4]
    page = open(page_path, encoding="utf-8").read()
    # roff: \- is a minus sign, \e a backslash, \& a zero-width break
    text = page.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")
    missing = []
    top = help_of(ptxkit)
    helps = {(): top}
    for command in listed(top, "commands"):
        helps[(command,)] = help_of(ptxkit, command)
        for sub in listed(helps[(command,)], SUBCOMMANDS[command]) if command in SUBCOMMANDS else []:
            helps[(command, sub)] = help_of(ptxkit, command, sub)
    for args, help_text in helps.items():
        if args and f'.SS "ptxkit {" ".join(args)}"' not in page:
            missing.append(f"no section for 'ptxkit {' '.join(args)}'")
        for option in sorted(set(re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", help_text))):
            if not re.search(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", text):
                missing.append(f"'ptxkit {' '.join(args)}' takes {option}, which the page does not name")
    readme = open(readme_path, encoding="utf-8").read()
    for var in sorted(set(re.findall(r"^\| `(PTXKIT_[A-Z_]+)", readme, re.M))):
        if var not in text:
            missing.append(f"README's {var} is not in the page")
    if missing:
        print(f"{page_path} is out of date ({len(missing)} differences; regenerate it with "
              "`ninja -C build update-manpage` where help2man is installed):")
        print("\n".join(missing[:40]))
        return 1
    print(f"{page_path}: {len(helps)} commands and their options, README's variables: in sync")
    return 0


if __name__ == "__main__":
    sys.exit(main())
