#!/usr/bin/env bash
# Stages a local CUDA build for the lent GPU machine (no package archive
# there): the test executables, keig-solve, keig-bench, the embedding example
# and the non-system shared libraries they need, into .device/ and the
# archive .device.tar.xz (both git-ignored). On the machine:
#   tar -xJf .device.tar.xz && .device/device-check.sh tests bench-symv
#   scripts/stage-device.sh [build-dir]      (default build/cuda)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build/cuda}"
stage="$root/.device"
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/lib"
bins=("$build"/tests/keig_tests_* "$build/examples/keig-solve" "$build/examples/keig-bench")
[ -x "$build/embed-test/build/embed" ] && bins+=("$build/embed-test/build/embed")
for b in "${bins[@]}"; do cp "$b" "$stage/bin/"; done
# Libraries from Debian's archive (OpenBLAS, LAPACK(E), gfortran runtime, gtest);
# glibc, libstdc++, libgomp and the CUDA libraries come from the GPU machine.
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libstdc++*|libgcc_s*|libgomp*|libdl.so*|libpthread*|librt.so*|ld-linux*|libcu*|libnv*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
# The shared-memory audit (device-check.sh audit; scripts/poison-shared),
# where this machine has CUDA's compiler and CUPTI.
cuda="${CUDA_HOME:-/usr/local/cuda}"
cupti="$(ls "$cuda"/lib*/libcupti.so.[0-9]* 2>/dev/null | head -n 1 || true)"
if [ -x "$cuda/bin/nvcc" ] && [ -f "$cuda/include/cupti.h" ] && [ -n "$cupti" ]; then
  gen="$build/poison-shared" && mkdir -p "$gen"
  "$cuda/bin/nvcc" -ptx -arch=compute_90 "$root/scripts/poison-shared/kernel.cu" -o "$gen/kernel.ptx"
  { echo 'static const char keig_poison_shared_ptx[] = R"PTX('; cat "$gen/kernel.ptx"; echo ')PTX";'; } > "$gen/kernel_ptx.h"
  g++ -O2 -fPIC -shared -I"$gen" -I"$cuda/include" "$root/scripts/poison-shared/poison.cpp" \
    -o "$stage/lib/libpoison-shared.so" "$(ls "$cuda"/lib*/stubs/libcuda.so | head -n 1)" "$cupti"
  cp -L "$cupti" "$stage/lib/"
fi
cp "$root/scripts/device-check.sh" "$stage/"
# The device tool carries at most 64 MiB: ship one compressed archive.
tar -C "$root" -cJf "$root/.device.tar.xz" .device
du -sh "$stage" "$root/.device.tar.xz"
