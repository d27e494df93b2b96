# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Helpers for Strata's own tests. Not installed.
#
#   strata_add_test(NAME <name> SOURCES <files...> [LABELS <labels...>] [LIBS <targets...>] [TIMEOUT <s>])
# builds one Catch2 v2 executable and registers it with CTest under <name>. Split tests by parameter
# into several executables to bound compile memory on the 2-core CI machine.
#
# Label `sanitize`: the tests CI runs again under ASan + UBSan and under the race detector (.ci/run).
# Building all of them twice more does not fit CI's time on 2 cores, so CI builds the target
# strata_sanitize_tests (these tests only) in those presets; scripts/reliability runs every test.
find_package(Catch2 2 REQUIRED)  # Debian: apt-get install catch2

# Optimization of the test executables in optimized builds. -O1, not the build type's -O3: the tests
# instantiate every kernel configuration for several targets, and their compile time, not their run
# time, is what CI spends on 2 cores. test/embedding/forward_test.cpp with GCC 12 (2026-12-04): 45 s at
# -O1, 115 s at -O2, 132 s at -O3; the test ran in 0.09 s against 0.08 s. Empty: the build type's flags.
set(STRATA_TEST_OPT_FLAGS "-O1" CACHE STRING "Optimization flags of the test executables in optimized builds")

# STRATA_TEST_SUBSET=parts (preset clang15): only the tests of the library's parts, not the operators'
# (labels ops and property, whose executables compile every kernel of an operator). CI builds this
# subset with clang 15 to keep the README's tested minimum true for under 3 minutes of CPU cold (a few
# seconds with a warm ccache); the race-check build compiles operator tests with clang 15 as well.
# Empty: every test.
set(STRATA_TEST_SUBSET "" CACHE STRING "Which tests to register: empty (all) or parts (all but labels ops and property)")

if(NOT TARGET strata_sanitize_tests)
  add_custom_target(strata_sanitize_tests)
endif()

add_library(strata_catch_main OBJECT ${CMAKE_CURRENT_LIST_DIR}/../test/catch_main.cpp)
target_link_libraries(strata_catch_main PUBLIC Catch2::Catch2)

if(STRATA_ENABLE_RACECHECK)
  # clang 15+: trace-loads/trace-stores (clang 14) and std::source_location over libstdc++ (clang 15).
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS 15)
    message(FATAL_ERROR "STRATA_ENABLE_RACECHECK needs clang 15 or newer (-fsanitize-coverage=trace-loads,"
                        "trace-stores and std::source_location); this is ${CMAKE_CXX_COMPILER_ID} "
                        "${CMAKE_CXX_COMPILER_VERSION}. Configure with -DCMAKE_CXX_COMPILER=clang++-15 "
                        "(Debian 12: apt-get install clang-15)")
  endif()
  set(strata_racecheck_flags -fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores)
  target_compile_options(strata_catch_main PRIVATE ${strata_racecheck_flags})
endif()

function(strata_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LABELS;LIBS" ${ARGN})
  # The race-check build runs the operator tests (label ops) and the detector's own (label racecheck).
  if(STRATA_ENABLE_RACECHECK)
    if(NOT "ops" IN_LIST T_LABELS AND NOT "racecheck" IN_LIST T_LABELS)
      return()
    endif()
    list(APPEND T_LABELS racecheck)
  endif()
  if(STRATA_TEST_SUBSET STREQUAL "parts" AND ("ops" IN_LIST T_LABELS OR "property" IN_LIST T_LABELS))
    return()
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE strata::host strata_catch_main Catch2::Catch2 ${T_LIBS})
  target_compile_options(${T_NAME} PRIVATE -Wall -Wextra)
  if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$" AND STRATA_TEST_OPT_FLAGS)
    target_compile_options(${T_NAME} PRIVATE ${STRATA_TEST_OPT_FLAGS})
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 reports false -Wrestrict overlaps inside std::string concatenation at -O2 (GCC PR 105329).
    target_compile_options(${T_NAME} PRIVATE -Wno-restrict)
  endif()
  if(STRATA_ENABLE_RACECHECK)
    target_compile_options(${T_NAME} PRIVATE ${strata_racecheck_flags})
    target_compile_definitions(${T_NAME} PRIVATE STRATA_RACE_CHECK=1)
  endif()
  if(STRATA_ENABLE_SANITIZERS)
    target_compile_options(${T_NAME} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=undefined)
    target_compile_definitions(${T_NAME} PRIVATE STRATA_ASAN=1)
    target_link_options(${T_NAME} PRIVATE -fsanitize=address,undefined)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if("sanitize" IN_LIST T_LABELS)
    add_dependencies(strata_sanitize_tests ${T_NAME})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
  # Every Strata test runs with the emulator's host-pointer check on: an entry or launch given memory
  # that no device allocation covers fails, as it would on a GPU (docs/design.md, "Device memory").
  set_property(TEST ${T_NAME} APPEND PROPERTY ENVIRONMENT STRATA_CHECK_HOST_POINTERS=1)
endfunction()
