# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Packaging test driver, run as `cmake -D... -P ConsumerTest.cmake` by the strata.consumer.* tests
# (test/consumer/CMakeLists.txt). It configures, builds and runs test/consumer/app against Strata with the
# parent build's generator and compiler, offline.
#
#   MODE=package       cmake --install the parent build into a staging prefix, move the prefix (the package
#                      must be relocatable), then find_package(Strata CONFIG REQUIRED [COMPONENTS host]);
#                      also: an incompatible version is refused, and with Boost hidden the package still
#                      provides strata::strata (and refuses COMPONENTS host).
#   MODE=subdirectory  add_subdirectory(<Strata source>), with and without Boost
# With COMPONENT=cuda|hip|kokkos, either mode builds the consumer of that component instead (app/cuda.cu
# with nvcc, app/hip.cpp with hipcc as the C++ compiler, app/kokkos.cpp); GPU programs are built and
# linked but not run (no GPU in CI). In package mode it also checks that a missing dependency fails
# find_package(Strata COMPONENTS <component>) with a message naming it. A component whose toolkit is not
# on this machine prints "SKIP: ..." (the test's SKIP_REGULAR_EXPRESSION).
#
# Inputs: MODE WORK_DIR STRATA_SOURCE_DIR STRATA_BINARY_DIR CONSUMER_SOURCE_DIR EXPECTED_VERSION HOST
#         GENERATOR GENERATOR_PLATFORM GENERATOR_TOOLSET MAKE_PROGRAM CXX_COMPILER CXX_FLAGS BUILD_TYPE CONFIG
#         [COMPONENT CUDA_COMPILER HIPCC KOKKOS_DIR]
cmake_minimum_required(VERSION 3.24)

foreach(var MODE WORK_DIR STRATA_SOURCE_DIR STRATA_BINARY_DIR CONSUMER_SOURCE_DIR EXPECTED_VERSION
            GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "ConsumerTest.cmake: -D${var}=... is required")
  endif()
endforeach()

