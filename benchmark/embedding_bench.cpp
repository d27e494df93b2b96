// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// benchmark/embedding_bench.cpp -- GB/s of the table-batched embedding-bag forward against the
// device's copy bandwidth, measured in the same run. Build it as CUDA (or HIP) for GPU numbers:
// times come from device events there; on the host backend from a steady clock (emulator speed).
//
//   strata_bench_embedding [--tables T] [--rows R] [--dim D] [--batch B] [--pooling-factor L]
//                          [--dtype fp32|fp16|bf16|fp8|int8] [--reps N] [--sweep]
//
// --sweep also times the forward kernel under each configuration of `sweep_configs` below (rows in
// flight per lane x accumulators per lane; the tuned defaults live in ops/embedding/config.hpp) and
// a gather probe: the bare random-row read the forward cannot beat (every lookup's row read with
// 16-byte loads, 8 rows in flight per lane, nothing pooled), to tell the kernel's overheads from the
// memory system's limit on random rows of this size.
//
// Useful bytes per call: every looked-up row (row bytes, quantization parameters included), the
// indices and offsets, and the pooled output; the copy ceiling: a device-to-device copy of a buffer
// of the same size (read + write counted). Issue 7 asks for >= 80% of the copy bandwidth for dims
// >= 64. torch_embedding_bag.py beside this file runs PyTorch's embedding_bag on the same shapes.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <strata/embedding.hpp>

#if STRATA_BACKEND_CUDA
#include <cuda_runtime.h>
#elif STRATA_BACKEND_HIP
#include <hip/hip_runtime.h>
#endif

namespace E = strata::embedding;

namespace {

/// Seconds per call of fn(), averaged over `reps` calls after one warm-up.
template <class F>
double time_it(strata::stream& s, int reps, F&& fn) {
  fn();
  s.synchronize();
#if STRATA_BACKEND_CUDA
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, s.native_handle());
  for (int r = 0; r < reps; ++r) fn();
  cudaEventRecord(b, s.native_handle());
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / 1e3 / reps;
#elif STRATA_BACKEND_HIP
  hipEvent_t a, b;
  (void)hipEventCreate(&a);
  (void)hipEventCreate(&b);
  (void)hipEventRecord(a, s.native_handle());
  for (int r = 0; r < reps; ++r) fn();
  (void)hipEventRecord(b, s.native_handle());
  (void)hipEventSynchronize(b);
  float ms = 0;
  (void)hipEventElapsedTime(&ms, a, b);
  (void)hipEventDestroy(a);
  (void)hipEventDestroy(b);
  return ms / 1e3 / reps;
#else
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) fn();
  s.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
#endif
}

/// The configurations --sweep times (max_blocks: the default's).
constexpr E::kernel_config base = E::config_for<E::detail::resolved_target<void>>();
constexpr E::kernel_config sweep_config(int rows_in_flight, int accumulators, bool prefetch) {
  E::kernel_config c = base;
  c.rows_in_flight = rows_in_flight;
  c.accumulators = accumulators;
  c.prefetch_indices = prefetch;
  return c;
}
constexpr E::kernel_config sweep_configs[] = {
    sweep_config(2, 8, false),  sweep_config(2, 8, true),  sweep_config(4, 8, true),  sweep_config(8, 8, true),
    sweep_config(2, 16, false), sweep_config(2, 16, true), sweep_config(4, 16, true), sweep_config(2, 32, true),
};

/// The gather probe: lanes in groups of `row_bytes / 16` (a power of two <= 32) read whole rows
/// idx[0..n) with 16-byte loads, 8 rows in flight per group, and fold them into one word per thread
/// (written so that the loads cannot be dropped).
struct gather_probe {
  static constexpr const char* name = "embedding_gather_probe";
  struct params {
    const unsigned char* rows;
    const long long* idx;
    long long n;
    long long row_bytes;
    int group;
    unsigned* sink;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const long long t = ctx.block().rank() * ctx.block().size() + ctx.block().thread_rank();
    const long long groups = ctx.grid().size() * ctx.block().size() / p.group;
    const long long g = t / p.group;
    const int lane = static_cast<int>(t % p.group);
    unsigned fold = 0;
    for (long long i0 = g * 8; i0 < p.n; i0 += groups * 8) {
      E::detail::vec16 v[8] = {};
      STRATA_UNROLL
      for (int u = 0; u < 8; ++u)
        if (i0 + u < p.n) v[u] = E::detail::load_vec(p.rows + p.idx[i0 + u] * p.row_bytes + lane * 16);
      STRATA_UNROLL
      for (int u = 0; u < 8; ++u) fold ^= v[u].w[0] ^ v[u].w[1] ^ v[u].w[2] ^ v[u].w[3];
    }
    p.sink[t] = fold;
  }
};

