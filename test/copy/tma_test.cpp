// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// TMA (copy/tma.hpp) on the emulator, run as sm90a: boxes of 1 to 3 dimensions land densely in shared
// memory with zeros outside the tensor (negative and past-the-end coordinates), swizzled boxes land in
// the pattern strata::swizzle<3, 3, 3> describes (the GEMM's stage tiles), nothing is there before a
// wait on the barrier, misuse is reported; and the Hopper mainloop's pieces together: two TMA boxes
// (128-byte swizzle) read by four chained wgmmas give A * B, edges zero-filled.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../mma/atom_check.hpp"
#include "tma_kernels.hpp"
#include "strata/copy/tma.hpp"
#include "strata/mma/wgmma.hpp"
#include "strata/tensor/swizzle.hpp"

namespace {

using namespace strata_test;
namespace arch = strata::arch;
namespace copy = strata::copy;
namespace mma = strata::mma;
using strata::bf16;
using Catch::Matchers::Contains;

enum class misuse { none, read_early, wrong_rank, misaligned, too_few_bytes, too_many_bytes };

struct box_params {
  copy::tensor_map map;
  int rank;
  int c[3];
  std::size_t bytes;     // of the box
  unsigned char* out;    // the box's shared-memory image, as it is after the wait
  misuse wrong;
};

/// Thread 0 loads one box with TMA into a 1024-byte aligned stage; every thread waits, then the block
/// copies the stage's bytes out.
struct box_kernel {
  using target = arch::sm90a;
  static constexpr const char* name = "box_kernel";
  struct shared_storage {
    strata::mbarrier bar;
  };
  template <class Ctx>
  void operator()(Ctx& ctx, const box_params& p) const {
    auto& bar = ctx.template shared<shared_storage>().bar;
    unsigned char* dyn = ctx.template dynamic_shared<unsigned char>();
    const auto offset = std::uint32_t(dyn - &ctx.template shared<unsigned char>());
    unsigned char* stage = dyn + (1024 - offset % 1024) % 1024 + (p.wrong == misuse::misaligned ? 64 : 0);
    const int t = ctx.block().thread_rank();
    if (t == 0) bar.init(ctx, 1);
    ctx.block().sync();
    if (t == 0) {
      // The barrier's transaction count must be the box's bytes: announcing 16 fewer completes more
      // than announced; 16 more leaves the phase waiting for bytes that never come.
      const std::size_t announced = p.wrong == misuse::too_few_bytes    ? p.bytes - 16
                                    : p.wrong == misuse::too_many_bytes ? p.bytes + 16
                                                                        : p.bytes;
      bar.arrive_expect_tx(ctx, std::uint32_t(announced));
      if (p.wrong == misuse::wrong_rank) copy::tma_load(ctx, stage, p.map, bar, p.c[0]);
      else if (p.rank == 1) copy::tma_load(ctx, stage, p.map, bar, p.c[0]);
      else if (p.rank == 2) copy::tma_load(ctx, stage, p.map, bar, p.c[0], p.c[1]);
      else copy::tma_load(ctx, stage, p.map, bar, p.c[0], p.c[1], p.c[2]);
    }
    if (p.wrong == misuse::read_early) {
      for (std::size_t i = std::size_t(t); i < p.bytes; i += std::size_t(ctx.block().size())) p.out[i] = stage[i];
      ctx.block().sync();
    }
    bar.wait(ctx, 0);
    if (p.wrong != misuse::read_early)
      for (std::size_t i = std::size_t(t); i < p.bytes; i += std::size_t(ctx.block().size())) p.out[i] = stage[i];
  }
};

/// Runs box_kernel on `map`; returns the stage's bytes.
std::vector<unsigned char> load_box(const copy::tensor_map& map, int rank, std::vector<int> c, std::size_t bytes,
                                    misuse wrong = misuse::none) {
  strata::stream s;
  auto out = poisoned<unsigned char>(s, bytes, 0xA5);
  c.resize(3, 0);
  strata::launch(s, {.grid = 1, .block = 128, .dynamic_shared_bytes = bytes + 2048}, box_kernel{},
                 box_params{map, rank, {c[0], c[1], c[2]}, bytes, out.data(), wrong});
  return to_host(s, out);
}

std::uint16_t bits(bf16 x) {
  std::uint16_t b;
  std::memcpy(&b, &x, 2);
  return b;
}

/// The element (2-byte) at index i of a stage image.
std::uint16_t at(const std::vector<unsigned char>& img, std::size_t i) {
  std::uint16_t v;
  std::memcpy(&v, &img[2 * i], 2);
  return v;
}

std::string error_of(const copy::tensor_map& map, int rank, std::size_t bytes, misuse wrong) {
  try {
    (void)load_box(map, rank, {0, 0, 0}, bytes, wrong);
  } catch (const strata::emulator_error& e) {
    return e.what();
  }
  return "no error";
}

/// D (64 x N) = A[m0 .. m0 + 64) (K <= 64 columns) * B[n0 .. n0 + N)^T, rows past M or N and columns past K
/// zero-filled by the TMA.
template <int N>
void check_tma_wgmma(int M, int Nt, int K, int m0, int n0, std::uint64_t seed, bool reload_early = false) {
  const auto a = random_elements<bf16>(std::size_t(M) * K, seed);
  const auto b = random_elements<bf16>(std::size_t(Nt) * K, seed + 1);
  strata::stream s;
  // Leading dimensions padded to 16 bytes (TMA strides), the padding filled with NaN: never read.
  const int lda = (K + 7) / 8 * 8;
  std::vector<bf16> ap(std::size_t(M) * lda, bf16(NAN)), bp(std::size_t(Nt) * lda, bf16(NAN));
  for (int r = 0; r < M; ++r)
    for (int k = 0; k < K; ++k) ap[std::size_t(r) * lda + k] = a[std::size_t(r) * K + k];
  for (int r = 0; r < Nt; ++r)
    for (int k = 0; k < K; ++k) bp[std::size_t(r) * lda + k] = b[std::size_t(r) * K + k];
  auto da = to_device(s, ap);
  auto db = to_device(s, bp);
  auto dd = poisoned<float>(s, std::size_t(64) * N, NAN);
  const auto ma = copy::make_tensor_map_2d(da.data(), M, K, lda, 64, 64, copy::tma_swizzle::b128);
  const auto mb = copy::make_tensor_map_2d(db.data(), Nt, K, lda, N, 64, copy::tma_swizzle::b128);
  strata::launch(s, {.grid = 1, .block = 128, .dynamic_shared_bytes = tma_wgmma_kernel<N>::dynamic_shared_bytes},
                 tma_wgmma_kernel<N>{}, mainloop_params{ma, mb, m0, n0, dd.data(), reload_early ? 1 : 0});
  const auto d = to_host(s, dd);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      const int r = m0 + i, c = n0 + j;
      if (r < M && c < Nt)
        for (int k = 0; k < K; ++k) {
          const double x = as_double(a[std::size_t(r) * K + k]) * as_double(b[std::size_t(c) * K + k]);
          ref += x;
          mag += std::abs(x);
        }
      INFO("row " << i << " col " << j);
      REQUIRE(std::abs(d[std::size_t(i) * N + j] - ref) <= 66 * 0x1p-23 * mag + 1e-30);
    }
}

}  // namespace

