// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/fuzz/fuzz_input.hpp -- the fuzzer's bytes as a source of choices (see
// test/property/random_source.hpp): each next() consumes one byte; past the end, zeros. The case
// builders of test/property/*_case.hpp then decode shapes, strides, dtypes, options and corruptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "../property/random_source.hpp"
#include "strata/runtime/error.hpp"

namespace strata_fuzz {

struct byte_source : strata_property::source_base<byte_source> {
  const std::uint8_t* data;
  std::size_t size, at = 0;
  byte_source(const std::uint8_t* d, std::size_t n) : data(d), size(n) {}
  // One byte per choice keeps inputs short and mutations local (every choice range is < 256).
  std::uint64_t next() { return at < size ? data[at++] : 0; }
};

/// With STRATA_FUZZ_VERBOSE set, prints each decoded case before its call (to read a reproducer).
inline void trace(const std::string& what) {
  static const bool on = std::getenv("STRATA_FUZZ_VERBOSE") != nullptr;
  if (on) std::fprintf(stderr, "strata fuzz: case: %s\n", what.c_str()), std::fflush(stderr);
}

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "strata fuzz: FAILURE: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Runs `call`; a strata::invalid_argument or strata::unsupported whose message starts with `op` is a
/// clean rejection (returns false); any other exception aborts. Returns true when the call returned.
template <class F>
bool call_entry(const char* op, F&& call) {
  try {
    call();
    return true;
  } catch (const strata::invalid_argument& e) {
    if (std::string(e.what()).rfind(op, 0) != 0) fail(std::string("invalid_argument not naming ") + op + ": " + e.what());
  } catch (const strata::unsupported& e) {
    if (std::string(e.what()).rfind(op, 0) != 0) fail(std::string("unsupported not naming ") + op + ": " + e.what());
  } catch (const std::exception& e) {
    fail(std::string("unexpected exception from ") + op + ": " + e.what());
  } catch (...) {
    fail(std::string("unexpected non-std exception from ") + op);
  }
  return false;
}

}  // namespace strata_fuzz
