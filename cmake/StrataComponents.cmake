# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Usage requirements of Strata's GPU and interop components, shared by the build tree (add_subdirectory,
# CMakeLists.txt) and the installed package (StrataConfig.cmake), so that both give a consumer the same
# strata::cuda, strata::hip and strata::kokkos. Installed next to StrataConfig.cmake.
#
# Each _strata_setup_<component>(<target>) fills in an INTERFACE target (a plain one in the build tree, an
# IMPORTED one in the package) from the dependency's targets, which the caller has already found. They
# run in the consumer's CMake, so every choice that depends on the consumer's toolchain (CMake version,
# HIP compiler version) is made there, not when Strata was installed.
#
# Variables a consumer may set before find_package(Strata) / add_subdirectory:
#   STRATA_CUDA_ARCHITECTURES  CUDA targets for .cu sources that link strata::cuda (default 80;90a;100a);
#                              OFF: add none, leave it to the target's CUDA_ARCHITECTURES.
#   STRATA_HIP_ARCHITECTURES   AMD targets for HIP sources that link strata::hip (default gfx90a;gfx942,
#                              gfx940 instead of gfx942 on a clang older than 17); OFF: add none.
# The list in effect is also on the target, as its STRATA_CUDA_ARCHITECTURES / STRATA_HIP_ARCHITECTURES
# property (a target property, not a usage requirement: read it with get_target_property).
include_guard(GLOBAL)

set(_STRATA_DEFAULT_CUDA_ARCHITECTURES "80;90a;100a")  # strata/arch: sm80, sm90a, sm100a
set(_STRATA_DEFAULT_HIP_ARCHITECTURES "gfx90a;gfx942")  # strata/arch: gfx90a, gfx942

