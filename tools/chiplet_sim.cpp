// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// chiplet_sim -- the modelled L2 / LLC traffic of each tile order, side by side, for one problem on one
// target. A model, not a measurement: see docs/chiplets.md.
//
//   chiplet_sim gemm --m 8192 --n 8192 --k 8192 --tile 256x256x64 --target gfx942
//   chiplet_sim attention --batch 4 --heads 64 --heads-k 8 --seqlen-q 4096 --seqlen-k 4096 --head-dim 128
//               --tile 128x64 --target gfx950
//
// Common options: --target gfx942|gfx950|sm90a|sm100a|host (default gfx942), --chiplets <STRATA_CHIPLETS
// syntax> (overrides the target; the STRATA_CHIPLETS variable does too), --elt <bytes> (default 2),
// --occupancy <blocks per CU> (default 1), --line <bytes> (default 128), --no-llc, --grain panel|line,
// --csv (machine-readable rows; used by tools/plot_chiplet_sim.py).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/arch/arch.hpp"
#include "strata/hierarchy/chiplet_topology.hpp"
#include "strata/simulator/locality.hpp"
#include "strata/simulator/orders.hpp"

namespace sim = strata::simulator;
namespace arch = strata::arch;

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "chiplet_sim: %s\n"
               "usage: chiplet_sim gemm --m M --n N --k K [--tile 256x256x64] [options]\n"
               "       chiplet_sim attention --batch B --heads H [--heads-k HK] --seqlen-q SQ [--seqlen-k SK]\n"
               "                   [--head-dim D] [--tile 128x64] [options]\n"
               "options: --target gfx942|gfx950|sm90a|sm100a|host  --chiplets 8x38[,l2=4M][,llc=256M]\n"
               "         --elt BYTES  --occupancy BLOCKS_PER_CU  --line BYTES  --no-llc  --grain panel|line  --csv\n",
               why.c_str());
  std::exit(2);
}

long long number(std::string_view flag, const char* v) {
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || x <= 0) usage(std::string(flag) + " needs a positive integer, not '" + v + "'");
  return x;
}

/// "256x256x64" -> {256, 256, 64}; `parts` numbers expected.
std::vector<int> dims_of(std::string_view flag, std::string v, int parts) {
  std::vector<int> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t x = v.find('x', start);
    const std::string p = v.substr(start, x == std::string::npos ? std::string::npos : x - start);
    out.push_back(static_cast<int>(number(flag, p.c_str())));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (static_cast<int>(out.size()) != parts) usage(std::string(flag) + " '" + v + "' needs " + std::to_string(parts) + " sizes");
  return out;
}

arch::chiplet_topology target_topology(std::string_view t) {
  if (t == "gfx942") return arch::gfx942::chiplets;
  if (t == "gfx950") return arch::gfx950::chiplets;
  if (t == "sm90a") return arch::sm90a::chiplets;
  if (t == "sm100a") return arch::sm100a::chiplets;
  if (t == "gfx90a") return arch::gfx90a::chiplets;
  if (t == "host") return arch::host::chiplets;
  usage("unknown target '" + std::string(t) + "'");
}

