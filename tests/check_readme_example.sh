#!/bin/sh
# Runs one README example built against the built shared library: with a GPU
# it exits 0 and prints its result ("sum = ..." or "0 of N wrong"); without
# one it exits 1 saying "no GPU: ...". Anything else (a crash, a wrong
# count, another message) fails.
# usage: check_readme_example.sh BINARY
out=$("$1" 2>&1)
rc=$?
echo "$out (exit $rc)"
case "$rc:$out" in
    "0:sum = "* | "0:0 of "*) exit 0 ;;
    "1:no GPU: "*) exit 0 ;;
esac
exit 1
