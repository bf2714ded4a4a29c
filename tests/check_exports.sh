#!/bin/sh
# The installed libraries export only the public headers' ptxkit_ names (plus
# what the toolchain itself defines), and both export the same names: no
# internal symbol reaches, or clashes in, an application.
# usage: check_exports.sh NM libptxkit.so libptxkit.a
set -u
nm=$1 so=$2 a=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Toolchain names: the linker's section markers, sanitizer runtime hooks.
toolchain='^(_init|_fini|_edata|_end|__bss_start|__(odr_)?asan.*|__tsan.*|__ubsan.*|__sanitizer.*|__start_.*|__stop_.*)$'
"$nm" -D --defined-only "$so" | awk 'NF == 3 {print $3}' | grep -Ev "$toolchain" | sort -u >"$tmp/so" || exit 1
"$nm" -g --defined-only "$a" | awk 'NF == 3 {print $3}' | grep -Ev "$toolchain" | sort -u >"$tmp/a" || exit 1
status=0
for f in so a; do
    count=$(wc -l <"$tmp/$f")
    bad=$(grep -v '^ptxkit_' "$tmp/$f")
    if [ -n "$bad" ]; then
        echo "libptxkit.$f exports names without the ptxkit_ prefix:"
        echo "$bad" | sed 's/^/    /'
        status=1
    fi
    # The ladders are lab programs on the public API (lab/ladders.c), not
    # library functions.
    ladder=$(grep -i 'ladder' "$tmp/$f")
    if [ -n "$ladder" ]; then
        echo "libptxkit.$f exports ladder names:"
        echo "$ladder" | sed 's/^/    /'
        status=1
    fi
    [ "$count" -gt 50 ] || { echo "libptxkit.$f exports only $count names"; status=1; }
    echo "libptxkit.$f: $count ptxkit_ names"
done
if ! cmp -s "$tmp/so" "$tmp/a"; then
    echo "libptxkit.so and libptxkit.a export different names:"
    diff "$tmp/so" "$tmp/a" | sed 's/^/    /'
    status=1
fi
exit $status