TEST_CASE("TMA: a 2-D box lands densely, zeros outside the tensor", "[copy][tma]") {
  const int rows = 37, cols = 45, ld = 48;  // ld: 96-byte rows, a multiple of 16
  auto h = random_elements<bf16>(std::size_t(rows) * ld, 7);
  strata::stream s;
  auto g = to_device(s, h);
  const auto map = copy::make_tensor_map_2d(g.data(), rows, cols, ld, 16, 24);
  for (const auto& c : std::vector<std::vector<int>>{{8, 4}, {0, 0}, {-5, -3}, {32, 30}, {40, 36}, {60, 50}}) {
    const auto img = load_box(map, 2, c, 16 * 24 * 2);
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 24; ++k) {
        const int gr = c[1] + r, gc = c[0] + k;
        const bool inside = gr >= 0 && gr < rows && gc >= 0 && gc < cols;
        INFO("box at (" << c[0] << ", " << c[1] << "), element (" << r << ", " << k << ")");
        REQUIRE(at(img, std::size_t(r) * 24 + k) == (inside ? bits(h[std::size_t(gr) * ld + gc]) : 0));
      }
  }
}

TEST_CASE("TMA: boxes of 1 and 3 dimensions, strides between planes", "[copy][tma]") {
  strata::stream s;
  auto h = random_elements<float>(4 * 10 * 12, 8);  // 4 planes of 10 rows of 12 floats (48-byte rows)
  auto g = to_device(s, h);
  copy::tma_tensor t;
  t.base = g.data();
  t.element_bytes = 4;
  t.rank = 3;
  t.dims[0] = 11, t.dims[1] = 10, t.dims[2] = 4;  // the 12th float of each row is padding
  t.strides[1] = 12 * 4, t.strides[2] = 10 * 12 * 4;
  t.box[0] = 8, t.box[1] = 3, t.box[2] = 2;
  const auto map = copy::make_tensor_map(t);
  const int c0 = 6, c1 = 8, c2 = 3;
  const auto img = load_box(map, 3, {c0, c1, c2}, 8 * 3 * 2 * 4);
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 8; ++x) {
        float v;
        std::memcpy(&v, &img[((std::size_t(z) * 3 + y) * 8 + x) * 4], 4);
        const int gx = c0 + x, gy = c1 + y, gz = c2 + z;
        const bool inside = gx < 11 && gy < 10 && gz < 4;
        REQUIRE(v == (inside ? h[(std::size_t(gz) * 10 + gy) * 12 + gx] : 0.f));
      }
  copy::tma_tensor line;
  line.base = g.data();
  line.element_bytes = 4;
  line.rank = 1;
  line.dims[0] = 30;
  line.box[0] = 16;
  const auto img1 = load_box(copy::make_tensor_map(line), 1, {20}, 64);
  for (int x = 0; x < 16; ++x) {
    float v;
    std::memcpy(&v, &img1[std::size_t(x) * 4], 4);
    REQUIRE(v == (20 + x < 30 ? h[std::size_t(20 + x)] : 0.f));
  }
}