double gib(std::uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0); }

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) usage("give a mode: gemm or attention");
  const std::string mode = argv[1];
  if (mode != "gemm" && mode != "attention") usage("unknown mode '" + mode + "'");
  sim::gemm_shape g;
  g.m = g.n = g.k = 0;
  sim::attention_shape a;
  std::string target = "gfx942", chiplets, grain = "panel";
  std::string tile = mode == "gemm" ? "256x256x64" : "128x64";
  int elt = 2, occupancy = 1;
  long long line = 128;
  bool llc = true, csv = false;
  for (int i = 2; i < argc; ++i) {
    const std::string f = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) usage(f + " needs a value");
      return argv[++i];
    };
    if (f == "--m") g.m = number(f, val());
    else if (f == "--n") g.n = number(f, val());
    else if (f == "--k") g.k = number(f, val());
    else if (f == "--batch") a.batch = static_cast<int>(number(f, val()));
    else if (f == "--heads") a.heads = static_cast<int>(number(f, val()));
    else if (f == "--heads-k") a.heads_k = static_cast<int>(number(f, val()));
    else if (f == "--seqlen-q") a.seqlen_q = number(f, val());
    else if (f == "--seqlen-k") a.seqlen_k = number(f, val());
    else if (f == "--head-dim") a.head_dim = static_cast<int>(number(f, val()));
    else if (f == "--tile") tile = val();
    else if (f == "--target") target = val();
    else if (f == "--chiplets") chiplets = val();
    else if (f == "--elt") elt = static_cast<int>(number(f, val()));
    else if (f == "--occupancy") occupancy = static_cast<int>(number(f, val()));
    else if (f == "--line") line = number(f, val());
    else if (f == "--grain") grain = val();
    else if (f == "--no-llc") llc = false;
    else if (f == "--csv") csv = true;
    else if (f == "--help" || f == "-h") usage("help");
    else usage("unknown option '" + f + "'");
  }
  if (grain != "panel" && grain != "line") usage("--grain is panel or line");

  sim::machine mc;
  mc.topology = strata::chiplet::from_environment(target_topology(target));
  if (!chiplets.empty()) mc.topology = strata::chiplet::parse_topology(chiplets, mc.topology, "--chiplets");
  mc.blocks_per_unit = occupancy;
  mc.line_bytes = static_cast<std::uint64_t>(line);
  mc.use_llc = llc;
  mc.grain = grain == "line" ? sim::granularity::line : sim::granularity::panel;

  std::unique_ptr<sim::workload> w;
  strata::order::problem p;
  std::string what;
  if (mode == "gemm") {
    if (!g.m || !g.n || !g.k) usage("gemm needs --m, --n and --k");
    const auto t = dims_of("--tile", tile, 3);
    g.tile_m = t[0], g.tile_n = t[1], g.tile_k = t[2], g.element_bytes = elt;
    w = std::make_unique<sim::gemm_workload>(g);
    p = sim::order_problem(g, mc);
    what = "GEMM " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) + ", tile " + tile +
           ", " + std::to_string(elt) + "-byte elements";
  } else {
    if (!a.seqlen_q) usage("attention needs --seqlen-q");
    if (!a.seqlen_k) a.seqlen_k = a.seqlen_q;
    const auto t = dims_of("--tile", tile, 2);
    a.tile_q = t[0], a.tile_kv = t[1], a.element_bytes = elt;
    w = std::make_unique<sim::attention_workload>(a);
    p = sim::order_problem(a, mc);
    what = "attention fwd b" + std::to_string(a.batch) + " h" + std::to_string(a.heads) + " hk" +
           std::to_string(a.heads_k) + " sq" + std::to_string(a.seqlen_q) + " sk" + std::to_string(a.seqlen_k) +
           " d" + std::to_string(a.head_dim) + ", tile " + tile;
  }

  const auto orders = sim::standard_orders();
  if (!csv) {
    std::printf("%s on %s [%s], %d block(s)/CU, %s granularity\n", what.c_str(), target.c_str(),
                strata::chiplet::to_string(mc.topology).c_str(), occupancy, grain.c_str());
    std::printf("tiles %lld x %lld = %lld, %lld steps, auto group size %lld; unique operand bytes %.3f GiB\n",
                p.tiles_m, p.tiles_n, p.tiles(), p.k_steps, strata::order::auto_group_size(p),
                gib(w->unique_bytes));
    std::printf("%-44s %8s %12s %8s %12s %13s\n", "order", "L2 hit", "below L2", "vs dflt", "below LLC",
                "tiles/chiplet");
  } else {
    std::printf("mode,target,order,l2_hit_rate,bytes_requested,bytes_below_l2,bytes_below_llc,unique_bytes,"
                "min_tiles,max_tiles\n");
  }
  std::uint64_t base = 0;
  for (const auto& o : orders) {
    const auto t0 = std::chrono::steady_clock::now();
    const sim::result r = sim::simulate(mc, *w, o.tabulate(p));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (base == 0) base = r.bytes_below_l2 ? r.bytes_below_l2 : 1;
    if (csv) {
      std::printf("%s,%s,%s,%.6f,%llu,%llu,%llu,%llu,%lld,%lld\n", mode.c_str(), target.c_str(), o.name.c_str(),
                  r.hit_rate(), static_cast<unsigned long long>(r.bytes_requested),
                  static_cast<unsigned long long>(r.bytes_below_l2), static_cast<unsigned long long>(r.bytes_below_llc),
                  static_cast<unsigned long long>(r.unique_bytes), r.min_tiles(), r.max_tiles());
    } else {
      std::printf("%-44s %8.3f %8.2f GiB %7.2fx %8.2f GiB %6lld-%-6lld (%.2fs)\n", o.name.c_str(), r.hit_rate(),
                  gib(r.bytes_below_l2), static_cast<double>(r.bytes_below_l2) / static_cast<double>(base),
                  gib(r.bytes_below_llc), r.min_tiles(), r.max_tiles(), s);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "chiplet_sim: %s\n", e.what());
  return 1;
}
