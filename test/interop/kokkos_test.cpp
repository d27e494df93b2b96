// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/interop/kokkos_test.cpp -- strata/interop/kokkos.hpp on Kokkos's Serial space (Debian's
// Kokkos 3.4): tensor views of LayoutLeft, LayoutRight and LayoutStride views of rank 1 to 4 address
// the same elements as the Kokkos views, and strata::gemm runs on the Serial space's stream on Kokkos
// views and matches the double reference. Prints PASS last when every check holds.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include <strata/gemm.hpp>
#include <strata/interop/kokkos.hpp>

namespace sk = strata::interop::kokkos;
namespace sg = strata::ops::gemm;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    if (failures <= 20) std::printf("FAILED: %s\n", what.c_str());
  }
}

// Every element of v and of its Strata view: the same address.
template <class View>
void check_addresses(const View& v, const std::string& name) {
  const auto t = sk::make_tensor_view(v);
  static_assert(decltype(t)::rank == View::rank);
  long long n = 0, bad = 0;
  if constexpr (View::rank == 1) {
    for (std::size_t i = 0; i < v.extent(0); ++i, ++n) bad += &t(i) != &v(i);
  } else if constexpr (View::rank == 2) {
    for (std::size_t i = 0; i < v.extent(0); ++i)
      for (std::size_t j = 0; j < v.extent(1); ++j, ++n) bad += &t(i, j) != &v(i, j);
  } else if constexpr (View::rank == 3) {
    for (std::size_t i = 0; i < v.extent(0); ++i)
      for (std::size_t j = 0; j < v.extent(1); ++j)
        for (std::size_t k = 0; k < v.extent(2); ++k, ++n) bad += &t(i, j, k) != &v(i, j, k);
  } else {
    for (std::size_t i = 0; i < v.extent(0); ++i)
      for (std::size_t j = 0; j < v.extent(1); ++j)
        for (std::size_t k = 0; k < v.extent(2); ++k)
          for (std::size_t l = 0; l < v.extent(3); ++l, ++n) bad += &t(i, j, k, l) != &v(i, j, k, l);
  }
  expect(n == static_cast<long long>(v.size()) && n > 0, name + ": visited every element");
  expect(bad == 0, name + ": " + std::to_string(bad) + " of " + std::to_string(n) + " addresses differ");
  std::printf("%-40s %6lld elements, addresses %s\n", name.c_str(), n, bad == 0 ? "match" : "DIFFER");
}

template <class Layout>
void check_layout(const char* layout_name) {
  const std::string l = layout_name;
  check_addresses(Kokkos::View<float*, Layout, Kokkos::HostSpace>("r1", 7), l + " rank 1");
  check_addresses(Kokkos::View<float**, Layout, Kokkos::HostSpace>("r2", 5, 3), l + " rank 2");
  check_addresses(Kokkos::View<double***, Layout, Kokkos::HostSpace>("r3", 4, 3, 2), l + " rank 3");
  check_addresses(Kokkos::View<int****, Layout, Kokkos::HostSpace>("r4", 2, 3, 4, 5), l + " rank 4");
  // A const view and a compile-time extent keep their meaning.
  Kokkos::View<const float**, Layout, Kokkos::HostSpace> c = Kokkos::View<float**, Layout, Kokkos::HostSpace>("c", 3, 4);
  check_addresses(c, l + " rank 2, const");
  static_assert(std::is_const_v<typename decltype(sk::make_tensor_view(c))::element_type>);
  check_addresses(Kokkos::View<float* [6], Layout, Kokkos::HostSpace>("s", 3), l + " rank 2, static extent");
}

void check_strided() {
  // LayoutStride from explicit strides (a transposed, padded matrix) and from subviews.
  Kokkos::LayoutStride ls(4, 1, 3, 10);  // (4 x 3), strides (1, 10): columns padded to 10
  Kokkos::View<float**, Kokkos::LayoutStride, Kokkos::HostSpace> s("strided", ls);
  check_addresses(s, "LayoutStride rank 2, padded");
  Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace> big("big", 3, 4, 5, 6);
  auto sub4 = Kokkos::subview(big, Kokkos::pair<int, int>(1, 3), Kokkos::ALL, Kokkos::pair<int, int>(2, 5),
                              Kokkos::pair<int, int>(1, 4));
  check_addresses(Kokkos::View<float****, Kokkos::LayoutStride, Kokkos::HostSpace>(sub4), "LayoutStride rank 4, subview");
  auto sub3 = Kokkos::subview(big, Kokkos::ALL, 2, Kokkos::ALL, Kokkos::pair<int, int>(0, 6));
  check_addresses(Kokkos::View<float***, Kokkos::LayoutStride, Kokkos::HostSpace>(sub3), "LayoutStride rank 3, subview");
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> left("left", 9, 8);
  auto col = Kokkos::subview(left, Kokkos::ALL, 3);
  check_addresses(Kokkos::View<float*, Kokkos::LayoutStride, Kokkos::HostSpace>(col), "LayoutStride rank 1, column");
  auto row = Kokkos::subview(left, 4, Kokkos::ALL);
  check_addresses(Kokkos::View<float*, Kokkos::LayoutStride, Kokkos::HostSpace>(row), "LayoutStride rank 1, row");
}

