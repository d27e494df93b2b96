# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# test/compile/compile_check.cmake -- one `compile` test: build every test kernel for one GPU target,
# read the compiler's resource report, and check the generated code for the instructions we claim to
# emit. Run by CTest as
#   cmake -DSTRATA_KIND=nvcc|hipcc -DSTRATA_COMPILER=<path or empty> -DSTRATA_TARGET=sm_90a
#         -DSTRATA_DESCRIPTOR=sm90a -DSTRATA_SOURCE=<kernels.cu> -DSTRATA_INCLUDE=<include dir>
#         -DSTRATA_TEST_DIR=<test dir> -DSTRATA_WORK_DIR=<scratch dir> -DSTRATA_REPORT=<report file>
#         [-DSTRATA_EXTRA_FLAGS="..."] -P compile_check.cmake
# and usable by hand the same way. Fails when:
#   - the translation unit does not compile,
#   - any kernel spills registers (nvcc: "spill stores"/"spill loads"; clang: "SGPRs Spill"/"VGPRs Spill"),
#   - a HIP kernel uses scratch memory without spilling (a private array indexed at run time),
#   - a hallmark instruction is missing from the PTX / GCN assembly,
#   - fewer kernels than expected appear in the report.
# When the compiler is absent (or too old for the target) it prints "SKIP: ..." and exits with 77
# (CTest's SKIP_RETURN_CODE); CMake before 3.29 cannot choose an exit code in script mode, so there
# it exits with 1 and the test's SKIP_REGULAR_EXPRESSION ("SKIP: ") marks it skipped instead.
cmake_minimum_required(VERSION 3.24)

foreach(var STRATA_KIND STRATA_TARGET STRATA_DESCRIPTOR STRATA_SOURCE STRATA_INCLUDE STRATA_TEST_DIR STRATA_WORK_DIR
            STRATA_REPORT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "compile_check.cmake: pass -D${var}=... (see the comment at the top of the script)")
  endif()
endforeach()

set(test_name "compile.${STRATA_TARGET}")

macro(strata_skip reason)
  message("SKIP: ${reason}")
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
    cmake_language(EXIT 77)
  else()
    message(FATAL_ERROR "SKIP: ${reason}")
  endif()
endmacro()

macro(strata_fail)
  message(FATAL_ERROR "${test_name} FAILED: ${ARGN}")
endmacro()

# ---- find the compiler ------------------------------------------------------------------------------
if(STRATA_KIND STREQUAL "nvcc")
  set(install_hint "install the CUDA toolkit")
elseif(STRATA_KIND STREQUAL "hipcc")
  set(install_hint "install ROCm or Debian's hipcc")
else()
  message(FATAL_ERROR "compile_check.cmake: STRATA_KIND must be nvcc or hipcc, got '${STRATA_KIND}'")
endif()
if(NOT STRATA_COMPILER OR NOT EXISTS "${STRATA_COMPILER}")
  strata_skip("${STRATA_KIND} not found; ${install_hint} to run ${test_name}")
endif()

