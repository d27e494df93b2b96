// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one Catch2 main shared by every test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
