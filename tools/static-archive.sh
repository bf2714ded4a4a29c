#!/bin/sh
# The installed static archive: every object of the library partially linked
# into one, whose hidden (internal) symbols become local, so only the public
# header's ptxkit_ functions remain global and linkable.
# usage: static-archive.sh LD OBJCOPY AR OBJECTS.a OUT.a
set -eu
ld=$1 objcopy=$2 ar=$3 in=$4 out=$5
obj=$out.o
"$ld" -r --whole-archive "$in" -o "$obj"
"$objcopy" --localize-hidden "$obj"
rm -f "$out"
"$ar" rcs "$out" "$obj"
rm -f "$obj"
