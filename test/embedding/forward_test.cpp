// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Forward embedding bags on the emulator against the double-precision reference: every pooling and
// row format, many tables of dims that are not multiples of the vector width, empty bags, bags of
// one, a very large bag, padding rows, per-sample weights, fixed-size bags, int32 indices, fp16 /
// bf16 outputs (strata::dtype; the deprecated embedding::scalar spelling; other dtypes refused),
// unaligned tables (element-wise path), warp size 32 and 64 with modelled chiplets, and bitwise
// determinism across worker counts and fiber orders. Guard zones around every buffer.
#include <catch2/catch.hpp>

#include "support.hpp"

using namespace emb_test;
namespace arch = strata::arch;

namespace {

struct run_result {
  std::vector<unsigned char> raw;
  std::vector<double> out;
};

/// Typed >= 0: through the typed entry embedding_bag<scalar(Typed)>, which compiles that format only.
template <class Target, int Typed = -1>
run_result run_forward(strata::stream& s, problem& p, dtype out_fmt, long long none_stride = 0) {
  E::forward_args a;
  a.in = p.device_lookup();
  a.output_format = out_fmt;
  a.output_row_stride = none_stride;
  const auto ref_plan = strata::embedding::detail::make_plan("t", p.host_lookup(), 4, 1, 32, 256);
  const long long stride = none_stride ? none_stride : ref_plan.max_dim;
  const std::size_t n = static_cast<std::size_t>(p.mode == pooling::none ? static_cast<long long>(p.indices.size()) * stride
                                                                          : ref_plan.output_elements);
  guarded out(s, n * element_size(out_fmt), 0, 0xFF);  // poisoned: all-ones bits (NaN)
  a.output = out.data();
  strata::device_buffer<unsigned char> ws(strata::embedding_bag_workspace_size(a));
  if constexpr (Typed >= 0) strata::embedding_bag<scalar(Typed), Target>(s, a, {ws.data(), ws.size()});
  else strata::embedding_bag<Target>(s, a, {ws.data(), ws.size()});
  REQUIRE(out.guards_intact(s));
  REQUIRE(p.inputs_intact(s));
  run_result r;
  r.raw = out.download(s);
  r.out = read_output(s, out, out_fmt, n);
  return r;
}

void compare(const problem& p, const run_result& got, dtype out_fmt, long long none_stride = 0) {
  E::forward_args ra;
  ra.in = p.host_lookup();
  ra.output_format = out_fmt;
  ra.output_row_stride = none_stride;
  const auto ref = E::reference::embedding_bag(ra);
  REQUIRE(ref.out.size() == got.out.size());
  long long bad = 0;
  for (std::size_t i = 0; i < ref.out.size(); ++i) {
    if (std::isnan(ref.out[i])) {  // nothing may be written there
      if (!is_poison(got.raw, out_fmt, i)) ++bad;
      continue;
    }
    const double tol = tolerance(ref.out[i], ref.mag[i], ref.terms[i], out_fmt);
    if (!(std::fabs(got.out[i] - ref.out[i]) <= tol)) {
      if (bad < 5)
        UNSCOPED_INFO("element " << i << ": got " << got.out[i] << ", reference " << ref.out[i] << ", tolerance " << tol);
      ++bad;
    }
  }
  REQUIRE(bad == 0);
}

const std::vector<int> odd_dims = {1, 3, 17, 130, 64, 8};

}  // namespace

TEST_CASE("forward: every pooling and row format over tables of odd dims", "[embedding][forward]") {
  strata::stream s;
  for (scalar fmt : {scalar::fp32, scalar::fp16, scalar::bf16, scalar::fp8_e4m3, scalar::int8_rowwise, scalar::int4_rowwise})
    for (pooling mode : {pooling::sum, pooling::mean, pooling::max, pooling::none}) {
      INFO("rows " << E::to_string(fmt) << ", pooling " << E::to_string(mode));
      problem p = make_problem(fmt, odd_dims, 8, 5, 9, 100 + static_cast<int>(fmt) * 7 + static_cast<int>(mode));
      p.mode = mode;
      p.upload(s);
      compare(p, run_forward<void>(s, p, dtype::fp32), dtype::fp32);
    }
}

