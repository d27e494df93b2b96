// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/demo.cpp -- what `scripts/demo` runs: Strata's kernels on the best backend this build has
// (a CUDA or HIP GPU, else the host emulator), each checked against a plain CPU reference.
//
//   strata_demo [--n N] [--emulate host|sm80|sm90a|sm100a|gfx90a|gfx942|gfx950]
//
// --emulate (host backend only) runs the kernels as that GPU target: its warp size (32 or 64),
// shared-memory limit and chiplet dispatch model. The last line is PASS or FAIL.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <strata/strata.hpp>

#include "../test/kernels/block_reduce.hpp"
#include "../test/kernels/transpose.hpp"
#include "../test/kernels/warp_scan.hpp"
#include "command_line.hpp"

namespace arch = strata::arch;
using namespace strata_test;

namespace {

bool all_ok = true;

void report(const char* what, bool ok, double ms, const std::string& detail) {
  std::printf("  %-34s %-4s %9.2f ms  %s\n", what, ok ? "ok" : "FAIL", ms, detail.c_str());
  all_ok = all_ok && ok;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <class Target>
void run_all(long long n) {
  strata::stream s;
  std::mt19937 gen(2026);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);

  {  // block reduction
    std::vector<float> h(static_cast<std::size_t>(n));
    for (auto& v : h) v = dist(gen);
    const int grid = static_cast<int>(std::min<long long>(128, (n + 255) / 256));
    strata::device_buffer<float> in(h.size()), out(grid);
    strata::copy_to_device(s, in.data(), h.data(), h.size());
    const auto t0 = std::chrono::steady_clock::now();
    strata::launch(s, {.grid = grid, .block = 256}, block_reduce_kernel<Target>{}, reduce_params{in.data(), out.data(), n});
    std::vector<float> o(grid);
    strata::copy_to_host(s, o.data(), out.data(), o.size());
    s.synchronize();
    const double ms = ms_since(t0);
    double got = 0, ref = 0, mag = 0;
    for (float v : o) got += v;
    for (float v : h) ref += v, mag += std::fabs(v);
    const double err = std::fabs(got - ref) / (mag > 0 ? mag : 1);
    // Worst-case float rounding relative to sum|x|: one rounding per addition on the longest chain
    // (the thread's grid-stride share, the warp tree, the block's warps), the per-block results being
    // added here in double.
    const double chain = static_cast<double>((n + 256LL * grid - 1) / (256LL * grid)) + 2 * 8;
    const double tol = chain * std::ldexp(1.0, -24) * 1.01;
    char d[160];
    std::snprintf(d, sizeof d, "sum %.6g, reference %.6g, error %.1e of sum|x| (bound %.1e)", got, ref, err, tol);
    report("block reduction", err <= tol, ms, d);
  }
  {  // transpose of a rows x cols matrix that is not a tile multiple
    const int rows = static_cast<int>(std::max<long long>(1, std::min<long long>(n / 97, 4093))), cols = 97;
    std::vector<float> h(static_cast<std::size_t>(rows) * cols);
    for (auto& v : h) v = dist(gen);
    strata::device_buffer<float> in(h.size()), out(h.size());
    strata::copy_to_device(s, in.data(), h.data(), h.size());
    const auto t0 = std::chrono::steady_clock::now();
    strata::launch(s, {.grid = strata::dims((cols + 31) / 32, (rows + 31) / 32), .block = strata::dims(32, 8)},
                   transpose_kernel<Target>{}, transpose_params{in.data(), out.data(), rows, cols});
    std::vector<float> o(h.size());
    strata::copy_to_host(s, o.data(), out.data(), o.size());
    s.synchronize();
    const double ms = ms_since(t0);
    long long wrong = 0;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) wrong += o[static_cast<std::size_t>(c) * rows + r] != h[static_cast<std::size_t>(r) * cols + c];
    report("shared-memory tiled transpose", wrong == 0, ms,
           std::to_string(rows) + " x " + std::to_string(cols) + ", " + std::to_string(wrong) + " wrong elements");
  }
  {  // warp scan
    const int block = 200;  // not a multiple of the warp size: a partial last warp
    std::vector<int> h(static_cast<std::size_t>(n));
    std::uniform_int_distribution<int> id(-100, 100);
    for (auto& v : h) v = id(gen);
    const int grid = static_cast<int>((n + block - 1) / block);
    const int warps = (block + Target::warp_size - 1) / Target::warp_size;
    strata::device_buffer<int> in(h.size()), out(h.size()), mx(static_cast<std::size_t>(grid) * warps);
    strata::device_buffer<unsigned long long> odd(static_cast<std::size_t>(grid) * warps);
    strata::copy_to_device(s, in.data(), h.data(), h.size());
    const auto t0 = std::chrono::steady_clock::now();
    strata::launch(s, {.grid = grid, .block = block}, warp_scan_kernel<Target>{},
                   scan_params{in.data(), out.data(), odd.data(), mx.data(), n});
    std::vector<int> o(h.size());
    strata::copy_to_host(s, o.data(), out.data(), o.size());
    s.synchronize();
    const double ms = ms_since(t0);
    long long wrong = 0;
    for (long long i = 0, acc = 0; i < n; ++i) {
      const long long in_block = i % block;
      if (in_block % Target::warp_size == 0) acc = 0;
      acc += h[i];
      wrong += o[i] != acc;
    }
    report("warp-shuffle scan", wrong == 0, ms,
           "warp size " + std::to_string(Target::warp_size) + ", " + std::to_string(wrong) + " wrong elements");
  }
}

}  // namespace

int main(int argc, char** argv) {
  long long n = 1 << 20;
  std::string emulate = "";
  strata_examples::command_line cl(
      "strata_demo", "usage: strata_demo [--n N] [--emulate host|sm80|sm90a|sm100a|gfx90a|gfx942|gfx950]",
      argc, argv);
  while (cl.next()) {
    if (cl.is("--n")) n = cl.integer(1, 1LL << 28);
    else if (cl.is("--emulate")) emulate = cl.value();
    else cl.unknown();
  }

  try {
    const strata::device_properties p = strata::get_device_properties();
    std::printf("Strata %s demo on the %s backend: %s (%s, %d units, warp %d, %d chiplet(s))\n", STRATA_VERSION_STRING,
                strata::to_string(strata::compiled_backend), p.name.c_str(), p.arch.c_str(), p.multiprocessor_count,
                p.warp_size, p.chiplets);
    // On a GPU the kernels run as sm80 (CUDA) or gfx942 (HIP); the emulator says which target it runs.
    using emulated = strata_examples::targets<arch::host, arch::sm80, arch::sm90a, arch::sm100a, arch::gfx90a,
                                              arch::gfx942, arch::gfx950>;
    strata_examples::run_on_target<arch::sm80, arch::gfx942>(
        cl.program(), emulate, emulated{}, [&](auto target) {
          using Target = decltype(target);
          if (STRATA_BACKEND_HOST)
            std::printf("kernels run as target %s\n", std::string(Target::name).c_str());
          run_all<Target>(n);
        });
  } catch (const std::exception& e) {
    std::printf("error: %s\nFAIL\n", e.what());
    return 1;
  }
  std::printf("%s\n", all_ok ? "PASS" : "FAIL");
  return all_ok ? 0 : 1;
}
