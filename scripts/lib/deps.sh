# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# shellcheck shell=bash
# Shared by scripts/test and scripts/demo (sourced, not run): find the tools and libraries Strata's build
# needs, and install what is missing on Debian/Ubuntu.
#
#   strata_ensure_deps <item...>   items: cmake ninja cxx catch2 boost-context
#       Missing items are installed with apt-get when running as root on Debian/Ubuntu; otherwise the
#       exact command to run is printed and the script exits with status 1.
#       cxx: exports CXX when the default g++ is older than 12 but a newer g++-N is installed.
#   strata_note_optional benchmark  prints a note when Google Benchmark (optional) is missing.
#   strata_jobs                     number of CPUs, for -j.
#   strata_sass_tools <checkout>   installs cuobjdump (PyPI) into build/sass-tools for the sass tests.
#
# STRATA_SKIP_DEPS=1 skips the checks (for toolchains in non-standard places, found by CMake itself).

strata_min_gxx=12
strata_min_cmake=3.24  # cmake_minimum_required in CMakeLists.txt and CMakePresets.json

strata_say() { printf 'strata: %s\n' "$*" >&2; }

strata_jobs() { nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2; }

# Any of the shell patterns matches an existing path.
strata_exists() {
  local pattern path
  for pattern in "$@"; do
    for path in $pattern; do
      [[ -e $path ]] && return 0
    done
  done
  return 1
}

# version_ge A B: A >= B for dotted versions.
strata_version_ge() { [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" == "$2" ]]; }

strata_have_cmake() {
  command -v cmake >/dev/null || return 1
  local v
  v=$(cmake --version | sed -n '1s/[^0-9]*\([0-9][0-9.]*\).*/\1/p')
  if ! strata_version_ge "$v" "$strata_min_cmake"; then
    strata_say "cmake $v is too old: Strata needs $strata_min_cmake or newer (https://cmake.org/download/)"
    return 1
  fi
}

strata_have_ninja() { command -v ninja >/dev/null || command -v ninja-build >/dev/null; }

# Major version of a GNU compiler, or nothing.
strata_gxx_major() { "$1" -dumpversion 2>/dev/null | cut -d. -f1; }

# A C++ compiler new enough: $CXX if set (trusted if it is not GCC), else g++, else the newest g++-N.
strata_have_cxx() {
  local cxx major
  if [[ -n ${CXX:-} ]]; then
    command -v "$CXX" >/dev/null || { strata_say "CXX=$CXX is not an executable"; return 1; }
    "$CXX" --version 2>/dev/null | grep -qiE 'g\+\+|gcc' || return 0
    major=$(strata_gxx_major "$CXX")
    [[ -n $major && $major -ge $strata_min_gxx ]] && return 0
    strata_say "CXX=$CXX is GCC $major; Strata needs GCC $strata_min_gxx or newer"
    return 1
  fi
  for cxx in g++ g++-14 g++-13 g++-12; do
    command -v "$cxx" >/dev/null || continue
    major=$(strata_gxx_major "$cxx")
    if [[ -n $major && $major -ge $strata_min_gxx ]]; then
      [[ $cxx == g++ ]] || { export CXX=$cxx; strata_say "using CXX=$cxx (g++ is older than $strata_min_gxx)"; }
      return 0
    fi
  done
  return 1
}

# Catch2 v2: its single header (v3 has none) and its CMake package.
strata_have_catch2() {
  strata_exists /usr/include/catch2/catch.hpp /usr/local/include/catch2/catch.hpp &&
    strata_exists '/usr/lib/cmake/Catch2/Catch2Config.cmake' '/usr/lib/*/cmake/Catch2/Catch2Config.cmake' \
      '/usr/share/cmake/Catch2/Catch2Config.cmake' '/usr/local/lib/cmake/Catch2/Catch2Config.cmake' \
      '/usr/local/lib/*/cmake/Catch2/Catch2Config.cmake' '/usr/local/share/cmake/Catch2/Catch2Config.cmake'
}

# Boost.Context: the CMake package CMakeLists.txt asks for (find_package(Boost CONFIG COMPONENTS context)).
strata_have_boost_context() {
  strata_exists '/usr/lib/*/cmake/boost_context-*/boost_context-config.cmake' \
    '/usr/lib/cmake/boost_context-*/boost_context-config.cmake' \
    '/usr/local/lib/cmake/boost_context-*/boost_context-config.cmake' \
    '/usr/local/lib/*/cmake/boost_context-*/boost_context-config.cmake'
}

strata_have_benchmark() {
  strata_exists '/usr/lib/*/cmake/benchmark/benchmarkConfig.cmake' '/usr/lib/cmake/benchmark/benchmarkConfig.cmake' \
    '/usr/local/lib/cmake/benchmark/benchmarkConfig.cmake' '/usr/local/lib/*/cmake/benchmark/benchmarkConfig.cmake'
}

# The Debian/Ubuntu package that provides a GCC >= 12: plain g++ where the distribution's default is new
# enough (Debian 12, Ubuntu 23.04+) or unknown, else g++-12 (Ubuntu 22.04).
strata_gxx_package() {
  local candidate
  candidate=$(apt-cache policy g++ 2>/dev/null | sed -n 's/^ *Candidate: *\([0-9]*:\)\{0,1\}\([0-9]*\).*/\2/p')
  if [[ -n $candidate && $candidate -lt $strata_min_gxx ]]; then echo g++-12; else echo g++; fi
}

strata_package_for() {
  case $1 in
    cmake) echo cmake ;;
    ninja) echo ninja-build ;;
    cxx) strata_gxx_package ;;
    catch2) echo catch2 ;;
    boost-context) echo libboost-context-dev ;;
    benchmark) echo libbenchmark-dev ;;
    *) strata_say "internal error: unknown dependency '$1'"; return 2 ;;
  esac
}