TEST_CASE("TMA: a 128-byte swizzled box lands as strata::swizzle<3, 3, 3> places it", "[copy][tma]") {
  const int rows = 100, cols = 64;
  auto h = random_elements<bf16>(std::size_t(rows) * cols, 9);
  strata::stream s;
  auto g = to_device(s, h);
  const auto map = copy::make_tensor_map_2d(g.data(), rows, cols, cols, 40, 64, copy::tma_swizzle::b128);
  const auto img = load_box(map, 2, {0, 70}, 40 * 64 * 2);
  for (int r = 0; r < 40; ++r)
    for (int k = 0; k < 64; ++k) {
      const bool inside = 70 + r < rows;
      const auto i = std::size_t(strata::swizzle<3, 3, 3>{}(r * 64 + k));
      REQUIRE(at(img, i) == (inside ? bits(h[std::size_t(70 + r) * cols + k]) : 0));
    }
  // 64- and 32-byte swizzles: 16-byte units XORed with (row / 2) % 4 and (row / 4) % 2 (rows of 64
  // and 32 bytes; the XOR takes address bits 7 and up).
  const auto m64 = copy::make_tensor_map_2d(g.data(), rows, cols, cols, 16, 32, copy::tma_swizzle::b64);
  const auto m32 = copy::make_tensor_map_2d(g.data(), rows, cols, cols, 16, 16, copy::tma_swizzle::b32);
  const auto i64 = load_box(m64, 2, {32, 3}, 16 * 32 * 2);
  const auto i32 = load_box(m32, 2, {16, 5}, 16 * 16 * 2);
  for (int r = 0; r < 16; ++r) {
    for (int k = 0; k < 32; ++k) {
      const int unit = (k / 8) ^ ((r / 2) % 4);
      REQUIRE(at(i64, std::size_t(r) * 32 + unit * 8 + k % 8) == bits(h[std::size_t(3 + r) * cols + 32 + k]));
    }
    for (int k = 0; k < 16; ++k) {
      const int unit = (k / 8) ^ ((r / 4) % 2);
      REQUIRE(at(i32, std::size_t(r) * 16 + unit * 8 + k % 8) == bits(h[std::size_t(5 + r) * cols + 16 + k]));
    }
  }
}

