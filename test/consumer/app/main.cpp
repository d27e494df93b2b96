// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A downstream program that needs only strata::strata: it includes the umbrella header, as the
// documentation tells users to, and prints what it sees so the test can check it really ran.
#include <strata/strata.hpp>

#include <cstdio>

namespace {

template <strata::arch::target... Targets>
void print_targets() {
  (std::printf("  %-7.*s warp %2d  chiplets %d\n", static_cast<int>(Targets::name.size()),
               Targets::name.data(), Targets::warp_size, Targets::chiplets.count),
   ...);
}

}  // namespace

int main() {
  namespace arch = strata::arch;
  std::printf("Strata %s, backend %s, current target %.*s\n", STRATA_VERSION_STRING,
              strata::to_string(strata::compiled_backend), static_cast<int>(arch::current::name.size()),
              arch::current::name.data());
  print_targets<arch::sm80, arch::sm90a, arch::sm100a, arch::gfx90a, arch::gfx942, arch::gfx950,
                arch::host>();
  std::printf("strata-consumer: ok\n");
  return 0;
}
