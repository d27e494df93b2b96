// benchmark/embedding_bench.cpp -- GB/s of the table-batched embedding-bag forward against the
// device's copy bandwidth, measured in the same run. Build it as CUDA (or HIP) for GPU numbers:
// times come from device events there; on the host backend from a steady clock (emulator speed).
//
//   strata_bench_embedding [--tables T] [--rows R] [--dim D] [--batch B] [--pooling-factor L]
//                          [--dtype fp32|fp16|int8] [--reps N]
//
// Useful bytes per call: every looked-up row (row bytes, quantization parameters included), the
// indices and offsets, and the pooled output; the copy ceiling: a device-to-device copy of a buffer
// of the same size (read + write counted). Issue 7 asks for >= 80% of the copy bandwidth for dims
// >= 64. torch_embedding_bag.py beside this file runs PyTorch's embedding_bag on the same shapes.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
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
  const E::scalar fmt = dt == "fp32" ? E::scalar::fp32 : dt == "int8" ? E::scalar::int8_rowwise : E::scalar::fp16;
  try {
    strata::stream s;
    const long long rb = E::packed_row_bytes(fmt, D);
    std::vector<strata::device_buffer<unsigned char>> rows;
    std::vector<E::table> tables;
    std::vector<E::feature> features;
    std::vector<unsigned char> init(static_cast<std::size_t>(R * rb), 0x11);  // finite in every format
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
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
