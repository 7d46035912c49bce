// keig: dense symmetric/Hermitian eigensolvers on Kokkos. Umbrella header.
#pragma once

#include "keig/eigh.hpp"
#include "keig/errors.hpp"
#include "keig/options.hpp"
#include "keig/version.hpp"
