#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, after scripts/stage-device.sh
# (which copies this script into .device/): every backend's test executable,
# keig-solve on n = 4096 GPU problems, the embedding example, and optional
# benchmarks. Logs go to $OUT (the device tool's output folder); where there
# are more files than the tool brings back (8), they are packed into
# $OUT/device-check.tar.gz instead.
#   .device/device-check.sh [tests] [audit] [bench-symv] [bench-eigh N1,N2,...] [bench NAME "KEIG-BENCH ARGS"]
set -uo pipefail
out="${OUT:-/tmp}"
stage="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LD_LIBRARY_PATH="$stage/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export OMP_PROC_BIND=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
summary=()
written=()  # this run's logs and CSVs in $out: NAME.log, and NAME.csv for benchmarks
run() {  # name, command...
  local name="$1"; shift
  written+=("$name.log" "$name.csv")
  local t0=$SECONDS
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-26s %-4s %4ds  %s' "$name" "$([ $rc = 0 ] && echo PASS || echo FAIL)" $((SECONDS - t0)) \
    "$(grep -E '^\[  PASSED|^\[  FAILED|PASSED$|FAILED$|^embed:' "$out/$name.log" | tail -n 1)")")
  [ $rc = 0 ] || tail -n 30 "$out/$name.log"
}
while [ $# -gt 0 ]; do
  case "$1" in
    tests)
      for exe in "$stage"/bin/keig_tests_*; do run "$(basename "$exe")" "$exe"; done
      run solve-cuda-4096 "$stage/bin/keig-solve" --matrix random --n 4096
      run solve-cuda-4096-onestage "$stage/bin/keig-solve" --matrix random --n 4096 --method one-stage
      run solve-cuda-4096-z "$stage/bin/keig-solve" --matrix clustered --n 4096 --type cdouble --method one-stage
      run solve-cuda-4096-twostage "$stage/bin/keig-solve" --matrix random --n 4096 --method two-stage
      run solve-cuda-4096-twostage-z "$stage/bin/keig-solve" --matrix clustered --n 4096 --type cdouble --method two-stage
      run solve-host-1000 "$stage/bin/keig-solve" --matrix graded --n 1000 --space host
      [ -x "$stage/bin/embed" ] && run embed "$stage/bin/embed"
      tail -n 8 "$out/solve-cuda-4096-twostage.log"
      shift ;;
    audit)  # the CUDA tests with NaN in shared memory before every kernel launch (scripts/poison-shared)
      [ -f "$stage/lib/libpoison-shared.so" ] || { echo "device-check.sh: audit needs libpoison-shared.so (staged where CUDA's CUPTI is)"; exit 2; }
      export CUDA_INJECTION64_PATH="$stage/lib/libpoison-shared.so"
      run audit-shared "$stage/bin/keig_tests_cuda"
      unset CUDA_INJECTION64_PATH
      grep '^poison-shared' "$out/audit-shared.log"; shift ;;
    bench-symv)
      run bench-symv "$stage/bin/keig-bench" --suite symv --n 4096,8192,16384,32768 --csv "$out/bench-symv.csv"
      cat "$out/bench-symv.log"; shift ;;
    bench-eigh)
      run bench-eigh "$stage/bin/keig-bench" --suite eigh --n "$2" --jobs values,vectors --csv "$out/bench-eigh.csv"
      cat "$out/bench-eigh.log"; shift 2 ;;
    bench)  # bench NAME "ARGS": keig-bench with the words of ARGS, CSV to $OUT/NAME.csv
      # shellcheck disable=SC2086
      run "$2" "$stage/bin/keig-bench" $3 --csv "$out/$2.csv"
      grep -v '^Kokkos' "$out/$2.log" | tail -n 40; shift 3 ;;
    solve)  # solve ARGS...: one keig-solve run with all remaining arguments
      shift; run solve-extra "$stage/bin/keig-solve" "$@"; tail -n 12 "$out/solve-extra.log"; set -- ;;
    *) echo "device-check.sh: unknown step '$1'"; exit 2 ;;
  esac
done
printf '%s\n' "${summary[@]}"
# The device tool returns at most 8 files from $OUT: pack this run's files when there are more.
existing=()
for f in "${written[@]}"; do
  [ -f "$out/$f" ] && [[ " ${existing[*]} " != *" $f "* ]] && existing+=("$f")
done
if [ "${#existing[@]}" -gt 8 ]; then
  tar -C "$out" -czf "$out/device-check.tar.gz" "${existing[@]}" && (cd "$out" && rm -f "${existing[@]}")
  echo "device-check.sh: ${#existing[@]} logs packed into $out/device-check.tar.gz"
fi
