# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Build the API reference as CTest's docs.api test does:
#   cmake -DDOXYGEN=<doxygen> -DSOURCE_DIR=<repository> -DOUTPUT_DIR=<folder> -P cmake/RunDoxygen.cmake
# Runs docs/Doxyfile from the repository root with the output moved to OUTPUT_DIR and every warning an
# error (FAIL_ON_WARNINGS: the whole run's warnings are listed, then the exit status is non-zero).
cmake_minimum_required(VERSION 3.24)
foreach(var DOXYGEN SOURCE_DIR OUTPUT_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "RunDoxygen.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ ${SOURCE_DIR}/docs/Doxyfile doxyfile)
# Later assignments win in a Doxyfile.
string(APPEND doxyfile "\nOUTPUT_DIRECTORY = \"${OUTPUT_DIR}\"\nWARN_AS_ERROR = FAIL_ON_WARNINGS\n"
                       "WARN_LOGFILE = \"${OUTPUT_DIR}/warnings.log\"\n")
file(REMOVE_RECURSE ${OUTPUT_DIR})
file(MAKE_DIRECTORY ${OUTPUT_DIR})
file(WRITE ${OUTPUT_DIR}/Doxyfile "${doxyfile}")
execute_process(COMMAND ${DOXYGEN} ${OUTPUT_DIR}/Doxyfile WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc)
file(READ ${OUTPUT_DIR}/warnings.log warnings)
if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  message(FATAL_ERROR "doxygen failed (${rc}); its warnings:\n${warnings}")
endif()
if(NOT EXISTS ${OUTPUT_DIR}/html/index.html)
  message(FATAL_ERROR "doxygen wrote no ${OUTPUT_DIR}/html/index.html")
endif()
message(STATUS "API reference: ${OUTPUT_DIR}/html/index.html")
