# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# strata_add_kernel_library: the runtime-typed entries (strata::gemm and its grouped form, strata::conv
# and its two backward passes, strata::attention, attention_backward and attention_decode,
# strata::embedding_bag and its backward) compiled once into a static library, for frameworks that call
# them from many files. Shared by the build tree (CMakeLists.txt) and the installed package
# (StrataConfig.cmake). docs/performance.md ("Cost of use") has the compile times with and without it.
#
#   strata_add_kernel_library(<name>
#       [CUDA_ARCHITECTURES <arch>...]                  # a CUDA library for these targets, e.g. 90a
#       [HIP_ARCHITECTURES <arch>...]                   # a HIP library for these targets, e.g. gfx942
#       [OPERATORS <gemm|conv|attention|embedding>...]  # default: all four
#       [CUDA_FP8 ON|OFF])                              # fp8 GEMM (STRATA_GEMM_FP8); default ON when every
#                                                       # CUDA architecture is 90a or newer
# With neither architecture list the library is for the host emulator (it links strata::host). The
# caller enables the CUDA or HIP language first (enable_language may not run inside a function).
#
# Files that link <name> see STRATA_PRECOMPILED_ENTRIES=1, under which the operator headers declare the
# library's instances `extern` (strata/ops/<op>/precompiled.hpp): a file calling strata::gemm compiles
# the entry's host code only, not its kernels. Without the library nothing changes: the entry compiles
# what it needs in the calling file. The library's sources are generated here, one per operator and
# dtype family (gemm_f16, conv_wgrad, attention_backward, ...), so that `-j N` and a compiler cache
# help; each is two lines naming the same instance macros the headers declare extern.
include_guard(GLOBAL)