TEST_CASE("forward: the typed entry embedding_bag<Rows> runs its row format and refuses others", "[embedding][forward]") {
  strata::stream s;
  problem p = make_problem(scalar::fp16, odd_dims, 8, 5, 9, 71);
  p.upload(s);
  compare(p, run_forward<void, int(scalar::fp16)>(s, p, dtype::bf16), dtype::bf16);
  problem q = make_problem(scalar::int4_rowwise, odd_dims, 8, 5, 9, 72);
  q.mode = pooling::mean;
  q.upload(s);
  compare(q, run_forward<void, int(scalar::int4_rowwise)>(s, q, dtype::fp32), dtype::fp32);
  E::forward_args a;
  a.in = p.device_lookup();
  strata::device_buffer<unsigned char> ws(strata::embedding_bag_workspace_size(a));
  CHECK_THROWS_WITH(strata::embedding_bag<scalar::bf16>(s, a, {ws.data(), ws.size()}),
                    Catch::Matchers::Contains("argument 'in.row_format' is fp16, but this call is strata::embedding_bag<bf16>"));
}

TEST_CASE("forward: per-sample weights, fp16 and bf16 outputs, int32 indices, fixed-size bags", "[embedding][forward]") {
  strata::stream s;
  for (pooling mode : {pooling::sum, pooling::none}) {
    problem p = make_problem(scalar::fp16, {4, 33, 96}, 5, 6, 7, 7);
    p.mode = mode;
    p.weights = strata_test::random_vector<float>(p.indices.size(), 5, -2.f, 2.f);
    p.upload(s);
    compare(p, run_forward<void>(s, p, dtype::fp32), dtype::fp32);
  }
  for (dtype out : {dtype::fp16, dtype::bf16}) {
    problem p = make_problem(scalar::bf16, {24, 5}, 3, 9, 6, 8);
    p.itype = E::index_type::int32;
    p.mode = pooling::mean;
    p.upload(s);
    compare(p, run_forward<void>(s, p, out), out);
  }
  problem p = make_problem(scalar::int8_rowwise, {16, 40}, 3, 7, 4, 9, /*csr=*/false);
  p.itype = E::index_type::int32;
  p.upload(s);
  compare(p, run_forward<void>(s, p, dtype::fp32), dtype::fp32);
}

TEST_CASE("forward: empty bags, bags of one and a very large bag", "[embedding][forward]") {
  strata::stream s;
  problem p = make_problem(scalar::fp32, {20}, 1, 4, 0, 11);  // bags 0..3 all empty first
  p.indices.clear();
  p.offsets = {0, 0, 1, 1, 1};  // bag 0 empty, bag 1 one row, bags 2 and 3 empty
  p.indices.push_back(7);
  // Then a very large bag appended as bag 3.
  for (int i = 0; i < 5000; ++i) p.indices.push_back(i % 40);
  p.offsets.back() = static_cast<long long>(p.indices.size());
  for (pooling mode : {pooling::sum, pooling::mean, pooling::max}) {
    p.mode = mode;
    p.upload(s);
    compare(p, run_forward<void>(s, p, dtype::fp32), dtype::fp32);
  }
}

TEST_CASE("forward: unaligned tables take the element-wise path; explicit output layout", "[embedding][forward]") {
  strata::stream s;
  problem p = make_problem(scalar::fp32, {4, 8, 12}, 4, 5, 6, 12);
  p.upload(s, /*row_shift=*/4);  // 4-byte aligned, not 16
  compare(p, run_forward<void>(s, p, dtype::fp32), dtype::fp32);
  // Explicit layout: each feature in its own block with a padded stride; gaps stay poisoned.
  long long off = 0;
  for (auto& f : p.features) {
    const int dim = p.host_tables[f.table].dim;
    f.output_offset = off + 1;
    f.output_stride = dim + 3;
    off += 1 + f.batch_size * (dim + 3);
  }
  p.upload(s);
  compare(p, run_forward<void>(s, p, dtype::fp32), dtype::fp32);
  p.mode = pooling::none;
  compare(p, run_forward<void>(s, p, dtype::fp32, 200), dtype::fp32, 200);
}

TEST_CASE("forward: warp size 64 and modelled chiplets (gfx942, sm100a)", "[embedding][forward][chiplet]") {
  strata::stream s;
  problem p = make_problem(scalar::fp16, {1, 17, 130, 300}, 9, 30, 8, 13);
  p.mode = pooling::mean;
  p.upload(s);
  compare(p, run_forward<arch::gfx942>(s, p, dtype::fp32), dtype::fp32);
  compare(p, run_forward<arch::sm100a>(s, p, dtype::fp32), dtype::fp32);
  p.mode = pooling::max;
  compare(p, run_forward<arch::gfx942>(s, p, dtype::bf16), dtype::bf16);
}

