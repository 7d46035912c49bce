#!/usr/bin/env bash
# The README's main job: dependencies (cached), build, then solve a generated
# problem with keig-solve on the backend's default execution space.
#   scripts/quickstart.sh [--backend openmp|cuda] [keig-solve options...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
backend=openmp
if [ "${1:-}" = "--backend" ]; then backend="$2"; shift 2; fi
build_dir="$(bash "$here/build.sh" --backend "$backend" | tail -n 1)"
export OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
if [ $# -eq 0 ]; then set -- --matrix random --n 2000; fi
"$build_dir/examples/keig-solve" "$@"