TEST_CASE("TMA: the box is not in shared memory before a wait on its barrier; wrong transaction counts are reported",
          "[copy][tma][negative]") {
  auto h = random_elements<bf16>(64 * 64, 10);
  strata::stream s;
  auto g = to_device(s, h);
  const auto map = copy::make_tensor_map_2d(g.data(), 64, 64, 64, 8, 64);
  const auto img = load_box(map, 2, {0, 0}, 8 * 64 * 2, misuse::read_early);
  for (std::size_t i = 0; i < img.size(); ++i) REQUIRE(img[i] == 0xFF);
  CHECK_THAT(error_of(map, 2, 8 * 64 * 2, misuse::wrong_rank), Contains("1 coordinates for a tensor map of rank 2"));
  CHECK_THAT(error_of(map, 2, 8 * 64 * 2, misuse::misaligned), Contains("must be aligned to 128 bytes"));
  CHECK_THAT(error_of(map, 2, 8 * 64 * 2, misuse::too_few_bytes),
             Contains("16 more bytes completed than the phase expected"));
  CHECK_THAT(error_of(map, 2, 8 * 64 * 2, misuse::too_many_bytes), Contains("can never finish"));
}

TEST_CASE("TMA: make_tensor_map names the field it refuses", "[copy][tma][negative]") {
  strata::stream s;
  strata::device_buffer<bf16> g(4096);
  const auto refused = [&](auto&& change) {
    copy::tma_tensor t;
    t.base = g.data();
    t.element_bytes = 2;
    t.rank = 2;
    t.dims[0] = 64, t.dims[1] = 64;
    t.strides[1] = 128;
    t.box[0] = 64, t.box[1] = 8;
    t.swizzle = copy::tma_swizzle::b128;
    change(t);
    try {
      (void)copy::make_tensor_map(t);
    } catch (const strata::invalid_argument& e) {
      return e.argument() + ": " + e.what();
    }
    return std::string("accepted");
  };
  CHECK(refused([](copy::tma_tensor&) {}) == "accepted");
  CHECK_THAT(refused([](copy::tma_tensor& t) { t.rank = 6; }), Contains("rank: "));
  CHECK_THAT(refused([](copy::tma_tensor& t) { t.strides[1] = 100; }), Contains("strides[1]: ") && Contains("multiple of 16"));
  CHECK_THAT(refused([](copy::tma_tensor& t) { t.box[0] = 32; }), Contains("box[0]: ") && Contains("exactly"));
  CHECK_THAT(refused([](copy::tma_tensor& t) { t.swizzle = copy::tma_swizzle::none, t.box[0] = 12; }),
             Contains("box[0]: ") && Contains("multiple of 16 bytes"));
  CHECK_THAT(refused([](copy::tma_tensor& t) { t.box[1] = 300; }), Contains("box[1]: "));
  CHECK_THAT(refused([](copy::tma_tensor& t) { t.dims[1] = 0; }), Contains("dims[1]: "));
  CHECK_THAT(refused([](copy::tma_tensor& t) { t.base = reinterpret_cast<const char*>(t.base) + 8; }), Contains("base: "));
}

