// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The %smid -> chiplet lookup and the calibration registry (strata/runtime/chiplet_calibration.hpp).
// The lookup is the very function the CUDA context calls on sm_100a; the registry here is the host
// build's, which validates and keeps the host copy but has no device copy.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "strata/runtime/chiplet_calibration.hpp"
#include "strata/runtime/error.hpp"

namespace {

/// Runs `f`, which must throw strata::invalid_argument naming `op` and `arg`; returns what().
template <class F>
std::string invalid_argument_message(F&& f, const std::string& op, const std::string& arg) {
  try {
    f();
  } catch (const strata::invalid_argument& e) {
    CHECK(e.op() == op);
    CHECK(e.argument() == arg);
    const std::string what = e.what();
    CHECK(what.find(op) != std::string::npos);
    CHECK(what.find("'" + arg + "'") != std::string::npos);
    return what;
  }
  FAIL("expected strata::invalid_argument from " << op << " about '" << arg << "'");
  return {};
}

}  // namespace

TEST_CASE("chiplet_from_smid: the default contiguous split", "[chiplet][calibration]") {
  using strata::chiplet_from_smid;
  // B200-like: 148 SM ids into 2 halves.
  STATIC_REQUIRE(chiplet_from_smid(0, 148, 2, nullptr, 0) == 0);
  STATIC_REQUIRE(chiplet_from_smid(73, 148, 2, nullptr, 0) == 0);
  STATIC_REQUIRE(chiplet_from_smid(74, 148, 2, nullptr, 0) == 1);
  STATIC_REQUIRE(chiplet_from_smid(147, 148, 2, nullptr, 0) == 1);
  // H100-like id count.
  STATIC_REQUIRE(chiplet_from_smid(65, 132, 2, nullptr, 0) == 0);
  STATIC_REQUIRE(chiplet_from_smid(66, 132, 2, nullptr, 0) == 1);
  // An id at or past %nsmid clamps to the last chiplet; %nsmid 0 reads as 1.
  STATIC_REQUIRE(chiplet_from_smid(148, 148, 2, nullptr, 0) == 1);
  STATIC_REQUIRE(chiplet_from_smid(5000, 148, 2, nullptr, 0) == 1);
  STATIC_REQUIRE(chiplet_from_smid(0, 0, 2, nullptr, 0) == 0);
  STATIC_REQUIRE(chiplet_from_smid(3, 0, 2, nullptr, 0) == 1);
  // Large ids do not overflow the product.
  STATIC_REQUIRE(chiplet_from_smid(0xffffffffu, 0xffffffffu, 8, nullptr, 0) == 7);
  // One chiplet (or a nonsense count) is always chiplet 0.
  STATIC_REQUIRE(chiplet_from_smid(100, 132, 1, nullptr, 0) == 0);
  STATIC_REQUIRE(chiplet_from_smid(100, 132, 0, nullptr, 0) == 0);

  for (unsigned nsmid : {132u, 148u, 160u}) {
    for (int count : {2, 4, 8}) {
      std::vector<int> per(count, 0);
      int last = 0;
      for (unsigned id = 0; id < nsmid; ++id) {
        const int c = chiplet_from_smid(id, nsmid, count, nullptr, 0);
        REQUIRE(c >= last);  // contiguous ranges
        REQUIRE(c < count);
        last = c;
        ++per[c];
      }
      for (int c = 0; c < count; ++c) {  // balanced to within one id
        REQUIRE(per[c] >= static_cast<int>(nsmid) / count);
        REQUIRE(per[c] <= static_cast<int>(nsmid) / count + 1);
      }
    }
  }
}

TEST_CASE("chiplet_from_smid: a calibration table", "[chiplet][calibration]") {
  using strata::chiplet_from_smid;
  // Interleaved dies, as a measurement might find: even ids on die 1, odd on die 0.
  // Run-time checks: GCC with AddressSanitizer cannot constant-evaluate a comparison of a static
  // array's address with null.
  static constexpr unsigned char table[] = {1, 0, 1, 0, 1, 0};
  CHECK(chiplet_from_smid(0, 148, 2, table, 6) == 1);
  CHECK(chiplet_from_smid(1, 148, 2, table, 6) == 0);
  CHECK(chiplet_from_smid(5, 148, 2, table, 6) == 0);
  // Past the end of the table: the default split (6 < 74 is die 0, 100 is die 1).
  CHECK(chiplet_from_smid(6, 148, 2, table, 6) == 0);
  CHECK(chiplet_from_smid(100, 148, 2, table, 6) == 1);
  // A size of 0 (or less) means no table.
  CHECK(chiplet_from_smid(0, 148, 2, table, 0) == 0);
  CHECK(chiplet_from_smid(0, 148, 2, table, -1) == 0);
  // One chiplet ignores the table.
  CHECK(chiplet_from_smid(0, 148, 1, table, 6) == 0);
}