# step(<name> [EXPECT_FAILURE] [QUIET] [OUTPUT_VARIABLE <var>] COMMAND <args...>): run one command, show its
# output (QUIET: only if it fails), stop the test when its exit status is not the expected one.
function(step name)
  cmake_parse_arguments(S "EXPECT_FAILURE;QUIET" "OUTPUT_VARIABLE" "COMMAND" ${ARGN})
  message(STATUS "[${MODE}] ${name}")
  execute_process(COMMAND ${S_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT S_QUIET OR NOT rc EQUAL 0)
    message("${out}")
  endif()
  if(S_EXPECT_FAILURE AND rc EQUAL 0)
    message(FATAL_ERROR "[${MODE}] ${name}: succeeded but must fail")
  elseif(NOT S_EXPECT_FAILURE AND NOT rc EQUAL 0)
    message(FATAL_ERROR "[${MODE}] ${name}: failed (${rc}): ${S_COMMAND}")
  endif()
  if(S_OUTPUT_VARIABLE)
    set(${S_OUTPUT_VARIABLE} "${out}" PARENT_SCOPE)
  endif()
endfunction()

# skip(<why>): this machine cannot build the component; CMake < 3.29 cannot choose its exit code, so
# the "SKIP: " line is what marks the test skipped.
macro(skip why)
  message("SKIP: ${why}")
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
    cmake_language(EXIT 77)
  endif()
  return()
endmacro()

# What a component needs, and what hides its dependency from find_package (for the negative check).
set(component_args)
set(component_package)
if(NOT DEFINED COMPONENT OR COMPONENT STREQUAL "")
  set(COMPONENT "")
elseif(COMPONENT STREQUAL "cuda")
  if(NOT CUDA_COMPILER OR NOT EXISTS "${CUDA_COMPILER}")
    skip("nvcc not found: install the CUDA toolkit to build the strata::cuda consumer")
  endif()
  set(component_args "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}")
  set(component_package CUDAToolkit)
elseif(COMPONENT STREQUAL "hip")
  if(NOT HIPCC OR NOT EXISTS "${HIPCC}")
    skip("hipcc not found: install ROCm or Debian's hipcc to build the strata::hip consumer")
  endif()
  # CMake < 3.28 cannot use Debian's ROCm as its HIP language; hipcc as the C++ compiler is the way
  # there. Its own flags only: the parent's may be GCC's.
  set(CXX_COMPILER "${HIPCC}")
  set(CXX_FLAGS "")
  set(component_package hip)
elseif(COMPONENT STREQUAL "kokkos")
  if(NOT KOKKOS_DIR OR NOT EXISTS "${KOKKOS_DIR}/KokkosConfig.cmake")
    skip("Kokkos not found: install it (Debian: libtrilinos-kokkos-dev) or pass -DKokkos_DIR to Strata's \
configure to build the strata::kokkos consumer")
  endif()
  set(component_args "-DKokkos_DIR=${KOKKOS_DIR}")
  set(component_package Kokkos)
else()
  message(FATAL_ERROR "COMPONENT must be cuda, hip, kokkos or empty, not '${COMPONENT}'")
endif()
if(COMPONENT)
  # The GPU programs are only built: say so, so that nobody reads a pass as "ran on a GPU".
  list(APPEND component_args -DSTRATA_CONSUMER_COMPONENT=${COMPONENT} -DSTRATA_CONSUMER_HOST=OFF
                             -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
endif()

# The parent build's toolchain, so that the consumer is built the way Strata's own tests are.
set(toolchain -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
              "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
              # Only what this test installed may satisfy find_package, never a user's package registry.
              -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(GENERATOR_PLATFORM)
  list(APPEND toolchain -A "${GENERATOR_PLATFORM}")
endif()
if(GENERATOR_TOOLSET)
  list(APPEND toolchain -T "${GENERATOR_TOOLSET}")
endif()
if(MAKE_PROGRAM)
  list(APPEND toolchain "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

# consumer(<name> <configure args...>): configure, build and run app/ in WORK_DIR/<name>.
function(consumer name)
  set(bin ${WORK_DIR}/${name})
  step("${name}: configure" COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${bin} ${toolchain} ${ARGN}
       OUTPUT_VARIABLE configure_log)
  # Joined into one line: CMake wraps the text of warnings.
  string(REGEX REPLACE "[ \t\r\n]+" " " configure_log "${configure_log}")
  set(configure_log "${configure_log}" PARENT_SCOPE)
  step("${name}: build" COMMAND ${CMAKE_COMMAND} --build ${bin} ${config_args})
  file(STRINGS ${bin}/programs-${CONFIG}.txt programs)
  file(STRINGS ${bin}/built-${CONFIG}.txt built)
  if(NOT programs AND NOT built)
    message(FATAL_ERROR "[${MODE}] ${name}: the consumer registered no program")
  endif()
  foreach(program IN LISTS built)
    if(NOT EXISTS ${program})
      message(FATAL_ERROR "[${MODE}] ${name}: ${program} was not built")
    endif()
    message(STATUS "[${MODE}] ${name}: built and linked ${program}; not run: it needs a GPU")
  endforeach()
  foreach(program IN LISTS programs)
    step("${name}: run ${program}" COMMAND ${program} OUTPUT_VARIABLE out)
    if(NOT out MATCHES "strata-consumer: ok")
      message(FATAL_ERROR "[${MODE}] ${name}: ${program} did not report 'strata-consumer: ok'")
    endif()
    if(program MATCHES "consumer_core" AND NOT out MATCHES "Strata ${EXPECTED_VERSION},.*gfx942 +warp 64")
      message(FATAL_ERROR "[${MODE}] ${name}: ${program} printed the wrong version or target table")
    endif()
  endforeach()
endfunction()

# check_component(<name>): what the component consumer must show besides building: its target list
# reached the compiler.
function(check_component name)
  set(bin ${WORK_DIR}/${name})
  if(NOT COMPONENT MATCHES "^(cuda|hip)$")
    return()
  endif()
  file(READ ${bin}/compile_commands.json commands)
  if(COMPONENT STREQUAL "cuda")
    set(expected "80;90a;100a")
  else()
    set(expected "gfx90a;gfx94[02]")  # gfx940 stands in for gfx942 on clang < 17
  endif()
  if(NOT configure_log MATCHES "strata::${COMPONENT} builds for \\[(${expected})\\]")
    message(FATAL_ERROR "[${MODE}] ${name}: strata::${COMPONENT}'s default targets are not ${expected}")
  endif()
  set(targets ${CMAKE_MATCH_1})
  foreach(target IN LISTS targets)
    if(COMPONENT STREQUAL "cuda")
      set(flag "--generate-code=arch=compute_${target},code=sm_${target}")
    else()
      set(flag "--offload-arch=${target}")
    endif()
    string(FIND "${commands}" "${flag}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "[${MODE}] ${name}: the compiler was not given ${flag}: ${commands}")
    endif()
  endforeach()
  message(STATUS "[${MODE}] ${name}: compiled for ${targets}, from strata::${COMPONENT} alone")
  # Where cuobjdump is at hand, the executable itself must hold code for every target.
  if(COMPONENT STREQUAL "cuda")
    get_filename_component(cuda_bin ${CUDA_COMPILER} DIRECTORY)
    find_program(cuobjdump cuobjdump HINTS ${cuda_bin} NO_DEFAULT_PATH)
    if(cuobjdump)
      file(STRINGS ${bin}/built-${CONFIG}.txt program)
      step("${name}: cuobjdump" QUIET COMMAND ${cuobjdump} --list-elf ${program} OUTPUT_VARIABLE elf)
      foreach(target IN LISTS targets)
        if(NOT elf MATCHES "\\.sm_${target}\\.")
          message(FATAL_ERROR "[${MODE}] ${name}: ${program} has no sm_${target} code: ${elf}")
        endif()
      endforeach()
    endif()
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})

if(COMPONENT)
  set(args -DSTRATA_CONSUMER_MODE=${MODE} ${component_args})
  if(MODE STREQUAL "package")
    set(prefix ${WORK_DIR}/prefix)
    step("install" QUIET COMMAND ${CMAKE_COMMAND} --install ${STRATA_BINARY_DIR} --prefix ${prefix} ${config_args})
    list(APPEND args "-DCMAKE_PREFIX_PATH=${prefix}")
  elseif(MODE STREQUAL "subdirectory")
    list(APPEND args "-DSTRATA_SOURCE_DIR=${STRATA_SOURCE_DIR}")
  else()
    message(FATAL_ERROR "MODE must be package or subdirectory, not '${MODE}'")
  endif()
  consumer(${COMPONENT} ${args})
  check_component(${COMPONENT})
  if(MODE STREQUAL "package")
    # Its dependency missing, find_package(Strata COMPONENTS <component>) must fail and name it.
    # Reconfigures the build above (done with it): the compiler checks are cached, which saves a minute.
    step("${COMPONENT} without ${component_package}: configure must fail" EXPECT_FAILURE QUIET
         COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/${COMPONENT} ${toolchain} ${args}
                 -DCMAKE_DISABLE_FIND_PACKAGE_${component_package}=ON OUTPUT_VARIABLE out)
    if(NOT out MATCHES "${component_package}" OR NOT out MATCHES "component ${COMPONENT}")
      message(FATAL_ERROR "the failure does not name the component and the missing ${component_package}: ${out}")
    endif()
  endif()
  message(STATUS "[${MODE}] ${COMPONENT} consumer test passed")
  return()
endif()

if(MODE STREQUAL "package")
  set(stage ${WORK_DIR}/stage)
  set(prefix ${WORK_DIR}/prefix)
  step("install" QUIET COMMAND ${CMAKE_COMMAND} --install ${STRATA_BINARY_DIR} --prefix ${stage} ${config_args})
  # Relocatable: the package must work from wherever the prefix ends up.
  file(RENAME ${stage} ${prefix})
  if(NOT EXISTS ${prefix}/include/strata/strata.hpp)
    message(FATAL_ERROR "the umbrella header strata/strata.hpp was not installed")
  endif()
  file(GLOB_RECURSE package_files ${prefix}/*.cmake)
  if(NOT package_files MATCHES "StrataConfig.cmake" OR NOT package_files MATCHES "StrataConfigVersion.cmake")
    message(FATAL_ERROR "StrataConfig.cmake / StrataConfigVersion.cmake missing from ${prefix}: ${package_files}")
  endif()
  foreach(f IN LISTS package_files)
    file(READ ${f} text)
    foreach(dir ${STRATA_SOURCE_DIR} ${STRATA_BINARY_DIR} ${stage})
      string(FIND "${text}" "${dir}" at)
      if(at GREATER -1)
        message(FATAL_ERROR "${f} contains the absolute path ${dir}: the package is not relocatable")
      endif()
    endforeach()
  endforeach()

  string(REGEX MATCH "^[0-9]+" major ${EXPECTED_VERSION})
  math(EXPR next_major "${major} + 1")
  set(find_args -DSTRATA_CONSUMER_MODE=package "-DCMAKE_PREFIX_PATH=${prefix}")
  # HOST: the parent build has strata::host, so the installed package must provide it too.
  consumer(default ${find_args} -DSTRATA_CONSUMER_HOST=${HOST} "-DSTRATA_CONSUMER_VERSION=${EXPECTED_VERSION}"
           "-DSTRATA_CONSUMER_REJECT_VERSION=${next_major}.0")
  string(REGEX MATCH "Strata [0-9.]+ found in \\[([^]]*)\\]" found "${configure_log}")
  cmake_path(IS_PREFIX prefix "${CMAKE_MATCH_1}" NORMALIZE from_prefix)
  if(NOT found OR NOT from_prefix)
    message(FATAL_ERROR "find_package(Strata) used '${CMAKE_MATCH_1}', not the package under ${prefix}")
  endif()

  # Without Boost, strata::strata must still work and strata::host must be absent, with a message.
  set(no_boost -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON)
  consumer(without-boost ${find_args} ${no_boost} -DSTRATA_CONSUMER_HOST=OFF -DSTRATA_CONSUMER_EXPECT_NO_HOST=ON)
  if(NOT configure_log MATCHES "strata::host \\(the host emulator\\) is unavailable")
    message(FATAL_ERROR "find_package(Strata) did not say that strata::host is unavailable")
  endif()
  if(HOST)
    # ... and asking for the host component by name must then fail the find_package call.
    step("without-boost, COMPONENTS host: configure must fail" EXPECT_FAILURE
         COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/without-boost-host ${toolchain}
                 ${find_args} ${no_boost} -DSTRATA_CONSUMER_HOST=ON OUTPUT_VARIABLE out)
    if(NOT out MATCHES "Boost")
      message(FATAL_ERROR "the failure does not name the missing dependency (Boost)")
    endif()
  endif()
elseif(MODE STREQUAL "subdirectory")
  set(subdir_args -DSTRATA_CONSUMER_MODE=subdirectory "-DSTRATA_SOURCE_DIR=${STRATA_SOURCE_DIR}")
  consumer(default ${subdir_args} -DSTRATA_CONSUMER_HOST=${HOST})
  # Without Boost a vendored Strata still provides strata::strata, and warns that strata::host is missing.
  consumer(without-boost ${subdir_args} -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON -DSTRATA_CONSUMER_HOST=OFF
           -DSTRATA_CONSUMER_EXPECT_NO_HOST=ON)
  if(NOT configure_log MATCHES "strata::host \\(the host emulator\\) is not defined")
    message(FATAL_ERROR "add_subdirectory(Strata) did not say that strata::host is not defined")
  endif()
else()
  message(FATAL_ERROR "MODE must be package or subdirectory, not '${MODE}'")
endif()
message(STATUS "[${MODE}] consumer test passed")
