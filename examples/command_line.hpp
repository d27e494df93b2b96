// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/command_line.hpp -- the examples' command lines: argv walked flag by flag, numbers read
// with a range, and the host build's `--emulate` choice of target. One copy for every example (each
// had its own), so that they all answer a missing value, a bad number or an unknown flag the same
// way: a message that names the program, the flag and the value, and exit status 2, which keeps a
// usage error apart from a run that failed (1).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <strata/config/config.hpp>

namespace strata_examples {

/// `v`, all of it, as a base-10 integer in [lo, hi]; nothing when it is empty, has anything after the
/// number, overflows or lies outside the range. strtoll's own rules otherwise (leading white space and
/// a sign are taken), as the examples always took them.
inline std::optional<long long> parse_integer(const std::string& v, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;  // an overflow is an error, not LLONG_MAX
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end || errno == ERANGE || x < lo || x > hi) return std::nullopt;
  return x;
}

/// `v`, all of it, as a real number in [lo, hi] (strtod's syntax); nothing otherwise, NaN included.
inline std::optional<double> parse_real(const std::string& v, double lo, double hi) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(x >= lo && x <= hi)) return std::nullopt;
  return x;
}

/// Where an example shows its usage text. The examples differed here before this header and each keeps
/// what it did: the ones with `--help` / `-h` print it there (on stdout, exit 0) and end every mistake
/// with "(try --help)"; the ones without (gemm, attention, conv) print it after every mistake.
enum class usage_shown { on_help, after_errors };

/// argv, one flag at a time:
///
///   command_line cl("strata_example_x", "usage: strata_example_x [--m M] [--check]", argc, argv);
///   while (cl.next()) {
///     if (cl.is("--m")) m = cl.integer<int>(1, 8192);
///     else if (cl.is("--check")) check = true;
///     else cl.unknown();
///   }
///
/// Every mistake goes through fail(): "<program>: <why>" on stderr, the usage as usage_shown says,
/// exit status 2. The checks an example makes after the loop call fail() too, so that they read the same.
class command_line {
 public:
  command_line(const char* program, const char* usage, int argc, char** argv,
               usage_shown shown = usage_shown::on_help)
      : program_(program), usage_(usage), argc_(argc), argv_(argv), shown_(shown) {}

  /// Moves to the next argument; false after the last. `--help` / `-h` prints the usage and exits 0
  /// where the example takes them, wherever they stand (a mistake before them is reported first).
  bool next() {
    if (++i_ >= argc_) return false;
    flag_ = argv_[i_];
    if (shown_ == usage_shown::on_help && (flag_ == "--help" || flag_ == "-h")) {
      std::printf("%s\n", usage_);
      std::exit(0);
    }
    return true;
  }

  const char* program() const { return program_; }
  const std::string& flag() const { return flag_; }
  bool is(std::string_view name) const { return flag_ == name; }

  /// The argument after the flag, whatever it is (a value may start with '-': --window -1,0).
  std::string value() {
    if (i_ + 1 >= argc_) fail(flag_ + " needs a value");
    return argv_[++i_];
  }

  /// The flag's value as an integer in [lo, hi], which the caller picks inside Int's range.
  template <class Int = long long>
  Int integer(long long lo, long long hi) {
    return integer<Int>(value(), lo, hi);
  }
  /// `v` (a part of the flag's value, e.g. one side of "1,2") as an integer in [lo, hi].
  template <class Int = long long>
  Int integer(const std::string& v, long long lo, long long hi) const {
    static_assert(std::is_integral_v<Int>, "command_line::integer: Int must be an integer type");
    const auto x = parse_integer(v, lo, hi);
    if (!x)
      fail(flag_ + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
           v + "'");
    return static_cast<Int>(*x);
  }

  /// The flag's value as a real number in [lo, hi].
  double real(double lo, double hi) {
    const std::string v = value();
    const auto x = parse_real(v, lo, hi);
    if (!x)
      fail(flag_ + " must be a number in [" + shortest(lo) + ", " + shortest(hi) + "], got '" + v + "'");
    return *x;
  }

  [[noreturn]] void unknown() const { fail("unknown argument '" + flag_ + "'"); }

  [[noreturn]] void fail(const std::string& why) const {
    if (shown_ == usage_shown::on_help) std::fprintf(stderr, "%s: %s (try --help)\n", program_, why.c_str());
    else std::fprintf(stderr, "%s: %s\n%s\n", program_, why.c_str(), usage_);
    std::exit(2);
  }

 private:
  static std::string shortest(double x) {  // 0.001 and 1e+06, not 0.001000 and 1000000.000000
    char s[32];
    std::snprintf(s, sizeof s, "%g", x);
    return s;
  }

  const char* program_;
  const char* usage_;
  int argc_;
  char** argv_;
  usage_shown shown_;
  int i_ = 0;
  std::string flag_;
};

/// The targets an example's `--emulate` takes, in the order its usage line lists them; the first
/// (the emulator's own, arch::host) is what runs without `--emulate`.
template <class... Targets>
struct targets {};

namespace detail {
/// run(T{}) for the index-th of Targets (index in range).
template <class Target, class... Rest, class Run>
auto run_at(std::size_t index, Run& run) {
  if constexpr (sizeof...(Rest) == 0) {
    return run(Target{});
  } else {
    if (index == 0) return run(Target{});
    return run_at<Rest...>(index - 1, run);
  }
}
}  // namespace detail

/// Runs `run(Target{})` for the target `emulate` names and returns what it returns. On the host
/// backend `emulate` picks one of `Emulated` by name (empty: the first), anything else is an error
/// that lists them; on a GPU build there is one target, the GPU's (Cuda or Hip, each example picks
/// the one its kernels are written for), and any `--emulate` is an error. Errors exit with status 2.
/// Only the targets this build can run are instantiated: a GPU build compiles `run` for its one.
template <class Cuda, class Hip, class... Emulated, class Run>
auto run_on_target(const char* program, const std::string& emulate, targets<Emulated...>, Run&& run) {
#if STRATA_BACKEND_HOST
  static_assert(sizeof...(Emulated) > 0, "run_on_target: name at least one target to emulate");
  constexpr std::string_view names[] = {Emulated::name...};
  constexpr std::size_t count = sizeof...(Emulated);
  const std::string_view want = emulate.empty() ? names[0] : std::string_view(emulate);
  for (std::size_t i = 0; i < count; ++i)
    if (names[i] == want) return detail::run_at<Emulated...>(i, run);
  std::string list;  // "host, sm80, gfx90a or gfx942"
  for (std::size_t i = 0; i < count; ++i)
    list += (i == 0 ? "" : i + 1 < count ? ", " : " or ") + std::string(names[i]);
  std::fprintf(stderr, "%s: --emulate takes %s, got '%s'\n", program, list.c_str(), emulate.c_str());
  std::exit(2);
#else
  if (!emulate.empty()) {
    std::fprintf(stderr, "%s: --emulate needs the host backend; this build runs on the GPU\n", program);
    std::exit(2);
  }
#if STRATA_BACKEND_CUDA
  return run(Cuda{});
#else
  return run(Hip{});
#endif
#endif
}

}  // namespace strata_examples
