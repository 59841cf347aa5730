#!/usr/bin/env bash
# Downloads the .debs of the kernels' header libraries (nlohmann_json, CLI11, fmt) into DIR, on a
# machine whose apt reaches Debian's mirrors, for a GPU node that cannot install packages itself:
# gpu_build_env.sh unpacks them there with `dpkg -x` and points CMake at them (kernels/README.md).
#   kernels/tools/fetch_header_debs.sh [DIR]        (DIR defaults to .debs at the repository root)
# libfmt9 holds only the .so: it comes along because fmt's CMake package checks that the library
# exists, though the kernels use fmt header-only.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$repo/.debs}
mkdir -p "$dir"
cd "$dir"
apt-get download nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9
ls -l "$dir"
