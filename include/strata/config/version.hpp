// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/config/version.hpp -- library version (kept in step with project() in CMakeLists.txt).
#pragma once

#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 1
#define STRATA_VERSION_PATCH 0
#define STRATA_VERSION_STRING "0.1.0"