# ---- strata::cuda = strata::strata + CUDA::cudart + C++20 and the target list for CUDA sources ---------
function(_strata_setup_cuda target)
  if(NOT DEFINED STRATA_CUDA_ARCHITECTURES)
    set(STRATA_CUDA_ARCHITECTURES ${_STRATA_DEFAULT_CUDA_ARCHITECTURES})
  endif()
  target_link_libraries(${target} INTERFACE strata::strata CUDA::cudart)
  # CMake learnt nvcc's -std=c++20 in 3.26; before that cuda_std_20 is an unknown feature and would fail
  # the consumer's generate step, so older CMake gets the flag itself. nvcc takes the last -std it sees
  # (with a warning when the consumer asked for another), and compile options come after CMake's own.
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.26)
    target_compile_features(${target} INTERFACE cuda_std_20)
  else()
    target_compile_options(${target} INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
  endif()
  # An interface target cannot set its consumer's CUDA_ARCHITECTURES property, so the targets travel as
  # compile options: real code for each, plus PTX for the last so a newer GPU can still JIT it. They add
  # to whatever the consumer's own CUDA_ARCHITECTURES asks for (set it OFF to build for these alone).
  set(gencode)
  set(last)
  set(archs ${STRATA_CUDA_ARCHITECTURES})
  if(archs MATCHES "^(OFF|off)$")  # the documented "add none"
    set(archs "")
  endif()
  foreach(arch IN LISTS archs)
    if(NOT arch MATCHES "^[0-9]+[af]?$")
      message(FATAL_ERROR "STRATA_CUDA_ARCHITECTURES: '${arch}' is not a CUDA architecture such as 80 or 90a "
                          "(the list was '${STRATA_CUDA_ARCHITECTURES}'; OFF adds none)")
    endif()
    list(APPEND gencode "--generate-code=arch=compute_${arch},code=sm_${arch}")
    set(last ${arch})
  endforeach()
  if(last)
    list(APPEND gencode "--generate-code=arch=compute_${last},code=compute_${last}")
    target_compile_options(${target} INTERFACE "$<$<COMPILE_LANGUAGE:CUDA>:${gencode}>")
    # Device linking (separable compilation, device LTO) must see the same targets.
    target_link_options(${target} INTERFACE "$<DEVICE_LINK:${gencode}>")
  endif()
  set_property(TARGET ${target} PROPERTY STRATA_CUDA_ARCHITECTURES "${STRATA_CUDA_ARCHITECTURES}")
endfunction()

# The HIP compiler in use: CMake's HIP language if enabled, else hipcc as the C++ compiler (the usual way
# on CMake < 3.28 with Debian/Ubuntu's ROCm layout). Sets <out_kind> to HIP, CXX or "" (none found).
function(_strata_hip_compiler out_kind out_version)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("HIP" IN_LIST languages)
    set(${out_kind} HIP PARENT_SCOPE)
    set(${out_version} "${CMAKE_HIP_COMPILER_VERSION}" PARENT_SCOPE)
  elseif("CXX" IN_LIST languages AND CMAKE_CXX_COMPILER MATCHES "(^|/)hipcc[^/]*$")
    set(${out_kind} CXX PARENT_SCOPE)
    set(${out_version} "${CMAKE_CXX_COMPILER_VERSION}" PARENT_SCOPE)  # hipcc reports its clang
  else()
    set(${out_kind} "" PARENT_SCOPE)
    set(${out_version} "" PARENT_SCOPE)
  endif()
endfunction()

# ---- strata::hip = strata::strata + the HIP runtime + the offload targets for HIP sources --------------
function(_strata_setup_hip target)
  _strata_hip_compiler(kind clang_version)
  if(NOT DEFINED STRATA_HIP_ARCHITECTURES)
    set(STRATA_HIP_ARCHITECTURES ${_STRATA_DEFAULT_HIP_ARCHITECTURES})
    # gfx942 reached LLVM in 17 (ROCm 5.7); Debian 12's clang 15 knows gfx940, the same CDNA3 ISA that
    # Strata builds with the gfx942 descriptor (docs/design.md, departure 8).
    if(clang_version AND clang_version VERSION_LESS 17)
      list(TRANSFORM STRATA_HIP_ARCHITECTURES REPLACE "^gfx942$" "gfx940")
    endif()
  endif()
  # hip::host: libamdhip64 and the __HIP_PLATFORM_AMD__ definitions, without hip::device's -x hip (which
  # would turn every C++ source of the consumer into HIP).
  target_link_libraries(${target} INTERFACE strata::strata hip::host)
  set(offload)
  set(archs ${STRATA_HIP_ARCHITECTURES})
  if(archs MATCHES "^(OFF|off)$")  # the documented "add none"
    set(archs "")
  endif()
  foreach(arch IN LISTS archs)
    if(NOT arch MATCHES "^gfx[0-9a-f]+")
      message(FATAL_ERROR "STRATA_HIP_ARCHITECTURES: '${arch}' is not an AMD GPU target such as gfx90a "
                          "(the list was '${STRATA_HIP_ARCHITECTURES}'; OFF adds none)")
    endif()
    list(APPEND offload "--offload-arch=${arch}")
  endforeach()
  if(offload)
    # HIP sources: those of CMake's HIP language, and C++ sources when hipcc is the C++ compiler (hipcc
    # compiles .cpp as HIP). Always explicit: without --offload-arch hipcc asks rocm_agent_enumerator for
    # the GPUs of the build machine. Linking through hipcc gets them too (it links the device code).
    if(kind STREQUAL "CXX")
      target_compile_options(${target} INTERFACE "$<$<COMPILE_LANGUAGE:HIP,CXX>:${offload}>")
      target_link_options(${target} INTERFACE "$<$<LINK_LANGUAGE:CXX>:${offload}>")
    else()
      target_compile_options(${target} INTERFACE "$<$<COMPILE_LANGUAGE:HIP>:${offload}>")
      target_link_options(${target} INTERFACE "$<$<LINK_LANGUAGE:HIP>:${offload}>")
    endif()
  endif()
  set_property(TARGET ${target} PROPERTY STRATA_HIP_ARCHITECTURES "${STRATA_HIP_ARCHITECTURES}")
endfunction()

# ---- strata::kokkos = strata::strata + Kokkos::kokkos ----------------------------------------------------
# The interop headers come with the Kokkos issue; the target exists now so that consumers can be written
# against it.
function(_strata_setup_kokkos target)
  target_link_libraries(${target} INTERFACE strata::strata)
  # Debian 12's Kokkos 3.4 (libtrilinos-kokkos-dev) exports Kokkos::kokkos with the include directory
  # <prefix>/lib/include, which does not exist (the headers are in <prefix>/include/trilinos, which its
  # Kokkos_INCLUDE_DIRS gets right), and any target linking it fails at generate time. Rather than edit
  # the system's files, Strata then takes Kokkos::kokkos's usage requirements over, with the include
  # directories that exist plus Kokkos_INCLUDE_DIRS, and leaves the broken target alone.
  get_target_property(includes Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  set(good_includes)
  set(broken FALSE)
  foreach(dir IN LISTS includes)
    if(dir MATCHES "\\$<" OR EXISTS "${dir}")  # generator expressions cannot be checked here: trust them
      list(APPEND good_includes "${dir}")
    else()
      set(broken TRUE)
    endif()
  endforeach()
  if(NOT broken)
    target_link_libraries(${target} INTERFACE Kokkos::kokkos)
    return()
  endif()
  foreach(dir IN LISTS Kokkos_INCLUDE_DIRS)
    if(EXISTS "${dir}")
      list(APPEND good_includes "${dir}")
    endif()
  endforeach()
  if(NOT good_includes)
    message(FATAL_ERROR "Kokkos::kokkos (from ${Kokkos_DIR}) names include directories that do not exist "
                        "(${includes}) and Kokkos_INCLUDE_DIRS (${Kokkos_INCLUDE_DIRS}) gives none either")
  endif()
  message(STATUS "Strata: Kokkos::kokkos from ${Kokkos_DIR} names a missing include directory (${includes}); "
                 "strata::kokkos uses ${good_includes} instead")
  target_include_directories(${target} SYSTEM INTERFACE ${good_includes})
  get_target_property(libraries Kokkos::kokkos INTERFACE_LINK_LIBRARIES)
  if(libraries)
    # Its link interface also carries a stray "-DKOKKOS_DEPENDENCE" marker, meaningless to a linker.
    list(FILTER libraries EXCLUDE REGEX "^-D")
    target_link_libraries(${target} INTERFACE ${libraries})
  endif()
  foreach(property INTERFACE_COMPILE_DEFINITIONS INTERFACE_COMPILE_OPTIONS INTERFACE_COMPILE_FEATURES
                   INTERFACE_LINK_OPTIONS INTERFACE_LINK_DIRECTORIES)
    get_target_property(value Kokkos::kokkos ${property})
    if(value)
      set_property(TARGET ${target} APPEND PROPERTY ${property} "${value}")
    endif()
  endforeach()
endfunction()
