// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/fuzz/fuzz_driver.cpp -- runs a libFuzzer target without libFuzzer (the normal gcc build and
// CTest): every file named on the command line as one input, then STRATA_FUZZ_RUNS pseudo-random
// inputs (default 300; 0 with files given) of 0..STRATA_FUZZ_MAX_LEN bytes (default 96) from
// STRATA_FUZZ_SEED (default fixed). On a crash or abort it prints the seed, the input's index and
// the input as hex, and how to save it as a reproducer file:
//   echo <hex> | xxd -r -p > crash.bin && ./<target> crash.bin
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::uint8_t> g_input;
std::string g_where;

void print_input() {
  std::fprintf(stderr, "strata fuzz driver: failing input (%s, %zu bytes):\n", g_where.c_str(), g_input.size());
  for (std::uint8_t b : g_input) std::fprintf(stderr, "%02x", b);
  std::fprintf(stderr, "\nreproduce: echo <hex above> | xxd -r -p > crash.bin && <this target> crash.bin\n");
  std::fflush(stderr);
}

extern "C" void on_signal(int sig) {
  print_input();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strtoull(v, nullptr, 0);
}

void run_one() {
  // A copy of exactly `size` bytes, so that a read past the end shows under AddressSanitizer.
  std::vector<std::uint8_t> copy(g_input);
  LLVMFuzzerTestOneInput(copy.empty() ? nullptr : copy.data(), copy.size());
}

}  // namespace

int main(int argc, char** argv) {
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_signal);
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
    g_input.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    g_where = std::string("file ") + argv[i];
    run_one();
  }
  const std::uint64_t runs = env_u64("STRATA_FUZZ_RUNS", argc > 1 ? 0 : 300);
  const std::uint64_t seed = env_u64("STRATA_FUZZ_SEED", 20261129);
  const std::uint64_t max_len = std::max<std::uint64_t>(1, env_u64("STRATA_FUZZ_MAX_LEN", 96));
  std::printf("strata fuzz driver: %s, %llu random inputs, STRATA_FUZZ_SEED=%llu\n", argv[0],
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  std::mt19937_64 g(seed);
  for (std::uint64_t r = 0; r < runs; ++r) {
    g_input.resize(static_cast<std::size_t>(g() % (max_len + 1)));
    for (auto& b : g_input) b = static_cast<std::uint8_t>(g());
    g_where = "STRATA_FUZZ_SEED=" + std::to_string(seed) + " input " + std::to_string(r);
    run_one();
  }
  std::printf("strata fuzz driver: ok\n");
  return 0;
}