// D = A * B through strata::gemm on Kokkos views, on the Serial space's stream; A LayoutRight (row-major),
// B LayoutLeft (column-major), D a LayoutStride subview of a wider LayoutRight matrix (ld > n).
void check_gemm() {
  const int m = 37, n = 29, k = 45;
  Kokkos::Serial exec;
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> a("a", m, k);
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> b("b", k, n);
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> wide("wide", m, n + 7);
  // Filled by a Kokkos kernel on the same space instance: stream_of orders Strata after it.
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Kokkos::Serial>(exec, 0, m * k + k * n), KOKKOS_LAMBDA(int i) {
        if (i < m * k) a(i / k, i % k) = float((i * 7 % 13) - 6) / 8.f;
        else {
          const int j = i - m * k;
          b(j % k, j / k) = float((j * 5 % 11) - 5) / 4.f;
        }
      });
  Kokkos::deep_copy(exec, wide, -7.f);  // poison
  auto d = Kokkos::subview(wide, Kokkos::ALL, Kokkos::pair<int, int>(3, 3 + n));
  Kokkos::View<float**, Kokkos::LayoutStride, Kokkos::HostSpace> ds(d);

  strata::stream s = sk::stream_of(exec);
  // The Serial space's memory is the emulator's device memory here: registered as such, as a framework
  // does (the host-pointer check is on in every Strata test: docs/design.md, "Device memory").
  const strata::device_memory_registration ra(a.data(), a.span() * sizeof(float)), rb(b.data(), b.span() * sizeof(float)),
      rw(wide.data(), wide.span() * sizeof(float));
  const auto ma = sk::to_matrix(a, "a"), mb = sk::to_matrix(b, "b"), md = sk::to_matrix(ds, "d");
  expect(ma.order == sg::layout::row_major && ma.ld == k, "a is row-major with ld k");
  expect(mb.order == sg::layout::col_major && mb.ld == k, "b is column-major with ld k");
  expect(md.order == sg::layout::row_major && md.ld == n + 7, "d is row-major with ld n + 7");
  strata::gemm(s, ma, mb, md, md, {.alpha = 1.f, .beta = 0.f});
  s.synchronize();

  const auto ref = sg::reference::product(m, n, k, a.data(), k, sg::layout::row_major, b.data(), k, sg::layout::col_major);
  double worst = 0;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      const double err = std::fabs(d(r, c) - ref[r * n + c]) / std::max(1.0, std::fabs(ref[r * n + c]));
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
  const double tol = sg::reference::tolerance(k, 23);
  bool untouched = true;  // the padding columns of `wide` are not D's
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n + 7; ++c)
      if ((c < 3 || c >= 3 + n) && wide(r, c) != -7.f) untouched = false;
  expect(worst <= tol, "gemm on Kokkos views: max relative error " + std::to_string(worst));
  expect(untouched, "gemm wrote only inside d");
  std::printf("strata::gemm %dx%dx%d on Kokkos views (Serial stream): max relative error %.3g (tolerance %.3g)\n", m,
              n, k, worst, tol);

  // A matrix without a unit stride is refused with a message naming it.
  Kokkos::View<float**, Kokkos::LayoutStride, Kokkos::HostSpace> no_unit("no_unit", Kokkos::LayoutStride(4, 2, 3, 8));
  bool threw = false;
  try {
    (void)sk::to_matrix(no_unit, "x");
  } catch (const strata::invalid_argument& e) {
    threw = e.argument() == "x";
    std::printf("refused as expected: %s\n", e.what());
  }
  expect(threw, "to_matrix refuses a view without a unit stride");
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    try {
      check_layout<Kokkos::LayoutRight>("LayoutRight");
      check_layout<Kokkos::LayoutLeft>("LayoutLeft");
      check_strided();
      check_gemm();
    } catch (const std::exception& e) {
      expect(false, std::string("exception: ") + e.what());
    }
  }
  Kokkos::finalize();
  std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
