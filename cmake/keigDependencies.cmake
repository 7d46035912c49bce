# Finds what keig links against; used by the build and by keigConfig.cmake,
# so a consumer's find_package(keig) resolves the same dependencies.
include_guard(GLOBAL)
include(CMakeFindDependencyMacro)

macro(keig_find_dependencies)
  find_package(Kokkos 3.4 REQUIRED)
  find_package(KokkosKernels REQUIRED)
  if(NOT DEFINED BLA_VENDOR)
    set(BLA_VENDOR OpenBLAS)
  endif()
  find_package(BLAS REQUIRED)
  find_package(LAPACK REQUIRED)
  # OpenBLAS's OpenMP build (Debian: libopenblas0-openmp) runs its threads in
  # the OpenMP pool Kokkos uses. The pthread build keeps its own workers, which
  # spin after every call and take the cores from Kokkos's threads (2 cores,
  # one-stage sytrd at n = 2000: 0.44 s with it, 0.26 s with the OpenMP build).
  # Both builds have the same SONAMEs and symbols, so an RPATH to its
  # directory selects it at run time for the whole process.
  # -DKEIG_OPENBLAS_OPENMP_DIR= (empty) opts out.
  if(Kokkos_ENABLE_OPENMP AND NOT DEFINED KEIG_OPENBLAS_OPENMP_DIR)
    set(_keig_openblas_omp "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp")
    if(EXISTS "${_keig_openblas_omp}/liblapack.so.3" AND EXISTS "${_keig_openblas_omp}/libblas.so.3")
      set(KEIG_OPENBLAS_OPENMP_DIR "${_keig_openblas_omp}" CACHE PATH
          "OpenBLAS's OpenMP build (liblapack.so.3, libblas.so.3, libopenblas.so.0); empty: the system default")
    endif()
  endif()
  if(KEIG_OPENBLAS_OPENMP_DIR AND NOT TARGET keig::openblas_openmp)
    # An RPATH, not a RUNPATH: it also applies to LAPACKE's liblapack/libblas.
    add_library(keig::openblas_openmp INTERFACE IMPORTED)
    set_target_properties(keig::openblas_openmp PROPERTIES INTERFACE_LINK_OPTIONS
      "LINKER:-rpath,${KEIG_OPENBLAS_OPENMP_DIR};LINKER:--disable-new-dtags")
  endif()
  if(NOT TARGET keig::lapacke)
    find_path(KEIG_LAPACKE_INCLUDE_DIR lapacke.h)
    find_library(KEIG_LAPACKE_LIBRARY lapacke)
    if(NOT KEIG_LAPACKE_INCLUDE_DIR OR NOT KEIG_LAPACKE_LIBRARY)
      message(FATAL_ERROR "keig: LAPACKE not found (Debian: liblapacke-dev; or set KEIG_LAPACKE_LIBRARY)")
    endif()
    add_library(keig::lapacke UNKNOWN IMPORTED)
    set_target_properties(keig::lapacke PROPERTIES IMPORTED_LOCATION "${KEIG_LAPACKE_LIBRARY}"
                                                   INTERFACE_INCLUDE_DIRECTORIES "${KEIG_LAPACKE_INCLUDE_DIR}")
  endif()
  if(Kokkos_ENABLE_CUDA)
    find_package(CUDAToolkit REQUIRED)
  endif()
endmacro()