TEST_CASE("TMA multicast into both blocks of a cluster; a remote mbarrier arrival", "[copy][tma][cluster]") {
  const int rows = 32, cols = 64;
  auto h = random_elements<bf16>(std::size_t(rows) * cols, 12);
  strata::stream s;
  auto g = to_device(s, h);
  const auto map = copy::make_tensor_map_2d(g.data(), rows, cols, cols, rows / 2, 64, copy::tma_swizzle::b128);
  const std::size_t bytes = std::size_t(rows) * 64 * 2;
  auto out = poisoned<unsigned char>(s, 2 * bytes, 0xA5);
  auto arrived = poisoned<int>(s, 1, 0);
  strata::launch(s, {.grid = 2, .block = 128, .cluster = 2, .dynamic_shared_bytes = bytes + 1024}, multicast_kernel{},
                 cluster_params{map, rows, out.data(), arrived.data()});
  const auto img = to_host(s, out);
  CHECK(to_host(s, arrived)[0] == 1);
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < 64; ++k) {
        // The two halves (16 rows, 2 KiB each, so the second starts on a swizzle period) form one
        // 128-byte-swizzled tile.
        const std::size_t i = std::size_t(strata::swizzle<3, 3, 3>{}(r * 64 + k));
        std::uint16_t v;
        std::memcpy(&v, &img[std::size_t(b) * bytes + 2 * i], 2);
        INFO("block " << b << " row " << r << " col " << k);
        REQUIRE(v == bits(h[std::size_t(r) * cols + k]));
      }
}

TEST_CASE("TMA boxes with the 128-byte swizzle read by chained wgmmas give the product", "[copy][tma][wgmma]") {
  check_tma_wgmma<128>(64, 128, 64, 0, 0, 201);    // whole tiles
  check_tma_wgmma<128>(100, 150, 40, 64, 64, 202);  // rows past M and N, K = 40 of the box's 64
  check_tma_wgmma<64>(30, 64, 64, 0, 0, 203);
  check_tma_wgmma<256>(64, 300, 24, 0, 256, 204);
}

TEST_CASE("TMA into a tile that an issued wgmma still reads is reported", "[copy][tma][wgmma][negative]") {
  // The copy engine may overwrite the tile while the tensor cores read it: the stage was handed back
  // before the wgmma_wait covering its reads.
  CHECK_THROWS_WITH(check_tma_wgmma<64>(64, 64, 64, 0, 0, 211, true), Contains("that a wgmma still reads") &&
                                                                          Contains("released before the wgmma_wait"));
}

namespace {

/// Stores one box into a rows x cols matrix (ld: 16-byte rows, 8 guard columns or more) filled with 0xEEEE,
/// guards included; every element must be the box's value inside the box and the tensor, 0xEEEE elsewhere.
void check_store(int rows, int cols, int box_rows, int box_cols, int r0, int c0, copy::tma_swizzle sw) {
  strata::stream s;
  const int ld = (cols + 7) / 8 * 8 + 8;  // 16-byte rows (TMA strides) and guard columns
  auto d = poisoned<std::uint16_t>(s, std::size_t(rows) * ld, 0xEEEE);
  const auto map = copy::make_tensor_map_2d(d.data(), rows, cols, ld, box_rows, box_cols, sw);
  strata::launch(s, {.grid = 1, .block = 128, .dynamic_shared_bytes = std::size_t(box_rows) * box_cols * 2 + 1024}, store_kernel{},
                 store_params{map, c0, r0, box_rows, box_cols, sw, true});
  const auto h = to_host(s, d);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < ld; ++c) {
      const bool in_box = r >= r0 && r < r0 + box_rows && c >= c0 && c < c0 + box_cols && c < cols;
      const std::uint16_t want = in_box ? std::uint16_t(1000 + (r - r0) * box_cols + (c - c0)) : 0xEEEE;
      INFO("row " << r << " col " << c);
      REQUIRE(h[std::size_t(r) * ld + c] == want);
    }
}

}  // namespace

