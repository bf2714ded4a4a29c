#!/usr/bin/env bash
# Unpacks the build dependencies a bare GPU machine lacks (Debian's libcmocka
# and libxxhash) into .devdeps/ (git-ignored), for carrying to the device
# machine; bench/compare_trees.sh (and the notebook's GPU-session scripts)
# source .devdeps/setup.sh when present.
# `bench/devdeps.sh cub` instead builds the CUB comparison programs and the
# reduce comparison library here with nvcc into .cubbin/ (git-ignored; carry
# it), so the GPU machine can build with CUB=disabled and still run `bench
# reduce|scan --compare`.
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = cub ]; then
    mkdir -p .cubbin
    for b in reduce scan; do
        nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o .cubbin/ptxkit-cub-$b bench/cub_$b.cu
    done
    nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -shared -Xcompiler -fPIC,-fvisibility=hidden \
        -o .cubbin/libptxkit-cub-reduce.so bench/cub_reduce_lib.cu
    grep -qx '/.cubbin/' .git/info/exclude 2>/dev/null || echo '/.cubbin/' >>.git/info/exclude
    echo ".cubbin ready: carry it ([\".cubbin\"]) with bench/compare_trees.sh"
    exit 0
fi
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
echo ".devdeps ready: carry it ([\".devdeps\"]) and run bench/compare_trees.sh there"
