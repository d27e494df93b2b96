// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A downstream program linking strata::kokkos: Kokkos and Strata headers in one translation unit, and
// the Kokkos runtime linked. (Strata's Kokkos interop headers come with the Kokkos issue.)
#include <Kokkos_Core.hpp>
#include <strata/strata.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  int sum = 0;
  Kokkos::parallel_reduce("strata_consumer", 10, KOKKOS_LAMBDA(int i, int& acc) { acc += i; }, sum);
  Kokkos::finalize();
  if (sum != 45) {
    std::printf("Kokkos sum is %d, not 45\n", sum);
    return 1;
  }
  std::printf("Kokkos %s with Strata %s\nstrata-consumer: ok\n", Kokkos::DefaultExecutionSpace::name(),
              STRATA_VERSION_STRING);
  return 0;
}
