// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The KFD topology reader on a fake sysfs tree: the XCD count of the GPU at a PCI address.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "strata/runtime/detail/kfd_topology.hpp"

namespace fs = std::filesystem;

namespace {
void node(const fs::path& root, int n, const std::string& text) {
  fs::create_directories(root / std::to_string(n));
  std::ofstream(root / std::to_string(n) / "properties") << text;
}
}  // namespace

TEST_CASE("num_xcc is read from the KFD node at the device's PCI address", "[runtime][chiplet]") {
  const fs::path root = fs::temp_directory_path() / ("strata-kfd-" + std::to_string(::getpid()));
  fs::remove_all(root);
  node(root, 0, "cpu_cores_count 64\nsimd_count 0\nlocation_id 0\ndomain 0\n");
  // MI300X in SPX mode at 0000:c1:00.0 -> location_id = 0xc1 << 8 = 49408
  node(root, 1, "simd_count 1216\nnum_xcc 8\nlocation_id 49408\ndomain 0\narray_count 32\n");
  // a CPX partition at 0001:05:00.0 (one XCD)
  node(root, 2, "simd_count 152\nnum_xcc 1\nlocation_id 1280\ndomain 1\n");
  // an older GPU without num_xcc at 0000:03:00.0
  node(root, 3, "simd_count 440\nlocation_id 768\ndomain 0\n");

  CHECK(strata::detail::kfd_num_xcc(root, 0, 0xc1, 0) == 8);
  CHECK(strata::detail::kfd_num_xcc(root, 1, 0x05, 0) == 1);
  CHECK(strata::detail::kfd_num_xcc(root, 0, 0x05, 0) == 0);  // right bus, wrong domain
  CHECK(strata::detail::kfd_num_xcc(root, 0, 0x03, 0) == 0);  // no num_xcc: fall back to the CU count
  CHECK(strata::detail::kfd_num_xcc(root, 0, 0x42, 0) == 0);  // no such device
  CHECK(strata::detail::kfd_num_xcc(root / "missing", 0, 0xc1, 0) == 0);
  fs::remove_all(root);
}