TEST_CASE("chiplet calibration registry: set, query, replace, clear", "[chiplet][calibration]") {
  constexpr int device = 3;
  strata::clear_chiplet_calibration(device);
  REQUIRE_FALSE(strata::get_chiplet_calibration(device).has_value());
  REQUIRE(strata::chiplet_calibration_table(device) == nullptr);

  const std::vector<std::uint8_t> first = {0, 0, 1, 1};
  strata::set_chiplet_calibration(device, first, 2);
  auto got = strata::get_chiplet_calibration(device);
  REQUIRE(got.has_value());
  CHECK(got->smid_to_chiplet == first);
  CHECK(got->chiplets == 2);
  // Host build: no device copy.
  CHECK(got->device_table == nullptr);
  CHECK(strata::chiplet_calibration_table(device) == nullptr);
  // Other devices are untouched.
  CHECK_FALSE(strata::get_chiplet_calibration(device + 1).has_value());

  const std::vector<std::uint8_t> second = {3, 2, 1, 0, 0, 1, 2, 3};
  strata::set_chiplet_calibration(device, second, 4);
  got = strata::get_chiplet_calibration(device);
  REQUIRE(got.has_value());
  CHECK(got->smid_to_chiplet == second);
  CHECK(got->chiplets == 4);

  // A rejected table leaves the previous one in place.
  const std::vector<std::uint8_t> bad = {0, 4};
  CHECK_THROWS_AS(strata::set_chiplet_calibration(device, bad, 4), strata::invalid_argument);
  got = strata::get_chiplet_calibration(device);
  REQUIRE(got.has_value());
  CHECK(got->smid_to_chiplet == second);

  // The largest table allowed.
  const std::vector<std::uint8_t> full(strata::max_chiplet_calibration_entries, 1);
  strata::set_chiplet_calibration(device, full, 2);
  CHECK(strata::get_chiplet_calibration(device)->smid_to_chiplet.size() == 4096);

  strata::clear_chiplet_calibration(device);
  CHECK_FALSE(strata::get_chiplet_calibration(device).has_value());
  strata::clear_chiplet_calibration(device);  // clearing twice is fine
}

TEST_CASE("chiplet calibration registry: validation", "[chiplet][calibration]") {
  const std::string op = "strata::set_chiplet_calibration";
  const std::vector<std::uint8_t> ok = {0, 1};

  std::string what = invalid_argument_message([&] { strata::set_chiplet_calibration(-1, ok, 2); }, op, "device");
  CHECK(what.find("-1") != std::string::npos);

  what = invalid_argument_message([&] { strata::set_chiplet_calibration(0, ok, 0); }, op, "chiplets");
  CHECK(what.find("at least one") != std::string::npos);

  what = invalid_argument_message([&] { strata::set_chiplet_calibration(0, std::vector<std::uint8_t>{}, 2); }, op,
                                  "smid_to_chiplet");
  CHECK(what.find("empty") != std::string::npos);

  const std::vector<std::uint8_t> too_big(strata::max_chiplet_calibration_entries + 1, 0);
  what = invalid_argument_message([&] { strata::set_chiplet_calibration(0, too_big, 2); }, op, "smid_to_chiplet");
  CHECK(what.find("4097") != std::string::npos);
  CHECK(what.find("4096") != std::string::npos);

  const std::vector<std::uint8_t> out_of_range = {0, 1, 2, 1};
  what = invalid_argument_message([&] { strata::set_chiplet_calibration(0, out_of_range, 2); }, op, "smid_to_chiplet");
  CHECK(what.find("SM id 2") != std::string::npos);
  CHECK(what.find("chiplet 2") != std::string::npos);

  invalid_argument_message([&] { strata::clear_chiplet_calibration(-2); }, "strata::clear_chiplet_calibration",
                           "device");

  // Nothing was stored by the failed calls.
  CHECK_FALSE(strata::get_chiplet_calibration(0).has_value());
}