function(strata_add_kernel_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CUDA_FP8" "CUDA_ARCHITECTURES;HIP_ARCHITECTURES;OPERATORS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "strata_add_kernel_library(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(all_operators gemm conv attention embedding)
  if(NOT arg_OPERATORS)
    set(arg_OPERATORS ${all_operators})
  endif()
  foreach(op IN LISTS arg_OPERATORS)
    if(NOT op IN_LIST all_operators)
      message(FATAL_ERROR "strata_add_kernel_library(${name}): OPERATORS takes ${all_operators}, got '${op}'")
    endif()
  endforeach()
  if(arg_CUDA_ARCHITECTURES AND arg_HIP_ARCHITECTURES)
    message(FATAL_ERROR "strata_add_kernel_library(${name}): one backend per library; call it once for "
                        "CUDA_ARCHITECTURES and once for HIP_ARCHITECTURES")
  endif()
  # operator | stem | header | instance macros (a variable of the function: the caller's directory does
  # not see variables of the directory that included this file)
  set(pieces
    "gemm|gemm_f32|strata/gemm.hpp|STRATA_GEMM_F32_INSTANCES()"
    "gemm|gemm_f16|strata/gemm.hpp|STRATA_GEMM_F16_INSTANCES()"
    "gemm|gemm_bf16|strata/gemm.hpp|STRATA_GEMM_BF16_INSTANCES()"
    "gemm|gemm_i8|strata/gemm.hpp|STRATA_GEMM_I8_INSTANCES()"
    "gemm|gemm_fp8|strata/gemm.hpp|STRATA_GEMM_FP8_INSTANCES()"
    "conv|conv_fprop|strata/conv.hpp|STRATA_CONV_FLOAT_INSTANCES(, fprop)"
    "conv|conv_dgrad|strata/conv.hpp|STRATA_CONV_FLOAT_INSTANCES(, dgrad)"
    "conv|conv_wgrad|strata/conv.hpp|STRATA_CONV_FLOAT_INSTANCES(, wgrad)"
    "conv|conv_i8|strata/conv.hpp|STRATA_CONV_I8_INSTANCES(, fprop) STRATA_CONV_I8_INSTANCES(, dgrad) STRATA_CONV_I8_INSTANCES(, wgrad)"
    "attention|attention_forward|strata/attention.hpp|STRATA_ATTENTION_FORWARD_INSTANCE()"
    "attention|attention_backward|strata/attention.hpp|STRATA_ATTENTION_BACKWARD_INSTANCE()"
    "attention|attention_decode|strata/attention.hpp|STRATA_ATTENTION_DECODE_INSTANCE()"
    "embedding|embedding|strata/embedding.hpp|STRATA_EMBEDDING_FORWARD_INSTANCES() STRATA_EMBEDDING_BACKWARD_INSTANCES()")

  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(arg_CUDA_ARCHITECTURES)
    set(backend CUDA)
    set(ext cu)
  elseif(arg_HIP_ARCHITECTURES)
    set(backend HIP)
    set(ext hip)
  else()
    set(backend CXX)
    set(ext cpp)
    if(NOT TARGET strata::host)
      message(FATAL_ERROR "strata_add_kernel_library(${name}): a host-emulator library needs strata::host "
                          "(Boost.Context; Debian: apt-get install libboost-context-dev)")
    endif()
  endif()
  if(NOT backend IN_LIST languages)
    message(FATAL_ERROR "strata_add_kernel_library(${name}): enable the ${backend} language first "
                        "(project(... LANGUAGES ${backend}) or enable_language(${backend}))")
  endif()

  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name}_sources)
  set(sources)
  foreach(piece IN LISTS pieces)
    string(REPLACE "|" ";" fields "${piece}")
    list(GET fields 0 op)
    list(GET fields 1 stem)
    list(GET fields 2 header)
    list(GET fields 3 instances)
    if(NOT op IN_LIST arg_OPERATORS)
      continue()
    endif()
    # file(CONFIGURE) rewrites only a changed file, so a re-configure does not rebuild the library.
    file(CONFIGURE OUTPUT ${dir}/${stem}.${ext} CONTENT
         "// Generated by strata_add_kernel_library(${name}) (StrataKernelLibrary.cmake): one piece of the\n// precompiled entries.\n#include \"${header}\"\n${instances}\n")
    list(APPEND sources ${dir}/${stem}.${ext})
  endforeach()

  add_library(${name} STATIC ${sources})
  target_compile_definitions(${name} PUBLIC STRATA_PRECOMPILED_ENTRIES=1)
  if(backend STREQUAL "CUDA")
    find_package(CUDAToolkit REQUIRED)
    set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${arg_CUDA_ARCHITECTURES}")
    target_link_libraries(${name} PUBLIC strata::strata CUDA::cudart)
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.26)
      target_compile_features(${name} PUBLIC cuda_std_20)
    else()
      target_compile_options(${name} PUBLIC $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
    endif()
    if(NOT DEFINED arg_CUDA_FP8)
      set(arg_CUDA_FP8 ON)
      foreach(arch IN LISTS arg_CUDA_ARCHITECTURES)
        string(REGEX MATCH "^[0-9]+" number "${arch}")
        if(number LESS 90 OR NOT arch MATCHES "^[0-9]+a")
          set(arg_CUDA_FP8 OFF)
        endif()
      endforeach()
    endif()
    if(arg_CUDA_FP8)
      # The GEMM's fp8 tiles (mma.sync e4m3 / e5m2, sm_90a and newer); also visible to the users, whose
      # entry must agree with the library's on what a build can run.
      target_compile_definitions(${name} PUBLIC STRATA_GEMM_FP8)
    endif()
  elseif(backend STREQUAL "HIP")
    set_target_properties(${name} PROPERTIES HIP_ARCHITECTURES "${arg_HIP_ARCHITECTURES}")
    target_link_libraries(${name} PUBLIC strata::strata)
    target_compile_features(${name} PUBLIC hip_std_20)
  else()
    target_link_libraries(${name} PUBLIC strata::host)
  endif()
endfunction()
