#!/usr/bin/env bash
# Unpacks the build dependencies a bare GPU machine lacks (Debian's libcmocka
# and libxxhash) into .devdeps/ (git-ignored), for carrying to the device
# machine; tools/gpu_session.sh sources .devdeps/setup.sh when present.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libcmocka0 libcmocka-dev libxxhash-dev libcjson1 libcjson-dev)
rm -rf .devdeps && mkdir -p .devdeps
for f in "$tmp"/*.deb; do dpkg -x "$f" .devdeps; done
cat >.devdeps/setup.sh <<'SETUP'
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
export CFLAGS="-I$D/usr/include" LDFLAGS="-L$D/usr/lib/x86_64-linux-gnu" LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu
SETUP
grep -qx '/.devdeps/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.devdeps/' >>.git/info/exclude; }
echo ".devdeps ready: carry it ([\".devdeps\"]) and run tools/gpu_session.sh there"
