#!/usr/bin/env bash
# Installs the dependencies (cached) and configures + builds keig.
#   scripts/build.sh [--backend openmp|cuda] [--build-dir DIR]
# Prints the build directory on its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
backend=openmp
build_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    *) echo "build.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
build_dir="${build_dir:-$root/build/$backend}"
prefix="${KEIG_DEPS_PREFIX:-$HOME/.cache/keig-deps}"

bash "$here/install-deps.sh" --backend "$backend" --prefix "$prefix" >&2
echo "[keig] configuring ($backend) in $build_dir" >&2
mkdir -p "$(dirname "$build_dir")"
cmake -S "$root" -B "$build_dir" -DKEIG_BACKEND="$backend" -DKEIG_DEPS_PREFIX="$prefix" > "$build_dir.configure.log" 2>&1 ||
  { cat "$build_dir.configure.log" >&2; exit 1; }
echo "[keig] building ($backend, $(nproc) jobs)" >&2
cmake --build "$build_dir" -j "$(nproc)" >&2
echo "$build_dir"