strata_check() { "strata_have_${1//-/_}"; }

strata_ensure_deps() {
  [[ ${STRATA_SKIP_DEPS:-0} == 1 ]] && return 0
  local item missing=() packages=()
  for item in "$@"; do
    strata_check "$item" || missing+=("$item")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0

  strata_say "missing: ${missing[*]}"
  local root=0 apt=0
  [[ $(id -u) -eq 0 ]] && root=1
  command -v apt-get >/dev/null && apt=1
  # Update first: which g++ package to ask for depends on the package lists (empty on a fresh image).
  if ((root && apt)); then DEBIAN_FRONTEND=noninteractive apt-get update; fi
  for item in "${missing[@]}"; do packages+=("$(strata_package_for "$item")"); done
  if ((!apt)); then
    strata_say "install the equivalents of these Debian packages and retry: ${packages[*]}"
    exit 1
  fi
  if ((!root)); then
    strata_say "install them with:"
    printf '  sudo apt-get install -y %s\n' "${packages[*]}" >&2
    exit 1
  fi
  strata_say "installing: ${packages[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"
  # g++-12 may have been installed next to an older g++: strata_have_cxx picks it up and exports CXX.
  for item in "${missing[@]}"; do
    strata_check "$item" || { strata_say "still missing after apt-get install: $item"; exit 1; }
  done
}

strata_note_optional() {
  local item=$1 what=$2
  [[ ${STRATA_SKIP_DEPS:-0} == 1 ]] && return 0
  strata_check "$item" ||
    strata_say "optional: $what needs $(strata_package_for "$item") (sudo apt-get install -y $(strata_package_for "$item"))"
}

# The SASS tools of the `sass` tests (test/sass, tools/sass): cuobjdump and the nvdisasm it runs, from
# NVIDIA's PyPI wheels, in a virtual environment under build/ (never the user's Python). Only where nvcc is installed (without
# it the sass tests skip anyway) and cuobjdump is not already on the PATH. A failure is a note, not
# an error: the sass tests then skip, saying what to install. Needs python3 with venv (Debian:
# python3-venv, installed here when running as root).
strata_sass_tools() {
  local root=$1 venv=$1/build/sass-tools
  command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || return 0
  command -v cuobjdump >/dev/null && return 0
  compgen -G "$venv/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm" >/dev/null && return 0
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      apt-get install -y -qq --no-install-recommends python3-venv >/dev/null 2>&1 ||
        (apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv >/dev/null 2>&1) || true
    fi
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
      strata_say "note: the sass tests will skip: they need python3 with venv (sudo apt-get install python3-venv)"
      return 0
    fi
  fi
  strata_say "installing cuobjdump and nvdisasm for the sass tests (pip: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm) into $venv"
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check 'nvidia-cuda-cuobjdump>=13,<14' 'nvidia-cuda-nvdisasm>=13,<14'; } >&2; then
    strata_say "note: could not install nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm from PyPI; the sass tests will skip"
    rm -rf "$venv"
  fi
}
