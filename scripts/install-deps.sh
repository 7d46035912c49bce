#!/usr/bin/env bash
# Installs everything keig needs on Debian 12, cached outside the clone.
#
#   scripts/install-deps.sh [--backend openmp|cuda] [--prefix DIR] [--jobs N]
#
# 1. Debian packages (compilers, CMake, OpenBLAS, LAPACK/LAPACKE, OpenMPI,
#    ScaLAPACK, GoogleTest).
# 2. Kokkos 3.4.01 and Kokkos Kernels 3.4.01 from Debian's `trilinos` source
#    package (the only Kokkos source the archive serves), built for the chosen
#    backend into  $PREFIX/<backend>  (default prefix: ~/.cache/keig-deps).
#    The CUDA build applies the patches in scripts/patches/ (CUDA 13, Hopper).
# A finished step leaves a stamp file, so a second run costs seconds.
set -euo pipefail

backend=openmp
prefix="${KEIG_DEPS_PREFIX:-$HOME/.cache/keig-deps}"
jobs="$(nproc)"
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$backend" in openmp|cuda) ;; *) echo "install-deps.sh: --backend must be openmp or cuda, got '$backend'" >&2; exit 2 ;; esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kokkos_version=3.4.01
src="$prefix/src"
install="$prefix/$backend"
build="$prefix/build-$backend"
log="$prefix/logs"
mkdir -p "$src" "$install" "$log"

say() { printf '[keig-deps] %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# ---------------------------------------------------------------- 1. packages
packages=(build-essential cmake pkg-config dpkg-dev xz-utils
          libopenblas-dev libopenblas0-openmp liblapack-dev liblapacke-dev
          libopenmpi-dev openmpi-bin libscalapack-openmpi-dev libgtest-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > "$log/apt.log"
fi

# ------------------------------------------------ 2. Kokkos sources (trilinos)
kokkos_src="$src/kokkos"
kk_src="$src/kokkos-kernels"
if [ ! -f "$src/.sources-$kokkos_version" ]; then
  say "fetching Debian's trilinos source package (Kokkos $kokkos_version)"
  # deb-src entries derived from the system's own deb entries (no host names here).
  srclist=/etc/apt/sources.list.d/keig-deb-src.sources
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && [ ! -f "$srclist" ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | as_root tee "$srclist" > /dev/null
    as_root apt-get update -qq
  fi
  tmp="$src/download"
  rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$tmp" && apt-get source --download-only -qq trilinos > "$log/apt-source.log" 2>&1)
  orig="$(ls "$tmp"/trilinos_*.orig.tar.* | head -n 1)"
  rm -rf "$kokkos_src" "$kk_src" "$tmp/unpack" && mkdir -p "$tmp/unpack"
  tar -xf "$orig" -C "$tmp/unpack" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  mv "$tmp"/unpack/*/packages/kokkos "$kokkos_src"
  mv "$tmp"/unpack/*/packages/kokkos-kernels "$kk_src"
  grep -q "KOKKOS_VERSION_MINOR 4" "$kokkos_src/CMakeLists.txt" ||
    grep -q "Kokkos_VERSION_MINOR 4" "$kokkos_src/CMakeLists.txt" ||
    { echo "install-deps.sh: unexpected Kokkos version in $orig" >&2; exit 1; }
  rm -rf "$tmp"
  touch "$src/.sources-$kokkos_version"
fi

# ------------------------------------------------------ 3. build and install
stamp="$install/.keig-deps-$kokkos_version"
if [ -f "$stamp" ]; then
  say "cached: Kokkos + Kokkos Kernels ($backend) in $install"
  exit 0
fi

# Work on private copies so that patches never touch the shared sources.
work="$build/src"
rm -rf "$build" && mkdir -p "$work"
cp -r "$kokkos_src" "$work/kokkos"
cp -r "$kk_src" "$work/kokkos-kernels"

common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$install"
        -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
if [ "$backend" = openmp ]; then
  kokkos_opts=(-DCMAKE_CXX_COMPILER=g++ -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON)
  kk_opts=(-DCMAKE_CXX_COMPILER=g++)
else
  # kokkos-NN-*.patch apply to Kokkos, kokkos-kernels-NN-*.patch to Kokkos Kernels
  # (the first glob must not pick up the second set).
  for p in "$here"/patches/kokkos-[0-9]*.patch; do
    say "applying $(basename "$p")"
    patch -s -d "$work/kokkos" -p1 < "$p"
  done
  for p in "$here"/patches/kokkos-kernels-[0-9]*.patch; do
    [ -e "$p" ] || continue
    say "applying $(basename "$p")"
    patch -s -d "$work/kokkos-kernels" -p1 < "$p"
  done
  export PATH="/usr/local/cuda/bin:$PATH"
  nvcc_wrapper="$work/kokkos/bin/nvcc_wrapper"
  kokkos_opts=(-DCMAKE_CXX_COMPILER="$nvcc_wrapper" -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_OPENMP=ON
               -DKokkos_ENABLE_SERIAL=OFF -DKokkos_ARCH_HOPPER90=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON)
  kk_opts=(-DCMAKE_CXX_COMPILER="$install/bin/nvcc_wrapper"
           -DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
           -DKokkosKernels_INST_MEMSPACE_CUDAUVMSPACE=OFF)
fi

say "building Kokkos $kokkos_version ($backend); log: $log/kokkos-$backend.log"
cmake -S "$work/kokkos" -B "$build/kokkos" "${common[@]}" "${kokkos_opts[@]}" > "$log/kokkos-$backend.log" 2>&1
cmake --build "$build/kokkos" -j "$jobs" >> "$log/kokkos-$backend.log" 2>&1
cmake --install "$build/kokkos" >> "$log/kokkos-$backend.log" 2>&1

# A small explicit-instantiation set: the scalars keig calls Kokkos Kernels
# with, LayoutLeft only, size_t offsets; other types instantiate on demand.
say "building Kokkos Kernels $kokkos_version ($backend, ~10 min on 2 cores); log: $log/kokkos-kernels-$backend.log"
cmake -S "$work/kokkos-kernels" -B "$build/kokkos-kernels" "${common[@]}" "${kk_opts[@]}" \
  -DKokkos_ROOT="$install" \
  -DKokkosKernels_INST_DOUBLE=ON -DKokkosKernels_INST_FLOAT=OFF \
  -DKokkosKernels_INST_COMPLEX_DOUBLE=ON -DKokkosKernels_INST_COMPLEX_FLOAT=OFF \
  -DKokkosKernels_INST_LAYOUTLEFT=ON -DKokkosKernels_INST_LAYOUTRIGHT=OFF \
  -DKokkosKernels_INST_OFFSET_SIZE_T=ON -DKokkosKernels_INST_OFFSET_INT=OFF \
  -DKokkosKernels_INST_ORDINAL_INT=ON -DKokkosKernels_INST_ORDINAL_INT64_T=OFF \
  -DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON \
  -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF \
  > "$log/kokkos-kernels-$backend.log" 2>&1
cmake --build "$build/kokkos-kernels" -j "$jobs" >> "$log/kokkos-kernels-$backend.log" 2>&1
cmake --install "$build/kokkos-kernels" >> "$log/kokkos-kernels-$backend.log" 2>&1

rm -rf "$build"
touch "$stamp"
say "installed Kokkos + Kokkos Kernels ($backend) in $install"
