// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/embedding.cpp -- a DLRM-like synthetic workload: T tables of R rows and D columns, a batch
// of B samples with L Zipf-distributed lookups per table, pooled in one table-batched launch.
//
//   strata_example_embedding --tables T --rows R --dim D --batch B --pooling-factor L
//       [--pooling sum|mean|max|none] [--dtype fp32|fp16|bf16|fp8|int8|int4] [--zipf S] [--seed N]
//       [--max-gb G] [--check] [--bench]
//
// --check compares every output element with the double-precision reference (tolerance from the
// dtype and the bag length); the last line is then PASS or FAIL. --bench times repeated launches and
// reports GB/s of useful bytes (rows read, indices, offsets, outputs): on the emulator that is the
// emulator's speed, not a GPU's (benchmark/embedding_bench.cpp measures GPUs).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <strata/embedding.hpp>
#include <strata/ops/embedding/reference.hpp>

#include "command_line.hpp"

namespace E = strata::embedding;

namespace {

/// Row `rank` of a Zipf(s) law over n rows, by inverting the continuous power law (good enough for a
/// synthetic workload; exact for the tail, within a rank or so at the head).
long long zipf(std::mt19937_64& g, long long n, double s) {
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(g);
  double x;
  if (std::fabs(s - 1.0) < 1e-9) x = std::exp(u * std::log(static_cast<double>(n) + 1.0));
  else x = std::pow(u * (std::pow(static_cast<double>(n) + 1.0, 1.0 - s) - 1.0) + 1.0, 1.0 / (1.0 - s));
  const long long r = static_cast<long long>(x) - 1;
  return r < 0 ? 0 : (r >= n ? n - 1 : r);
}

/// Fills one row in `fmt` from random values (quantized formats: min/max row-wise quantization).
void fill_row(E::scalar fmt, unsigned char* row, int dim, std::mt19937_64& g) {
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  std::vector<float> x(static_cast<std::size_t>(dim));
  for (auto& v : x) v = val(g);
  switch (fmt) {
    case E::scalar::fp32: std::memcpy(row, x.data(), 4 * x.size()); break;
    case E::scalar::fp16: for (int c = 0; c < dim; ++c) { auto b = strata::f16(x[c]).bits(); std::memcpy(row + 2 * c, &b, 2); } break;
    case E::scalar::bf16: for (int c = 0; c < dim; ++c) { auto b = strata::bf16(x[c]).bits(); std::memcpy(row + 2 * c, &b, 2); } break;
    case E::scalar::fp8_e4m3: for (int c = 0; c < dim; ++c) row[c] = strata::f8_e4m3(x[c]).bits(); break;
    case E::scalar::int8_rowwise:
    case E::scalar::int4_rowwise: {
      float lo = x[0], hi = x[0];
      for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
      const int levels = fmt == E::scalar::int8_rowwise ? 255 : 15;
      const float scale = hi > lo ? (hi - lo) / levels : 1.f;
      const int payload = fmt == E::scalar::int8_rowwise ? dim : (dim + 1) / 2;
      std::memset(row, 0, static_cast<std::size_t>(payload));
      for (int c = 0; c < dim; ++c) {
        const int q = std::min(levels, std::max(0, static_cast<int>(std::lround((x[c] - lo) / scale))));
        if (fmt == E::scalar::int8_rowwise) row[c] = static_cast<unsigned char>(q);
        else row[c / 2] |= static_cast<unsigned char>(q << ((c & 1) * 4));
      }
      if (fmt == E::scalar::int8_rowwise) {
        std::memcpy(row + dim, &scale, 4);
        std::memcpy(row + dim + 4, &lo, 4);
      } else {
        const auto sb = strata::f16(scale).bits(), bb = strata::f16(lo).bits();
        std::memcpy(row + payload, &sb, 2);
        std::memcpy(row + payload + 2, &bb, 2);
      }
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  long long T = -1, R = -1, D = -1, B = -1, L = -1, seed = 2026;
  double zipf_s = 1.05, max_gb = 8;
  E::pooling mode = E::pooling::sum;
  E::scalar fmt = E::scalar::fp16;
  bool check = false, bench = false;
  strata_examples::command_line cl(
      "strata_example_embedding",
      "usage: strata_example_embedding --tables T --rows R --dim D --batch B --pooling-factor L\n"
      "         [--pooling sum|mean|max|none] [--dtype fp32|fp16|bf16|fp8|int8|int4] [--zipf S]\n"
      "         [--seed N] [--max-gb G] [--check] [--bench]",
      argc, argv);
  while (cl.next()) {
    if (cl.is("--tables")) T = cl.integer(1, 4096);
    else if (cl.is("--rows")) R = cl.integer(1, 1LL << 40);
    else if (cl.is("--dim")) D = cl.integer(1, 1 << 16);
    else if (cl.is("--batch")) B = cl.integer(0, 1LL << 31);
    else if (cl.is("--pooling-factor")) L = cl.integer(0, 1 << 20);
    else if (cl.is("--seed")) seed = cl.integer(0, 1LL << 62);
    else if (cl.is("--zipf")) zipf_s = cl.real(0.0, 10.0);
    else if (cl.is("--max-gb")) max_gb = cl.real(0.001, 1e6);
    else if (cl.is("--check")) check = true;
    else if (cl.is("--bench")) bench = true;
    else if (cl.is("--pooling")) {
      const std::string v = cl.value();
      if (v == "sum") mode = E::pooling::sum;
      else if (v == "mean") mode = E::pooling::mean;
      else if (v == "max") mode = E::pooling::max;
      else if (v == "none") mode = E::pooling::none;
      else cl.fail("--pooling takes sum, mean, max or none, got '" + v + "'");
    } else if (cl.is("--dtype")) {
      // The rows' storage format: int8 and int4 are the row-wise quantized formats (a scale and bias
      // per row); fp8 is e4m3.
      using D = strata::dtype;
      std::string why;
      const auto t = strata::try_parse_dtype(cl.value(), {D::fp32, D::fp16, D::bf16, D::e4m3, D::int8, D::int4}, &why);
      if (!t) cl.fail("--dtype " + why);
      fmt = *E::row_format_of(*t);
    } else {
      cl.unknown();
    }
  }
  if (T < 0 || R < 0 || D < 0 || B < 0 || L < 0)
    cl.fail("--tables, --rows, --dim, --batch and --pooling-factor are required");

  // Memory the run needs (device and, for --check, host copies), computed in floating point so that
  // huge inputs give a clear error instead of an overflow.
  const double row_bytes = static_cast<double>(E::packed_row_bytes(fmt, D));
  const double n_idx = static_cast<double>(T) * B * L;
  const double out_elems = mode == E::pooling::none ? n_idx * D : static_cast<double>(T) * B * D;
  const double bytes = static_cast<double>(T) * R * row_bytes + n_idx * 8 + (static_cast<double>(T) * B + 1) * 8 + out_elems * 4;
  const double need = bytes * (check ? 2.0 : 1.0) + (check ? out_elems * 24 : 0.0);
  if (need > max_gb * 1e9 || n_idx >= 9e15) {
    std::printf("error: this workload needs about %.3g GB (tables %.3g GB, %.3g indices, %.3g output values); the limit is "
                "%.3g GB (raise it with --max-gb if the machine has the memory)\n",
                need / 1e9, static_cast<double>(T) * R * row_bytes / 1e9, n_idx, out_elems, max_gb);
    if (check) std::printf("FAIL\n");
    return 1;
  }

  try {
    strata::stream s;
    std::mt19937_64 g(static_cast<std::uint64_t>(seed));
    const long long N = T * B * L;
    std::vector<std::vector<unsigned char>> host_rows(static_cast<std::size_t>(T));
    std::vector<strata::device_buffer<unsigned char>> dev_rows;
    std::vector<E::table> host_tables, dev_tables;
    const long long rb = E::packed_row_bytes(fmt, D);
    for (long long t = 0; t < T; ++t) {
      auto& h = host_rows[static_cast<std::size_t>(t)];
      h.resize(static_cast<std::size_t>(R * rb));
      for (long long r = 0; r < R; ++r) fill_row(fmt, h.data() + r * rb, static_cast<int>(D), g);
      dev_rows.emplace_back(h.size());
      strata::copy_to_device(s, dev_rows.back().data(), h.data(), h.size());
      host_tables.push_back({.rows = h.data(), .num_rows = R, .dim = static_cast<int>(D)});
      dev_tables.push_back({.rows = dev_rows.back().data(), .num_rows = R, .dim = static_cast<int>(D)});
    }
    std::vector<E::feature> features;
    for (long long t = 0; t < T; ++t) features.push_back({.table = static_cast<int>(t), .batch_size = B});
    std::vector<long long> idx(static_cast<std::size_t>(N)), off(static_cast<std::size_t>(T * B + 1));
    for (long long i = 0; i < N; ++i) idx[static_cast<std::size_t>(i)] = zipf(g, R, zipf_s);
    for (long long b = 0; b <= T * B; ++b) off[static_cast<std::size_t>(b)] = b * L;
    strata::device_buffer<long long> d_idx(idx.size()), d_off(off.size());
    strata::copy_to_device(s, d_idx.data(), idx.data(), idx.size());
    strata::copy_to_device(s, d_off.data(), off.data(), off.size());
    const auto n_out = static_cast<std::size_t>(mode == E::pooling::none ? N * D : T * B * D);
    strata::device_buffer<float> out(n_out);

    E::forward_args a;
    a.in.row_format = fmt;
    a.in.tables = dev_tables;
    a.in.features = features;
    a.in.indices = d_idx.data();
    a.in.num_indices = N;
    a.in.offsets = d_off.data();
    a.in.mode = mode;
    a.output = out.data();
    a.output_format = strata::dtype::fp32;  // the default; fp16 and bf16 outputs are the other choices
    strata::device_buffer<unsigned char> ws(strata::embedding_bag_workspace_size(a));
    const strata::workspace w{ws.data(), ws.size()};

    std::printf("embedding: %lld tables x %lld rows x dim %lld (%s), batch %lld, pooling factor %lld (Zipf %.2f), %s pooling, %s backend\n",
                T, R, D, E::to_string(fmt), B, L, zipf_s, E::to_string(mode), strata::to_string(strata::compiled_backend));
    const auto t0 = std::chrono::steady_clock::now();
    strata::embedding_bag(s, a, w);
    s.synchronize();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  forward: %.2f ms (first call)\n", ms);

    if (bench) {
      const int reps = 5;
      const auto b0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) strata::embedding_bag(s, a, w);
      s.synchronize();
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count() / reps;
      const double useful = n_idx * (row_bytes + 8) + (static_cast<double>(T) * B + 1) * 8 + out_elems * 4;
      std::printf("  bench: %.3f ms per call, %.3f GB/s of useful bytes (%s)\n", sec * 1e3, useful / sec / 1e9,
                  strata::compiled_backend == strata::backend::host ? "emulator speed, not a GPU figure" : "host timer");
    }
    if (!check) return 0;

    std::vector<float> got(n_out);
    strata::copy_to_host(s, got.data(), out.data(), got.size());
    s.synchronize();
    E::forward_args ra = a;
    ra.in.tables = host_tables;
    ra.in.indices = idx.data();
    ra.in.offsets = off.data();
    const auto ref = E::reference::embedding_bag(ra);
    long long bad = 0;
    double worst = 0;
    for (std::size_t i = 0; i < n_out; ++i) {
      // fp32 accumulation: one rounding per term (and per dequantization), relative to sum |term|.
      const double tol = (static_cast<double>(ref.terms[i]) + 4) * std::ldexp(1.0, -23) * ref.mag[i] + 1e-30;
      const double err = std::fabs(got[i] - ref.out[i]);
      if (!(err <= tol)) {
        if (bad < 5) std::printf("  element %zu: got %.9g, reference %.9g, tolerance %.3g\n", i, got[i], ref.out[i], tol);
        ++bad;
      }
      if (ref.mag[i] > 0) worst = std::max(worst, err / ref.mag[i]);
    }
    std::printf("  check: %zu outputs against the double-precision reference, %lld outside tolerance, worst error %.2e of sum|x|\n",
                n_out, bad, worst);
    std::printf("%s\n", bad == 0 ? "PASS" : "FAIL");
    return bad == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    if (check) std::printf("FAIL\n");
    return 1;
  }
}
