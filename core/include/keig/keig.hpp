// keig: dense symmetric/Hermitian eigensolvers on Kokkos. Umbrella header.
#pragma once

#include "keig/eigh.hpp"
#include "keig/errors.hpp"
#include "keig/options.hpp"
#include "keig/version.hpp"
#include "keig/views/workspace.hpp"  // allocate_matrix_aligned: the fastest layout for A, B and Z
