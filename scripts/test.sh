#!/usr/bin/env bash
# The README's test command: dependencies (cached), build, then the whole
# test suite through ctest (every enabled backend's executable).
#   scripts/test.sh [--backend openmp|cuda] [extra ctest arguments...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
backend=openmp
if [ "${1:-}" = "--backend" ]; then backend="$2"; shift 2; fi
build_dir="$(bash "$here/build.sh" --backend "$backend" | tail -n 1)"
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)" "$@"
