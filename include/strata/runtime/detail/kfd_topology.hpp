// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/detail/kfd_topology.hpp -- the XCD count of an AMD GPU from the KFD topology in sysfs.
//
// HIP reports a device's CUs but not its XCDs. The amdgpu driver's KFD topology does: each node under
// /sys/class/kfd/kfd/topology/nodes/<n>/properties is a list of "key value" lines, and GPU nodes carry
// `num_xcc` (XCDs in this partition), `domain` and `location_id` (PCI bus << 8 | device << 3 | function).
// Host-only, plain C++: the HIP runtime matches a device by its PCI address; tests use a fake tree.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace strata::detail {

/// num_xcc of the KFD node at PCI (domain, bus, device), or 0 when the topology is absent, the node is
/// not found, or it does not report num_xcc.
inline int kfd_num_xcc(const std::filesystem::path& nodes_dir, int pci_domain, int pci_bus, int pci_device) {
  std::error_code ec;
  if (!std::filesystem::is_directory(nodes_dir, ec)) return 0;
  const long long want_location = (static_cast<long long>(pci_bus) << 8) | (static_cast<long long>(pci_device) << 3);
  for (const auto& node : std::filesystem::directory_iterator(nodes_dir, ec)) {
    std::ifstream in(node.path() / "properties");
    if (!in) continue;
    long long location = -1, domain = 0, num_xcc = 0, simd_count = 0;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string key;
      long long value = 0;
      if (!(fields >> key >> value)) continue;
      if (key == "location_id") location = value;
      else if (key == "domain") domain = value;
      else if (key == "num_xcc") num_xcc = value;
      else if (key == "simd_count") simd_count = value;
    }
    // CPU nodes have no SIMDs; the function number (low 3 bits) is ignored: one GPU per PCI device.
    if (simd_count > 0 && domain == pci_domain && (location & ~7LL) == want_location && num_xcc > 0)
      return static_cast<int>(num_xcc);
  }
  return 0;
}

}  // namespace strata::detail