# ---- compiler version, and whether it knows the target -------------------------------------------------
if(STRATA_KIND STREQUAL "nvcc")
  execute_process(COMMAND "${STRATA_COMPILER}" --version OUTPUT_VARIABLE version_text ERROR_VARIABLE version_err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT version_text MATCHES "release ([0-9]+)\\.([0-9]+)")
    strata_fail("'${STRATA_COMPILER} --version' did not report a release: ${version_text}${version_err}")
  endif()
  set(compiler_version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
  # Architecture-specific ('a') targets: sm_90a since CUDA 12.0, sm_100a since CUDA 12.8.
  set(min_version 11.1)
  if(STRATA_TARGET STREQUAL "sm_90a")
    set(min_version 12.0)
  elseif(STRATA_TARGET STREQUAL "sm_100a")
    set(min_version 12.8)
  endif()
  if(compiler_version VERSION_LESS min_version)
    strata_skip("nvcc ${compiler_version} cannot compile for ${STRATA_TARGET} (needs CUDA ${min_version}); install a newer CUDA toolkit to run ${test_name}")
  endif()
  set(compiler_id "nvcc ${compiler_version}")
else()
  # Always pass an offload arch: without one, hipcc enumerates the GPUs of the machine.
  execute_process(COMMAND "${STRATA_COMPILER}" --offload-arch=${STRATA_TARGET} --version
                  OUTPUT_VARIABLE version_text ERROR_VARIABLE version_err RESULT_VARIABLE rc)
  string(REGEX MATCH "HIP version: [^\n]*" hip_version "${version_text}")
  string(REGEX MATCH "clang version [^\n]*" clang_version "${version_text}")
  set(compiler_id "hipcc (${hip_version}, ${clang_version})")
endif()

# ---- compile -------------------------------------------------------------------------------------------
file(REMOVE_RECURSE "${STRATA_WORK_DIR}")
file(MAKE_DIRECTORY "${STRATA_WORK_DIR}")
get_filename_component(source_stem "${STRATA_SOURCE}" NAME_WE)
set(object "${STRATA_WORK_DIR}/${source_stem}.o")
set(common_flags -std=c++20 -O3 "-I${STRATA_INCLUDE}" "-I${STRATA_TEST_DIR}" "-DSTRATA_COMPILE_TARGET=${STRATA_DESCRIPTOR}")
# Optional extra compiler flags, space separated (e.g. to check that the spill check trips:
# -DSTRATA_EXTRA_FLAGS="-maxrregcount=16").
if(DEFINED STRATA_EXTRA_FLAGS AND NOT STRATA_EXTRA_FLAGS STREQUAL "")
  separate_arguments(extra_flags UNIX_COMMAND "${STRATA_EXTRA_FLAGS}")
  list(APPEND common_flags ${extra_flags})
endif()
# Per-source flags: a line `// compile-flags <targets>: -DFOO ...` in the source adds them for matching
# targets (e.g. STRATA_GEMM_FP8 only where the target has fp8 tensor cores).
file(STRINGS "${STRATA_SOURCE}" flag_lines REGEX "^// compile-flags ")
foreach(line IN LISTS flag_lines)
  if(NOT line MATCHES "^// compile-flags ([^:]+): (.+)$")
    message(FATAL_ERROR "compile_check.cmake: malformed line in ${STRATA_SOURCE}: '${line}'")
  endif()
  set(flag_targets "${CMAKE_MATCH_1}")
  set(flag_text "${CMAKE_MATCH_2}")
  if(STRATA_TARGET MATCHES "^(${flag_targets})$")
    separate_arguments(source_flags UNIX_COMMAND "${flag_text}")
    list(APPEND common_flags ${source_flags})
  endif()
endforeach()
if(STRATA_KIND STREQUAL "nvcc")
  string(REPLACE "sm_" "" arch_number "${STRATA_TARGET}")
  # -keep leaves the PTX (<stem>.ptx) of the very compile that ptxas reported on: no second compile.
  # -diag-error 20011,20013,20014,20015: a __host__ function (20013/20015: a constexpr one) called from
  # device code is only a warning to nvcc, which then compiles the kernel to an empty body (found in the
  # depthwise convolution kernel, and in the attention forward on sm_100a: 30 registers, no work).
  set(command "${STRATA_COMPILER}" ${common_flags} -diag-error 20011,20013,20014,20015 -gencode "arch=compute_${arch_number},code=sm_${arch_number}"
              -Xptxas -v -keep --keep-dir "${STRATA_WORK_DIR}" -x cu -c "${STRATA_SOURCE}" -o "${object}")
  set(code_file "${STRATA_WORK_DIR}/${source_stem}.ptx")
else()
  # -save-temps leaves the GCN assembly (<stem>-hip-amdgcn-amd-amdhsa-<arch>.s) in the working directory.
  set(command "${STRATA_COMPILER}" ${common_flags} --offload-arch=${STRATA_TARGET} -Rpass-analysis=kernel-resource-usage
              -save-temps -Wno-unused-command-line-argument -x hip -c "${STRATA_SOURCE}" -o "${object}")
  set(code_file "${STRATA_WORK_DIR}/${source_stem}-hip-amdgcn-amd-amdhsa-${STRATA_TARGET}.s")
endif()

# ---- the compile, or its outputs from the cache ----------------------------------------------------------
# Everything below reads only the compiler's stdout, stderr and the PTX / GCN assembly, so a successful
# compile's three outputs are kept, keyed by every input that can change them: the compiler (path and
# version), the command line (checkout and scratch paths replaced by placeholders, so that another
# clone hits), this script, and the contents of the source, of every header under include/ and test/
# and of examples/ (a coarse key: any header edit recompiles every file, never too little). On a hit the checks
# below run on the kept outputs exactly as on fresh ones. CI runs on the machine the change was made
# on, where the last test run left the cache warm. STRATA_COMPILE_CACHE (environment) picks the
# folder (default ~/.cache/strata/compile-check); STRATA_COMPILE_CACHE=off compiles every time.
string(JOIN " " command_line ${command})
set(cache_dir "$ENV{STRATA_COMPILE_CACHE}")
if(cache_dir STREQUAL "" AND DEFINED ENV{HOME})
  set(cache_dir "$ENV{HOME}/.cache/strata/compile-check")
endif()
if(cache_dir MATCHES "^(off|OFF|0)$")
  set(cache_dir "")
endif()
if(cache_dir)
  get_filename_component(checkout "${STRATA_INCLUDE}" DIRECTORY)
  string(REPLACE "${STRATA_WORK_DIR}" "<work>" key_text "${STRATA_COMPILER}|${compiler_id}|${command_line}")
  string(REPLACE "${checkout}" "<checkout>" key_text "${key_text}")
  file(SHA256 "${CMAKE_CURRENT_LIST_FILE}" script_hash)
  string(APPEND key_text "|script ${script_hash}")
  # examples/: tutorial_kernels.cu includes examples/warp_matmul.cpp.
  file(GLOB_RECURSE key_inputs RELATIVE "${checkout}" "${STRATA_INCLUDE}/*.hpp" "${STRATA_TEST_DIR}/*.hpp"
       "${checkout}/examples/*.hpp" "${checkout}/examples/*.cpp")
  list(SORT key_inputs)
  file(RELATIVE_PATH source_rel "${checkout}" "${STRATA_SOURCE}")
  foreach(input IN LISTS source_rel key_inputs)
    file(SHA256 "${checkout}/${input}" input_hash)
    string(APPEND key_text "|${input} ${input_hash}")
  endforeach()
  string(SHA256 key "${key_text}")
  string(SUBSTRING "${key}" 0 24 key)
  set(cache_entry "${cache_dir}/${source_stem}-${STRATA_TARGET}-${key}")
endif()
if(cache_dir AND EXISTS "${cache_entry}/done")
  file(READ "${cache_entry}/out" out)
  file(READ "${cache_entry}/err" err)
  file(READ "${cache_entry}/code" code)
  file(READ "${cache_entry}/compile_ms" compile_ms)
  message("${test_name}: compiler outputs from the cache ${cache_entry} (inputs unchanged since a compile of ${compile_ms} ms)")
  set(from_cache " (outputs from the compile cache)")
else()
  string(TIMESTAMP t0 "%s%f")
  execute_process(COMMAND ${command} WORKING_DIRECTORY "${STRATA_WORK_DIR}" OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  string(TIMESTAMP t1 "%s%f")
  math(EXPR compile_ms "(${t1} - ${t0}) / 1000")
  if(NOT rc EQUAL 0)
    message("${out}${err}")
    strata_fail("the compile failed (exit ${rc}):\n  ${command_line}")
  endif()
  if(NOT EXISTS "${code_file}")
    strata_fail("the compiler left no ${code_file}:\n  ${command_line}")
  endif()
  file(READ "${code_file}" code)
  set(from_cache "")
  if(cache_dir)
    # One entry per source and target: older keys of the same test are dropped. "done" is written last,
    # so an interrupted store is never read.
    file(GLOB stale LIST_DIRECTORIES true "${cache_dir}/${source_stem}-${STRATA_TARGET}-*")
    if(stale)
      file(REMOVE_RECURSE ${stale})
    endif()
    file(WRITE "${cache_entry}/out" "${out}")
    file(WRITE "${cache_entry}/err" "${err}")
    file(WRITE "${cache_entry}/code" "${code}")
    file(WRITE "${cache_entry}/compile_ms" "${compile_ms}")
    file(WRITE "${cache_entry}/done" "")
  endif()
endif()

# ---- parse the resource report ---------------------------------------------------------------------------
find_program(CXXFILT c++filt)
function(short_kernel_name mangled out_var)
  # Trampolines are strata::<backend>::detail::kernel_entry<Kernel, Params, Target>; report the kernel.
  set(name "${mangled}")
  if(CXXFILT)
    execute_process(COMMAND "${CXXFILT}" "${mangled}" OUTPUT_VARIABLE name OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  if(name MATCHES "kernel_entry(_bounded)?<strata_test::([A-Za-z0-9_]+)")
    set(name "${CMAKE_MATCH_2}")
  elseif(name MATCHES "kernel_entry(_bounded)?<(.*)$")
    # A library kernel launched from a host entry (a source that compiles the entry itself): the
    # trampoline's arguments are <Kernel, Kernel::params, Target>, so Kernel is the text before the
    # first "::params, " less the ", <Kernel>" repeat; then the namespaces go, for a readable table.
    set(rest "${CMAKE_MATCH_2}")
    string(FIND "${rest}" "::params, " cut)
    if(cut GREATER 0)
      string(SUBSTRING "${rest}" 0 ${cut} pair)
      string(LENGTH "${pair}" n)
      math(EXPR n "(${n} - 2) / 2")
      string(SUBSTRING "${pair}" 0 ${n} name)
    endif()
    string(REGEX REPLACE "(strata::|ops::gemm::|ops::conv::|ops::|arch::|mma::|epilogue::|order::|detail::)" "" name "${name}")
    string(REGEX REPLACE "chain<alpha_beta<([A-Za-z0-9_:]+)>, bias_activation, convert_to<([A-Za-z0-9_:]+), \\(overflow\\)0> ?>"
           "entry_epilogue<\\2>" name "${name}")
    string(REGEX REPLACE "chain<dequantize, alpha_beta<([A-Za-z0-9_:]+)>, bias_activation, convert_to<([A-Za-z0-9_:]+), \\(overflow\\)0> ?>"
           "entry_epilogue_fp8<\\2>" name "${name}")
    string(REGEX REPLACE "group<\\(axis\\)0, 0>, " "" name "${name}")
  endif()
  set(${out_var} "${name}" PARENT_SCOPE)
endfunction()

# Shared-memory layout bytes of each kernel, published by the source as device globals (STRATA_REPORT_SHARED).
if(STRATA_KIND STREQUAL "nvcc")
  string(REGEX MATCHALL "\\.u64 strata_report_shared_[A-Za-z0-9_]+( = [0-9]+)?;" shared_entries "${code}")
  foreach(entry IN LISTS shared_entries)
    string(REGEX MATCH "strata_report_shared_([A-Za-z0-9_]+)( = ([0-9]+))?" _ "${entry}")
    set(value "${CMAKE_MATCH_3}")
    if(value STREQUAL "")
      set(value 0)  # zero-initialized globals carry no initializer in PTX
    endif()
    set(shared_${CMAKE_MATCH_1} "${value}")
  endforeach()
else()
  string(REGEX MATCHALL "strata_report_shared_[A-Za-z0-9_]+:[ \t\n]+\\.quad[ \t]+[0-9]+" shared_entries "${code}")
  foreach(entry IN LISTS shared_entries)
    string(REGEX MATCH "strata_report_shared_([A-Za-z0-9_]+):[ \t\n]+\\.quad[ \t]+([0-9]+)" _ "${entry}")
    set(shared_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endforeach()
endif()

set(report_text "${out}${err}")
string(REPLACE ";" "," report_text "${report_text}")
string(REPLACE "\n" ";" report_lines "${report_text}")
set(kernels "")
set(failures "")
if(STRATA_KIND STREQUAL "nvcc")
  set(current "")
  foreach(line IN LISTS report_lines)
    # ptxas notes that it had to serialize wgmmas or fence them itself (C7510, C7519, ...): a register
    # write between a kernel's wgmma_fence and its wgmmas, or an accumulator touched while in flight.
    # The kernel then runs, slower than its source says; name the kernel and the note.
    if(line MATCHES "\\((C75[0-9][0-9])\\) (.*(wgmma|GMMA).*) in function '([^']+)'")
      set(note_code "${CMAKE_MATCH_1}")
      set(note_function "${CMAKE_MATCH_4}")
      string(REGEX REPLACE " in around line [0-9]+" "" note_text "${CMAKE_MATCH_2}")
      short_kernel_name("${note_function}" note_kernel)
      list(APPEND failures "ptxas (${note_code}) in ${note_kernel}: ${note_text}")
    endif()
    if(line MATCHES "Compiling entry function '([^']+)'")
      short_kernel_name("${CMAKE_MATCH_1}" current)
      list(APPEND kernels "${current}")
    elseif(current AND line MATCHES "([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads")
      set(stack_${current} "${CMAKE_MATCH_1}")
      set(spill_st_${current} "${CMAKE_MATCH_2}")
      set(spill_ld_${current} "${CMAKE_MATCH_3}")
    elseif(current AND line MATCHES "Used ([0-9]+) registers")
      set(regs_${current} "${CMAKE_MATCH_1}")
      set(barriers_${current} 0)
      if(line MATCHES "used ([0-9]+) barriers")
        set(barriers_${current} "${CMAKE_MATCH_1}")
      endif()
      set(smem_${current} 0)
      if(line MATCHES "([0-9]+) bytes smem")
        set(smem_${current} "${CMAKE_MATCH_1}")
      endif()
    endif()
  endforeach()
else()
  set(current "")
  foreach(line IN LISTS report_lines)
    if(line MATCHES "Function Name: ([^ ]+)")
      short_kernel_name("${CMAKE_MATCH_1}" current)
      if(NOT current IN_LIST kernels)  # a remark may repeat; keep each kernel once
        list(APPEND kernels "${current}")
      endif()
    elseif(current AND line MATCHES "remark: .*(SGPRs|VGPRs|AGPRs|SGPRs Spill|VGPRs Spill|ScratchSize \\[bytes/lane\\]|Occupancy \\[waves/SIMD\\]|LDS Size \\[bytes/block\\]): ([0-9]+)")
      set(key "${CMAKE_MATCH_1}")
      set(value "${CMAKE_MATCH_2}")
      string(REGEX REPLACE " \\[.*" "" key "${key}")
      string(REPLACE " " "_" key "${key}")
      set(${key}_${current} "${value}")
    endif()
  endforeach()
endif()

# ---- what the source declares -------------------------------------------------------------------------
# Each compiled source states its own expectations in comment lines (target regex matched against the
# whole STRATA_TARGET, e.g. "sm_.*" or "sm_90a|sm_100a" or "gfx.*"):
#   // compile-expect-kernels <targets>: name_kernel other_kernel ...
#   // compile-expect-code <targets>: <what it shows> = <regex over the PTX / GCN assembly>
#   // compile-expect-kernel-count <targets>: N    exactly N kernels (a source that compiles a whole
#                                                  host entry, whose kernels have no strata_test names)
set(expected "")
set(expected_count "")
set(hallmarks "")
file(STRINGS "${STRATA_SOURCE}" declarations REGEX "^// compile-expect-(kernels|kernel-count|code) ")
foreach(line IN LISTS declarations)
  if(NOT line MATCHES "^// compile-expect-(kernels|kernel-count|code) ([^:]+): (.+)$")
    strata_fail("malformed declaration in ${STRATA_SOURCE}: '${line}'")
  endif()
  set(kind "${CMAKE_MATCH_1}")
  set(targets "${CMAKE_MATCH_2}")
  set(body "${CMAKE_MATCH_3}")
  if(NOT STRATA_TARGET MATCHES "^(${targets})$")
    continue()
  endif()
  if(kind STREQUAL "kernels")
    string(REGEX REPLACE "[ \t]+" ";" names "${body}")
    list(APPEND expected ${names})
  elseif(kind STREQUAL "kernel-count")
    set(expected_count "${body}")
  else()
    if(NOT body MATCHES "^(.+[^ ]) += +(.+)$")
      strata_fail("compile-expect-code needs '<what> = <regex>': '${line}'")
    endif()
    list(APPEND hallmarks "${CMAKE_MATCH_1}=${CMAKE_MATCH_2}")
  endif()
endforeach()
if(NOT expected AND expected_count STREQUAL "")
  strata_fail("${STRATA_SOURCE} declares no kernels for ${STRATA_TARGET} (// compile-expect-kernels ...)")
endif()
list(LENGTH kernels kernel_count)
if(NOT expected_count STREQUAL "" AND NOT kernel_count EQUAL expected_count)
  list(APPEND failures "the compiler reported ${kernel_count} kernels, the source declares ${expected_count} (compile-expect-kernel-count): update the count if the entry's dispatch changed on purpose")
endif()
foreach(k IN LISTS expected)
  if(NOT k IN_LIST kernels)
    list(APPEND failures "kernel ${k} is missing from the compiler's resource report")
  endif()
endforeach()

# ---- the table ---------------------------------------------------------------------------------------
function(pad text width out_var)
  string(LENGTH "${text}" n)
  set(s "${text}")
  while(n LESS width)
    string(APPEND s " ")
    math(EXPR n "${n} + 1")
  endwhile()
  set(${out_var} "${s}" PARENT_SCOPE)
endfunction()

set(table "")
if(STRATA_KIND STREQUAL "nvcc")
  string(APPEND table "| kernel | registers | spill stores (B) | spill loads (B) | stack (B) | barriers | shared layout (B) |\n")
  string(APPEND table "|---|---:|---:|---:|---:|---:|---:|\n")
  foreach(k IN LISTS kernels)
    string(REGEX REPLACE "_kernel$" "" tag "${k}")
    set(layout "${shared_${tag}}")
    if(layout STREQUAL "")
      set(layout "?")
    endif()
    string(APPEND table "| ${k} | ${regs_${k}} | ${spill_st_${k}} | ${spill_ld_${k}} | ${stack_${k}} | ${barriers_${k}} | ${layout} |\n")
    if(NOT "${spill_st_${k}}" STREQUAL "0" OR NOT "${spill_ld_${k}}" STREQUAL "0")
      list(APPEND failures "${k} spills registers: ${spill_st_${k}} bytes spill stores, ${spill_ld_${k}} bytes spill loads")
    endif()
  endforeach()
else()
  string(APPEND table "| kernel | VGPRs | AGPRs | SGPRs | VGPR spill | SGPR spill | scratch (B/lane) | occupancy (waves/SIMD) | shared layout (B) |\n")
  string(APPEND table "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
  foreach(k IN LISTS kernels)
    string(REGEX REPLACE "_kernel$" "" tag "${k}")
    set(layout "${shared_${tag}}")
    if(layout STREQUAL "")
      set(layout "?")
    endif()
    string(APPEND table "| ${k} | ${VGPRs_${k}} | ${AGPRs_${k}} | ${SGPRs_${k}} | ${VGPRs_Spill_${k}} | ${SGPRs_Spill_${k}} | ${ScratchSize_${k}} | ${Occupancy_${k}} | ${layout} |\n")
    if(NOT "${VGPRs_Spill_${k}}" STREQUAL "0" OR NOT "${SGPRs_Spill_${k}}" STREQUAL "0")
      list(APPEND failures "${k} spills registers: ${VGPRs_Spill_${k}} VGPRs and ${SGPRs_Spill_${k}} SGPRs")
    elseif(NOT "${ScratchSize_${k}}" STREQUAL "0")
      # No spill but scratch: a private array the compiler could not keep in registers (an accumulator
      # indexed at run time), read and written in memory.
      list(APPEND failures "${k} uses ${ScratchSize_${k}} bytes of scratch per lane without spilling: a private array lives in memory")
    endif()
  endforeach()
endif()

# ---- hallmark instructions ------------------------------------------------------------------------------
set(hallmark_text "")
foreach(h IN LISTS hallmarks)
  string(FIND "${h}" "=" eq)
  string(SUBSTRING "${h}" 0 ${eq} what)
  math(EXPR rest "${eq} + 1")
  string(SUBSTRING "${h}" ${rest} -1 regex)
  string(REGEX MATCHALL "${regex}" found "${code}")
  list(LENGTH found count)
  if(count EQUAL 0)
    list(APPEND failures "hallmark '${what}' (/${regex}/) not found in ${code_file}")
    string(APPEND hallmark_text "- MISSING ${what}: /${regex}/\n")
  else()
    list(GET found 0 example)
    string(APPEND hallmark_text "- ${what}: ${count} x `${example}`\n")
  endif()
endforeach()

# ---- write the report ---------------------------------------------------------------------------------
set(report "## ${test_name}: ${STRATA_DESCRIPTOR} descriptor, ${compiler_id}\n\n")
get_filename_component(source_name "${STRATA_SOURCE}" NAME)
string(APPEND report "Compile of test/compile/${source_name}: ${compile_ms} ms (one target, host and device passes)${from_cache}.\n")
string(APPEND report "Shared layout = static shared_storage padded to 128 B (dynamic shared memory comes on top at launch);\n")
string(APPEND report "the trampoline declares it as one dynamic array, so the compiler's own shared/LDS figure is 0.\n\n")
string(APPEND report "${table}\nHallmark instructions in ${code_file}:\n${hallmark_text}")
file(WRITE "${STRATA_REPORT}" "${report}")
message("${report}")
message("Report written to ${STRATA_REPORT}")

if(failures)
  string(REPLACE ";" "\n  - " failure_text "${failures}")
  strata_fail("\n  - ${failure_text}")
endif()
message("${test_name}: passed")
