// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tools/fragment_diagram.cpp -- prints the per-lane fragment layout of every MMA atom, from the atoms'
// own constexpr tables (a_coord / b_coord / c_coord), as the diagrams of docs/layouts-and-atoms.md.
//
//   fragment_diagram                   the diagrams, in markdown, on stdout
//   fragment_diagram --check <file>    exit 1 unless <file> holds exactly that output between the
//                                      lines `<!-- fragment_diagram:begin -->` and `<!-- fragment_diagram:end -->`
//
// Each diagram is the operand tile (rows x columns of A, B or C) with, in every cell, "lane:value":
// the lane that holds the element and its index in that lane's fragment. Since the cells come from the
// same functions the device code and the emulator use, the page cannot drift from the code: rerun the
// tool and paste (or run --check) after changing an atom. Tiles wider than 16 columns are printed in
// 16-column slices so that they fit a page. An atom whose operand has the same table as one already
// printed says so instead of repeating it (the fp8 forms share the int8 tables, for example).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "strata/mma/mma.hpp"

namespace {

namespace mma = strata::mma;
using mma::operand;

constexpr int slice = 16;  // columns per printed slice

struct table {
  int rows = 0, cols = 0, lanes = 0, values = 0;
  bool broadcast = false;
  std::vector<std::string> cell;  // rows * cols, "lane:value"
  std::string owner_summary;      // what lanes 0 and 1 hold
};

template <class Atom, operand Op>
table make_table() {
  using L = mma::fragment_layout<Atom, Op>;
  static_assert(L::bijective(), "an atom's layout must own each element exactly once");
  table t{L::rows, L::cols, L::lanes, L::values, L::broadcast, {}, {}};
  t.cell.assign(static_cast<std::size_t>(t.rows) * t.cols, "?");
  for (int l = 0; l < (L::broadcast ? 1 : t.lanes); ++l)
    for (int v = 0; v < t.values; ++v) {
      const mma::coord c = L::at(l, v);
      t.cell[static_cast<std::size_t>(c.row) * t.cols + c.col] =
          (L::broadcast ? std::string("*") : std::to_string(l)) + ":" + std::to_string(v);
    }
  for (int l = 0; l < 2 && l < t.lanes; ++l) {
    t.owner_summary += "lane " + std::to_string(l) + ":";
    for (int v = 0; v < t.values; ++v) {
      const mma::coord c = L::at(l, v);
      t.owner_summary += " (" + std::to_string(c.row) + "," + std::to_string(c.col) + ")";
    }
    t.owner_summary += "\n";
  }
  return t;
}

struct printed {
  std::string atom, op;
  table t;
};

bool same(const table& x, const table& y) {
  return x.rows == y.rows && x.cols == y.cols && x.lanes == y.lanes && x.cell == y.cell;
}

const char* op_name(operand op) { return op == operand::a ? "A" : op == operand::b ? "B" : "C"; }
const char* dims(operand op) { return op == operand::a ? "(m, k)" : op == operand::b ? "(k, n)" : "(m, n)"; }

void print_grid(std::ostringstream& out, const table& t) {
  std::size_t w = 1;
  for (const auto& c : t.cell) w = std::max(w, c.size());
  for (int c0 = 0; c0 < t.cols; c0 += slice) {
    const int c1 = std::min(t.cols, c0 + slice);
    if (t.cols > slice) out << "columns " << c0 << ".." << c1 - 1 << ":\n";
    out << "      ";
    for (int c = c0; c < c1; ++c) {
      const std::string h = std::to_string(c);
      out << std::string(w + 1 - h.size(), ' ') << h;
    }
    out << "\n";
    for (int r = 0; r < t.rows; ++r) {
      const std::string h = std::to_string(r);
      out << "  " << std::string(3 - h.size(), ' ') << h << " ";
      for (int c = c0; c < c1; ++c) {
        const std::string& s = t.cell[static_cast<std::size_t>(r) * t.cols + c];
        out << std::string(w + 1 - s.size(), ' ') << s;
      }
      out << "\n";
    }
  }
}

template <class Atom>
void atom_section(std::ostringstream& out, std::vector<printed>& seen, const char* title) {
  out << "### " << title << "\n\n";
  out << "`" << Atom::name << "`: M = " << Atom::M << ", N = " << Atom::N << ", K = " << Atom::K << ", "
      << Atom::warp_size << " lanes; values per lane: A " << Atom::a_values << ", B " << Atom::b_values << ", C "
      << Atom::c_values << ".\n\n";
  const table ts[3] = {make_table<Atom, operand::a>(), make_table<Atom, operand::b>(), make_table<Atom, operand::c>()};
  const operand ops[3] = {operand::a, operand::b, operand::c};
  for (int i = 0; i < 3; ++i) {
    const table& t = ts[i];
    const printed* twin = nullptr;
    for (const auto& p : seen)
      if (same(p.t, t)) twin = &p;
    if (twin) {
      out << "- " << op_name(ops[i]) << " " << dims(ops[i]) << ": the same table as " << twin->op << " of "
          << twin->atom << ".\n\n";
      continue;
    }
    out << "- " << op_name(ops[i]) << " " << dims(ops[i]) << ", " << t.rows << " x " << t.cols;
    if (t.broadcast) out << " (every lane holds a copy: `*` = any lane)";
    out << ":\n\n```text\n";
    print_grid(out, t);
    if (!t.broadcast) out << t.owner_summary;
    out << "```\n\n";
    seen.push_back({title, op_name(ops[i]), t});
  }
}

std::string diagrams() {
  std::ostringstream out;
  std::vector<printed> seen;
  out << "<!-- generated by tools/fragment_diagram from the atoms' tables; do not edit by hand -->\n\n";
  atom_section<mma::fma_atom<float, float, 32>>(out, seen, "Scalar FMA (every target; 32 lanes shown)");
  atom_section<mma::sm80_16x8x16_f32f16>(out, seen, "sm80 mma.sync m16n8k16 f16");
  atom_section<mma::sm80_16x8x16_f32bf16>(out, seen, "sm80 mma.sync m16n8k16 bf16");
  atom_section<mma::sm80_16x8x8_f32tf32>(out, seen, "sm80 mma.sync m16n8k8 tf32");
  atom_section<mma::sm80_16x8x32_s32s8>(out, seen, "sm80 mma.sync m16n8k32 s8");
  atom_section<mma::sm89_16x8x32_f32e4m3>(out, seen, "sm89+ mma.sync m16n8k32 e4m3");
  atom_section<mma::sm89_16x8x32_f32e5m2>(out, seen, "sm89+ mma.sync m16n8k32 e5m2");
  atom_section<mma::cdna_32x32x8_f32f16>(out, seen, "CDNA MFMA 32x32x8 f16");
  atom_section<mma::cdna_32x32x8_f32bf16>(out, seen, "CDNA MFMA 32x32x8 bf16");
  atom_section<mma::cdna_16x16x16_f32f16>(out, seen, "CDNA MFMA 16x16x16 f16");
  atom_section<mma::cdna_16x16x16_f32bf16>(out, seen, "CDNA MFMA 16x16x16 bf16");
  atom_section<mma::cdna2_32x32x8_i32i8>(out, seen, "CDNA2 MFMA 32x32x8 i8");
  atom_section<mma::cdna2_16x16x16_i32i8>(out, seen, "CDNA2 MFMA 16x16x16 i8");
  atom_section<mma::cdna3_32x32x16_i32i8>(out, seen, "CDNA3 MFMA 32x32x16 i8");
  atom_section<mma::cdna3_16x16x32_i32i8>(out, seen, "CDNA3 MFMA 16x16x32 i8");
  atom_section<mma::cdna3_32x32x16_f32e4m3>(out, seen, "CDNA3 MFMA 32x32x16 fp8 (FNUZ e4m3)");
  atom_section<mma::cdna3_16x16x32_f32e4m3>(out, seen, "CDNA3 MFMA 16x16x32 fp8 (FNUZ e4m3)");
  atom_section<mma::cdna3_32x32x16_f32e5m2>(out, seen, "CDNA3 MFMA 32x32x16 bf8 (FNUZ e5m2)");
  atom_section<mma::cdna3_16x16x32_f32e5m2>(out, seen, "CDNA3 MFMA 16x16x32 bf8 (FNUZ e5m2)");
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string text = diagrams();
  if (argc == 1) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (argc == 3 && std::string(argv[1]) == "--check") {
    std::ifstream in(argv[2]);
    if (!in) {
      std::fprintf(stderr, "fragment_diagram: cannot read %s\n", argv[2]);
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str(), begin = "<!-- fragment_diagram:begin -->\n", end = "<!-- fragment_diagram:end -->";
    const auto b = doc.find(begin), e = doc.find(end);
    if (b == std::string::npos || e == std::string::npos || e < b) {
      std::fprintf(stderr, "fragment_diagram: %s has no '%s' ... '%s' section\n", argv[2], begin.c_str(), end.c_str());
      return 1;
    }
    if (doc.compare(b + begin.size(), e - b - begin.size(), text) != 0) {
      std::fprintf(stderr,
                   "fragment_diagram: the diagrams in %s differ from the atoms' tables; regenerate them with "
                   "fragment_diagram and paste the output between the markers\n",
                   argv[2]);
      return 1;
    }
    std::printf("fragment_diagram: %s matches the atoms' tables\n", argv[2]);
    return 0;
  }
  std::fprintf(stderr, "usage: fragment_diagram [--check docs/layouts-and-atoms.md]\n");
  return 2;
}