TEST_CASE("TMA store: a box from shared memory into the tensor, nothing outside it", "[copy][tma]") {
  check_store(40, 100, 16, 64, 8, 16, copy::tma_swizzle::b128);   // inside
  check_store(40, 100, 16, 64, 30, 60, copy::tma_swizzle::b128);  // past the last row and column
  check_store(20, 70, 8, 32, -4, -8, copy::tma_swizzle::b64);     // before the first row and column
  check_store(33, 50, 32, 16, 1, 40, copy::tma_swizzle::none);
}

TEST_CASE("TMA store never waited for is reported", "[copy][tma][negative]") {
  strata::stream s;
  auto d = poisoned<std::uint16_t>(s, 16 * 72, 0xEEEE);
  const auto map = copy::make_tensor_map_2d(d.data(), 16, 64, 72, 16, 64, copy::tma_swizzle::b128);
  std::string what = "no error";
  try {
    strata::launch(s, {.grid = 1, .block = 128, .dynamic_shared_bytes = 16 * 64 * 2 + 1024}, store_kernel{},
                   store_params{map, 0, 0, 16, 64, copy::tma_swizzle::b128, false});
    s.synchronize();
  } catch (const strata::emulator_error& e) {
    what = e.what();
  }
  CHECK_THAT(what, Contains("never waited for") && Contains("tma_store_wait"));
}

TEST_CASE("TMA reduction: overlapping fp32 boxes of several blocks add up, nothing outside them", "[copy][tma]") {
  strata::stream s;
  const int rows = 50, cols = 40, ld = 48, blocks = 3, step = 10, box_rows = 16, box_cols = 32;  // boxes of 128-byte rows
  const int r0 = 5, c0 = 20;  // the boxes reach past the last column (40): those elements are not added
  std::vector<float> init(std::size_t(rows) * ld);
  for (std::size_t i = 0; i < init.size(); ++i) init[i] = float(i % 7) - 3.f;
  strata::device_buffer<float> d(init.size());
  strata::copy_to_device(s, d.data(), init.data(), init.size());
  copy::tma_tensor t;
  t.base = d.data();
  t.element_bytes = 4;
  t.element = copy::tma_element::f32;
  t.rank = 2;
  t.dims[0] = cols;
  t.dims[1] = rows;
  t.strides[1] = ld * 4;
  t.box[0] = box_cols;
  t.box[1] = box_rows;
  t.swizzle = copy::tma_swizzle::b128;
  for (bool complete : {false, true}) {
    strata::copy_to_device(s, d.data(), init.data(), init.size());
    strata::launch(s, {.grid = blocks, .block = 128, .dynamic_shared_bytes = std::size_t(box_rows) * box_cols * 4 + 1024},
                   reduce_kernel{}, reduce_params{copy::make_tensor_map(t), c0, r0, step, box_rows, box_cols, complete});
    const auto h = to_host(s, d);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < ld; ++c) {
        double want = init[std::size_t(r) * ld + c];
        for (int b = 0; b < blocks; ++b) {
          const int br = r - (r0 + b * step), bc = c - c0;
          if (br >= 0 && br < box_rows && bc >= 0 && bc < box_cols && c < cols) want += (b + 1) + (br * box_cols + bc) / 1024.0;
        }
        INFO("row " << r << " col " << c);
        REQUIRE(h[std::size_t(r) * ld + c] == Approx(want).margin(1e-5));
      }
  }
}

TEST_CASE("TMA reduction through a map of raw bits is reported", "[copy][tma][negative]") {
  strata::stream s;
  strata::device_buffer<float> d(16 * 32);
  const auto map = copy::make_tensor_map_2d(d.data(), 16, 32, 32, 16, 32, copy::tma_swizzle::b128);  // element: bits
  std::string what = "no error";
  try {
    strata::launch(s, {.grid = 1, .block = 128, .dynamic_shared_bytes = 16 * 32 * 4 + 1024}, reduce_kernel{},
                   reduce_params{map, 0, 0, 0, 16, 32, true});
    s.synchronize();
  } catch (const strata::emulator_error& e) {
    what = e.what();
  }
  CHECK_THAT(what, Contains("tma_reduce_add") && Contains("tma_element::f32"));
}