TEST_CASE("forward: bitwise identical across worker counts and fiber orders", "[embedding][forward][determinism]") {
  strata::stream s;
  problem p = make_problem(scalar::int4_rowwise, {7, 64, 200}, 6, 20, 30, 14);
  p.upload(s);
  std::vector<unsigned char> first;
  for (const auto& opt : strata_test::schedules()) {
    s.set_emulator_options(opt);
    const auto r = run_forward<arch::gfx942>(s, p, dtype::fp32);
    if (first.empty()) first = r.raw;
    REQUIRE(first == r.raw);
  }
}

TEST_CASE("forward: rows are read 16 bytes at a time wherever their alignment allows", "[embedding][forward]") {
  namespace D = E::detail;
  const auto width = [](scalar fmt, std::uintptr_t base, int dim, long long stride) {
    const E::table t{.rows = reinterpret_cast<const void*>(base), .num_rows = 10, .dim = dim, .row_stride_bytes = stride};
    const E::feature f{.table = 0, .batch_size = 1};
    E::lookup in;
    in.row_format = fmt;
    in.tables = {&t, 1};
    in.features = {&f, 1};
    const D::plan p = D::make_plan("test", in, 16, 2, 32, 256);
    return std::pair<int, int>{p.tables[0].vector, p.tables[0].qwords};
  };
  // int8 row-wise, packed: dim + 8 bytes, a multiple of 8 (not of 16) when dim is a multiple of 8.
  CHECK(width(scalar::int8_rowwise, 0x1000, 64, 0) == std::pair<int, int>{D::rows_by_8x2, 1});
  CHECK(width(scalar::int8_rowwise, 0x1000, 120, 0) == std::pair<int, int>{D::rows_by_16, 1});
  CHECK(width(scalar::int8_rowwise, 0x1004, 64, 0) == std::pair<int, int>{D::rows_by_element, 1});
  CHECK(width(scalar::int8_rowwise, 0x1000, 65, 0) == std::pair<int, int>{D::rows_by_element, 0});
  // A stride that is a multiple of 8 but too short for the last chunk read whole: 40 bytes of fp16,
  // whose third chunk would end at byte 48 of a 40-byte row.
  CHECK(width(scalar::fp16, 0x1008, 20, 40).first == D::rows_by_element);
  CHECK(width(scalar::fp16, 0x1008, 64, 0).first == D::rows_by_8x2);      // 128 bytes at an 8-byte offset
  CHECK(width(scalar::fp32, 0x1000, 64, 0).first == D::rows_by_16);
  CHECK(width(scalar::int4_rowwise, 0x1000, 8, 0) == std::pair<int, int>{D::rows_by_element, 1});  // 4 + 4 bytes: too short for 16
}

TEST_CASE("forward: output_format is a strata::dtype; the scalar spelling still compiles; other dtypes are refused",
          "[embedding][forward][dtype]") {
  strata::stream s;
  problem p = make_problem(scalar::int8_rowwise, odd_dims, 6, 5, 9, 81);
  p.mode = pooling::mean;
  p.upload(s);
  for (dtype out : {dtype::bf16, dtype::fp16}) {
    INFO("output " << strata::to_string(out));
    const run_result now = run_forward<void>(s, p, out);
    compare(p, now, out);
    // Until the next release, code that assigns an embedding::scalar still compiles (with a warning
    // naming the dtype to write) and writes the same bits.
    E::forward_args old;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    old.output_format = out == dtype::bf16 ? scalar::bf16 : scalar::fp16;
    const bool equal_to_scalar = old.output_format == (out == dtype::bf16 ? scalar::bf16 : scalar::fp16);
#pragma GCC diagnostic pop
    CHECK(equal_to_scalar);
    REQUIRE(old.output_format == out);
    CHECK(run_forward<void>(s, p, old.output_format).raw == now.raw);
  }
  // Any other dtype (or row format spelled as an output format) is refused, naming the entry, the
  // argument and what it takes; nothing is launched.
  guarded out(s, 4 * 1024, 0, 0xFF);
  strata::device_buffer<unsigned char> ws(1 << 16);
  for (const auto& [type, name] : refused_element_types()) {
    const E::forward_args a{.in = p.device_lookup(), .output = out.data(), .output_format = type};
    require_refused([&] { strata::embedding_bag(s, a, {ws.data(), ws.size()}); }, "strata::embedding_bag",
                    "output_format", std::string("strata::embedding_bag: argument 'output_format' has dtype ") + name +
                        "; embedding outputs are fp32, fp16 or bf16");
  }
  REQUIRE(out.guards_intact(s));
}
