// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host memory caught on the emulator (issue 30, item 2): device_buffer and register_device_memory
// record device allocations, and with the host-pointer check on (STRATA_CHECK_HOST_POINTERS=1, as
// every Strata test runs) the entries and strata::launch refuse a pointer no allocation covers.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "strata/gemm.hpp"

namespace sg = strata::ops::gemm;
using Catch::Matchers::Contains;

namespace {
/// Restores the check's state at the end of a test.
struct check_state {
  bool was = strata::host_pointer_check();
  explicit check_state(bool on) { strata::set_host_pointer_check(on); }
  ~check_state() { strata::set_host_pointer_check(was); }
};

struct copy_kernel {
  struct params {
    const float* x;
    float* y;
    int n;
  };
  template <class Ctx>
  STRATA_HOST_DEVICE void operator()(Ctx& ctx, const params& p) const {
    const int i = int(ctx.block().thread_rank());
    if (i < p.n) p.y[i] = p.x[i];
  }
};
}  // namespace

TEST_CASE("host pointers: the mode is on for every Strata test (STRATA_CHECK_HOST_POINTERS=1)", "[host-pointers]") {
  const char* e = std::getenv("STRATA_CHECK_HOST_POINTERS");
  INFO("run under ctest, which sets STRATA_CHECK_HOST_POINTERS=1 for every test and example");
  CHECK((e && std::string(e) == "1") == strata::host_pointer_check());
}

TEST_CASE("host pointers: device_buffer and register_device_memory record device memory", "[host-pointers]") {
  const void* p = nullptr;
  {
    strata::device_buffer<float> b(64);  // 256 bytes: the allocation's own size
    p = b.data();
    CHECK(strata::is_device_memory(b.data(), 256));
    CHECK(strata::is_device_memory(b.data() + 63, 4));
    CHECK_FALSE(strata::is_device_memory(b.data() + 63, 8));  // past the end
  }
  CHECK_FALSE(strata::is_device_memory(p, 4));  // freed: no longer device memory
  std::vector<float> host(64);
  CHECK_FALSE(strata::is_device_memory(host.data(), 4));
  {
    strata::device_memory_registration r(host.data(), host.size() * sizeof(float));
    CHECK(strata::is_device_memory(host.data() + 10, 16));
  }
  CHECK_FALSE(strata::is_device_memory(host.data(), 4));
  strata::register_device_memory(host.data(), 256);
  CHECK(strata::is_device_memory(host.data(), 256));
  strata::unregister_device_memory(host.data());
  CHECK_FALSE(strata::is_device_memory(host.data(), 1));
}

TEST_CASE("host pointers: strata::gemm on std::vector memory is refused, by argument", "[host-pointers]") {
  check_state on(true);
  strata::stream s;
  // The probe: plain host vectors gave d[0] = 8.5 on the emulator, a fault on every GPU.
  std::vector<float> a(64, 1.f), b(64, 0.5f), d(64, 0.f);
  strata::device_buffer<float> da(64), db(64), dd(64);
  const auto mat = [](const void* p) { return sg::matrix{p, 8, 8, 8, sg::layout::row_major, strata::dtype::fp32}; };
  try {
    strata::gemm(s, mat(a.data()), mat(db.data()), mat(dd.data()), mat(dd.data()));
    FAIL("host A accepted");
  } catch (const strata::invalid_argument& e) {
    CHECK(e.argument() == "a");
    CHECK_THAT(std::string(e.what()), Contains("strata::gemm: argument 'a' points to host memory that no device allocation covers"));
  }
  try {
    strata::gemm(s, mat(da.data()), mat(db.data()), mat(d.data()), mat(d.data()));
    FAIL("host D accepted");
  } catch (const strata::invalid_argument& e) {
    CHECK(e.argument() == "d");
  }
  try {
    strata::gemm(s, mat(da.data()), mat(db.data()), mat(dd.data()), mat(dd.data()), {.bias = b.data()});
    FAIL("host bias accepted");
  } catch (const strata::invalid_argument& e) {
    CHECK(e.argument() == "options.bias");
  }
  // Registered (a framework's own allocation), the same vectors run.
  strata::device_memory_registration ra(a.data(), 256), rb(b.data(), 256), rd(d.data(), 256);
  strata::gemm(s, mat(a.data()), mat(b.data()), mat(d.data()), mat(d.data()));
  s.synchronize();
  CHECK(d[0] == 4.f);
  // Check off: accepted again without registration (how a framework opts out).
  strata::set_host_pointer_check(false);
  std::vector<float> d2(64, 0.f);
  strata::gemm(s, mat(a.data()), mat(b.data()), mat(d2.data()), mat(d2.data()));
  CHECK(d2[0] == 4.f);
}

TEST_CASE("host pointers: strata::launch refuses a parameter pointing to host memory", "[host-pointers]") {
  check_state on(true);
  strata::stream s;
  std::vector<float> hx(32, 1.f);
  strata::device_buffer<float> x(32), y(32);
  try {
    strata::launch(s, {.grid = 1, .block = 32}, copy_kernel{}, copy_kernel::params{hx.data(), y.data(), 32});
    FAIL("a host pointer in the parameters was accepted");
  } catch (const strata::invalid_argument& e) {
    CHECK(e.argument() == "params");
    CHECK_THAT(std::string(e.what()), Contains("copy_kernel") && Contains("bytes 0-7") &&
                                          Contains("points to host memory that no device allocation covers"));
  }
  // Device memory, and one past the end of a buffer, are fine; so are plain numbers.
  REQUIRE_NOTHROW(strata::launch(s, {.grid = 1, .block = 32}, copy_kernel{}, copy_kernel::params{x.data(), y.data(), 32}));
  REQUIRE_NOTHROW(strata::launch(s, {.grid = 1, .block = 32}, copy_kernel{}, copy_kernel::params{x.data() + 32, y.data(), 0}));
}
