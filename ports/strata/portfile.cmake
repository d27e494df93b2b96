# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# vcpkg port of Strata: header-only, so nothing is compiled; the install step lays out the headers and the
# CMake package (share/strata/StrataConfig.cmake after the fixup), exactly as `cmake --install` does.
#
# Source: a published release would use vcpkg_from_github/vcpkg_from_git with its REF and SHA512. Until the
# repository has a public address, the port builds from a local checkout: set STRATA_SOURCE_PATH (in the
# environment, or in a triplet file) to it, or leave it unset when the port sits in that checkout's ports/
# folder (`vcpkg install strata --overlay-ports=<checkout>/ports`). Placeholder for the published form:
#   vcpkg_from_git(OUT_SOURCE_PATH SOURCE_PATH URL https://example.invalid/strata.git REF <commit sha>)
if(DEFINED ENV{STRATA_SOURCE_PATH})
  set(SOURCE_PATH "$ENV{STRATA_SOURCE_PATH}")
elseif(DEFINED STRATA_SOURCE_PATH)
  set(SOURCE_PATH "${STRATA_SOURCE_PATH}")
else()
  get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()
if(NOT EXISTS "${SOURCE_PATH}/include/strata/strata.hpp")
  message(FATAL_ERROR "strata: no Strata checkout at '${SOURCE_PATH}'; set STRATA_SOURCE_PATH to one")
endif()

# Every feature is a usage requirement chosen when the consumer calls find_package(Strata COMPONENTS ...);
# the features only pull in the vcpkg dependencies (boost-context for host, kokkos). The install is the
# same for all of them, and header-only: no debug/release difference.
set(VCPKG_BUILD_TYPE release)
vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DSTRATA_ENABLE_TESTS=OFF
    -DSTRATA_ENABLE_EXAMPLES=OFF
    -DSTRATA_ENABLE_BENCHMARKS=OFF
    -DSTRATA_INSTALL=ON
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME Strata CONFIG_PATH share/cmake/Strata)

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug" "${CURRENT_PACKAGES_DIR}/lib")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