long long arg(int argc, char** argv, const char* name, long long def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == name) return std::atoll(argv[i + 1]);
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  const bool gpu = strata::compiled_backend != strata::backend::host;
  const long long T = arg(argc, argv, "--tables", gpu ? 32 : 4), R = arg(argc, argv, "--rows", gpu ? 1000000 : 20000),
                  D = arg(argc, argv, "--dim", 128), B = arg(argc, argv, "--batch", gpu ? 8192 : 256),
                  L = arg(argc, argv, "--pooling-factor", 32);
  const int reps = static_cast<int>(arg(argc, argv, "--reps", gpu ? 20 : 2));
  std::string dt = "fp16";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--dtype") dt = argv[i + 1];
  bool sweep = false, sweep_failed = false;
  for (int i = 1; i < argc; ++i) sweep = sweep || std::string(argv[i]) == "--sweep";
  using DT = strata::dtype;
  std::string why;
  const auto type = strata::try_parse_dtype(dt, {DT::fp32, DT::fp16, DT::bf16, DT::e4m3, DT::int8}, &why);
  if (!type) {
    std::printf("error: --dtype %s\n", why.c_str());
    return 2;
  }
  const E::scalar fmt = *E::row_format_of(*type);  // the rows; int8: row-wise quantized (outputs are fp32)
  try {
    strata::stream s;
    const long long rb = E::packed_row_bytes(fmt, D);
    std::vector<strata::device_buffer<unsigned char>> rows;
    std::vector<E::table> tables;
    std::vector<E::feature> features;
    // Random bytes below 0x40: every value (and every quantization scale and bias) finite and below 2
    // in every format, and no two rows alike, so that the sweep's bit-for-bit comparison means something.
    std::vector<unsigned char> init(static_cast<std::size_t>(R * rb));
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (auto& b : init) x ^= x << 13, x ^= x >> 7, x ^= x << 17, b = static_cast<unsigned char>(x & 0x3F);
    for (long long t = 0; t < T; ++t) {
      rows.emplace_back(static_cast<std::size_t>(R * rb));
      strata::copy_to_device(s, rows.back().data(), init.data(), init.size());
      tables.push_back({.rows = rows.back().data(), .num_rows = R, .dim = static_cast<int>(D)});
      features.push_back({.table = static_cast<int>(t), .batch_size = B});
    }
    const long long N = T * B * L;
    std::vector<long long> idx(static_cast<std::size_t>(N)), off(static_cast<std::size_t>(T * B + 1));
    std::mt19937_64 g(1);
    std::uniform_int_distribution<long long> u(0, R - 1);
    for (auto& i : idx) i = u(g);
    for (long long b = 0; b <= T * B; ++b) off[static_cast<std::size_t>(b)] = b * L;
    strata::device_buffer<long long> di(idx.size()), doff(off.size());
    strata::copy_to_device(s, di.data(), idx.data(), idx.size());
    strata::copy_to_device(s, doff.data(), off.data(), off.size());
    strata::device_buffer<float> out(static_cast<std::size_t>(T * B * D));
    E::forward_args a;
    a.in.row_format = fmt;
    a.in.tables = tables;
    a.in.features = features;
    a.in.indices = di.data();
    a.in.num_indices = N;
    a.in.offsets = doff.data();
    a.in.policy = E::bounds::skip;  // no synchronization per call: time the launches back to back
    a.output = out.data();
    strata::device_buffer<unsigned char> ws(strata::embedding_bag_workspace_size(a));
    const double useful = static_cast<double>(N) * (rb + 8) + static_cast<double>(T * B + 1) * 8 + static_cast<double>(T * B * D) * 4;
    const double t_emb = time_it(s, reps, [&] { strata::embedding_bag_async(s, a, {ws.data(), ws.size()}); });
    // Copy ceiling: device-to-device copy of as many bytes (capped at 1 GiB).
    const std::size_t cb = static_cast<std::size_t>(std::min(useful, 1073741824.0)) / 16 * 16;
    strata::device_buffer<unsigned char> src(cb), dst(cb);
    const double t_copy = time_it(s, reps, [&] { strata::copy_on_device(s, dst.data(), static_cast<const unsigned char*>(src.data()), cb); });
    const double emb_gbs = useful / t_emb / 1e9, copy_gbs = 2.0 * static_cast<double>(cb) / t_copy / 1e9;
    const auto p = strata::get_device_properties();
    std::printf("device: %s (%s backend)\n", p.name.c_str(), strata::to_string(strata::compiled_backend));
    std::printf("embedding_bag %s T=%lld R=%lld D=%lld B=%lld L=%lld: %.3f ms, %.1f GB/s useful\n", E::to_string(fmt), T, R, D, B,
                L, t_emb * 1e3, emb_gbs);
    std::printf("device copy %.1f MB: %.3f ms, %.1f GB/s (read + write)\n", cb / 1e6, t_copy * 1e3, copy_gbs);
    std::printf("ratio to copy bandwidth: %.1f%%%s\n", 100.0 * emb_gbs / copy_gbs, gpu ? "" : " (emulator: not a GPU figure)");
    if (sweep) {
      // Every configuration adds in index order, so each must reproduce the default's output bit for bit.
      const std::size_t no = static_cast<std::size_t>(T * B * D);
      std::vector<float> want(no), got(no);
      strata::copy_to_host(s, want.data(), out.data(), no);
      s.synchronize();
      std::printf("\n| rows in flight | accumulators | prefetch indices | ms | GB/s useful | %% of copy | output |\n"
                  "|---:|---:|---|---:|---:|---:|---|\n");
      const auto one = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
        constexpr E::kernel_config c = sweep_configs[I];
        const double t = time_it(s, reps, [&] { E::detail::embedding_bag_async_with<void, c>(s, a, {ws.data(), ws.size()}); });
        strata::copy_to_host(s, got.data(), out.data(), no);
        s.synchronize();
        const bool same = std::memcmp(want.data(), got.data(), no * sizeof(float)) == 0;
        if (!same) sweep_failed = true;
        std::printf("| %d | %d | %s | %.3f | %.1f | %.1f %% | %s |\n", c.rows_in_flight, c.accumulators, c.prefetch_indices ? "yes" : "no",
                    t * 1e3, useful / t / 1e9, 100.0 * useful / t / 1e9 / copy_gbs, same ? "same" : "DIFFERS");
      };
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (one(std::integral_constant<std::size_t, I>{}), ...);
      }(std::make_index_sequence<std::size(sweep_configs)>{});
      // The gather probe over the same lookups (the first table's rows; row bytes rounded up to 16).
      const long long pb = (rb + 15) / 16 * 16;
      int group = 1;
      while (group * 16 < pb && group < 32) group *= 2;
      if (group * 16 == pb) {
        strata::device_buffer<unsigned char> prow(static_cast<std::size_t>(R * pb));
        strata::device_buffer<unsigned> sink(static_cast<std::size_t>(base.max_blocks) * 256);
        const gather_probe::params gp{prow.data(), di.data(), N, pb, group, sink.data()};
        const double t = time_it(s, reps, [&] { strata::launch(s, {.grid = base.max_blocks, .block = 256}, gather_probe{}, gp); });
        const double bytes = static_cast<double>(N) * pb;
        std::printf("\ngather probe (%lld-byte rows, %d lanes per row, 8 rows in flight per lane): %.3f ms, %.1f GB/s of rows "
                    "(%.1f %% of copy); the forward's row bytes alone at its best configuration are bounded by this\n",
                    pb, group, t * 1e3, bytes / t / 1e9, 100.0 * bytes / t / 1e9 / copy_gbs);
      } else {
        std::printf("\ngather probe: skipped (%lld-byte rows are not 16 x a power of two <= 32)\n", pb);
      }
    }
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  if (sweep_failed) std::printf("error: a sweep configuration's output differs from the default's\n");
  return sweep_failed ? 1 : 0;
}
