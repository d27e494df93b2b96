// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/pointer_table.hpp -- one declarative list of a host entry's pointer arguments and the
// one checker that applies it.
//
// Every host entry (strata::gemm and the grouped GEMM, the attention forward, backward and decode, the
// convolution's three passes, the embedding forward and backward) describes each pointer it takes in a
// row: its name as errors give it, its role (input, output, workspace), the alignment its elements
// need, the bytes the call reads or writes from it (where the descriptors say), the bytes the caller
// says it holds (a workspace), and the one argument it may be exactly (o == q, c == d). Then
//
//   pointer_table t("strata::gemm");
//   t.input("a", a.data).aligned(2, "its element size").spans(bytes_of_a);
//   t.output("d", d.data).aligned(2, "its element size").spans(bytes_of_d);
//   t.input("c", c.data).aligned(2, "its element size").spans(bytes_of_c).may_be("d", layout_key(...));
//   t.workspace("options.work", o.work.data, o.work.bytes).aligned(16).spans(need);
//   t.check();
//
// refuses, as strata::invalid_argument naming the operator and the argument:
//   - a null pointer where elements exist ("is a null pointer");
//   - a pointer off its alignment ("is not aligned to a float (4 bytes)", "must be 16-byte aligned");
//   - a workspace shorter than the call needs ("holds 8 bytes; the call needs 4096");
//   - an output or workspace sharing a byte with any input or any other output ("overlaps q ..."),
//     except the exact alias its row allows (same pointer and layout: "partly overlaps d ..." else);
//   - on the emulator with the host-pointer check on, a pointer no device allocation covers ("points
//     to host memory that no device allocation covers": strata/runtime/device_memory.hpp).
// An overlap error names the later of the two rows, so each table lists the argument to blame last
// (gemm: a, b, d, then c and the epilogue's inputs). Inputs may share memory with each other (a == b).
//
// Tests observe the tables (detail::pointer_table_hook): test/reliability/pointer_table_test.cpp walks
// every entry's table and plants each violation in each row, and counts the pointer fields of the
// option structs, so that a pointer added without a row fails there.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "strata/runtime/device_memory.hpp"
#include "strata/runtime/error.hpp"

namespace strata {

/// What an entry does with the memory behind a pointer.
enum class pointer_role { input, output, workspace };

inline const char* to_string(pointer_role r) {
  return r == pointer_role::input ? "input" : r == pointer_role::output ? "output" : "workspace";
}

/// A fingerprint of a layout (extents, strides, element type), for "may be exactly that argument".
inline std::uint64_t layout_key(std::initializer_list<long long> values) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the values' bytes
  for (long long v : values)
    for (int i = 0; i < 8; ++i) h = (h ^ ((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff)) * 1099511628211ull;
  return h;
}

/// One row of a pointer table.
struct pointer_arg {
  static constexpr std::uint64_t unknown = ~0ull;

  std::string name;                   // as the errors name it: "d", "options.lse", "tables[2].rows"
  pointer_role role = pointer_role::input;
  const void* data = nullptr;
  std::size_t align = 1;              // bytes; a power of two
  const char* align_note = nullptr;   // what the alignment is ("a float", "its element size"), or null
  std::uint64_t bytes = 0;            // bytes [data, data + bytes) the call reads or writes; 0: none
  bool has_elements = false;          // elements exist (bytes > 0, or an extent the table cannot size)
  std::uint64_t capacity = unknown;   // bytes the caller says it holds (a workspace), else unknown
  const char* capacity_note = nullptr;  // where the needed size comes from, for the error
  std::string alias_of;               // the argument this one may be exactly, or empty
  std::uint64_t layout = 0;           // compared with alias_of's for "exactly"

  /// Elements at `align`-byte multiples; `note` says what the alignment is, for the message.
  pointer_arg& aligned(std::size_t a, const char* note = nullptr) {
    align = a < 1 ? 1 : a;
    align_note = note;
    return *this;
  }
  /// The call touches `b` bytes from data (0: no elements: null is fine and nothing can overlap).
  pointer_arg& spans(std::uint64_t b) {
    bytes = b;
    has_elements = b > 0;
    return *this;
  }
  /// Elements exist but their extent is not known here (packed variable-length rows): null and
  /// alignment are checked, overlaps are not.
  pointer_arg& exists(bool e = true) {
    bytes = 0;
    has_elements = e;
    return *this;
  }
  /// The argument may be exactly `other` (same pointer and layout key), never partly.
  pointer_arg& may_be(std::string other, std::uint64_t key_of_both) {
    alias_of = std::move(other);
    layout = key_of_both;
    return *this;
  }
  /// The layout key this row compares with a row that may be exactly it.
  pointer_arg& keyed(std::uint64_t key) {
    layout = key;
    return *this;
  }
  pointer_arg& needs(const char* note) {
    capacity_note = note;
    return *this;
  }
  bool written() const { return role != pointer_role::input; }
};

class pointer_table;

namespace detail {
/// Test hook: called with each table just before it is checked (tests read the rows, or plant a
/// violation in one). Null in every normal run.
inline thread_local void (*pointer_table_hook)(pointer_table&) = nullptr;
}  // namespace detail

/// The pointer arguments of one call of one entry, and the checker.
class pointer_table {
 public:
  explicit pointer_table(std::string op) : op_(std::move(op)) { rows_.reserve(12); }

  pointer_arg& input(std::string name, const void* data) { return add(std::move(name), pointer_role::input, data); }
  pointer_arg& output(std::string name, const void* data) { return add(std::move(name), pointer_role::output, data); }
  pointer_arg& workspace(std::string name, const void* data, std::uint64_t capacity) {
    pointer_arg& r = add(std::move(name), pointer_role::workspace, data);
    r.capacity = capacity;
    return r;
  }

  const std::string& op() const { return op_; }
  std::vector<pointer_arg>& rows() { return rows_; }
  const std::vector<pointer_arg>& rows() const { return rows_; }
  const pointer_arg* find(const std::string& name) const {
    for (const pointer_arg& r : rows_)
      if (r.name == name) return &r;
    return nullptr;
  }

  /// Applies every row: null, alignment, length, then overlaps. Throws strata::invalid_argument.
  void check() {
    if (detail::pointer_table_hook) detail::pointer_table_hook(*this);
    for (const pointer_arg& r : rows_) check_row(r);
    // Overlaps: the rows with an extent sorted by address, each compared with those that start before
    // it ends (a grouped GEMM of many problems stays near n log n).
    std::vector<std::size_t> order;
    order.reserve(rows_.size());
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (rows_[i].data && rows_[i].bytes > 0) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return addr(rows_[x].data) != addr(rows_[y].data) ? addr(rows_[x].data) < addr(rows_[y].data) : x < y;
    });
    for (std::size_t k = 0; k < order.size(); ++k) {
      const pointer_arg& r = rows_[order[k]];
      const std::uintptr_t end = addr(r.data) + r.bytes;
      for (std::size_t m = k + 1; m < order.size() && addr(rows_[order[m]].data) < end; ++m) {
        const std::size_t i = std::max(order[k], order[m]), j = std::min(order[k], order[m]);
        check_pair(rows_[i], rows_[j]);
      }
    }
    // Last, the host-pointer check (emulator, STRATA_CHECK_HOST_POINTERS): each pointer with elements
    // must lie in one recorded device allocation (strata/runtime/device_memory.hpp).
    if (host_pointer_check())
      for (const pointer_arg& r : rows_)
        if (r.data && r.has_elements) detail::require_device_memory(op_, r.name, r.data, r.bytes ? r.bytes : 1);
  }

 private:
  pointer_arg& add(std::string name, pointer_role role, const void* data) {
    pointer_arg& r = rows_.emplace_back();
    r.name = std::move(name);
    r.role = role;
    r.data = data;
    return r;
  }
  [[noreturn]] void fail(const pointer_arg& r, const std::string& why) const { throw invalid_argument(op_, r.name, why); }

  static std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

  void check_row(const pointer_arg& r) const {
    // A workspace's length first: "holds 0 bytes; the call needs N" says more than "null" for {nullptr, 0}.
    if (r.capacity != pointer_arg::unknown && r.bytes > r.capacity)
      fail(r, "holds " + std::to_string(r.capacity) + " bytes; the call needs " + std::to_string(r.bytes) +
                  (r.capacity_note ? std::string(" (see ") + r.capacity_note + ")" : std::string()));
    if (r.has_elements && !r.data) fail(r, "is a null pointer");
    if (r.data && r.align > 1 && addr(r.data) % r.align != 0)
      fail(r, r.align_note ? std::string("is not aligned to ") + r.align_note + " (" + std::to_string(r.align) + " bytes)"
                           : "must be " + std::to_string(r.align) + "-byte aligned (it is " +
                                 std::to_string(addr(r.data) % r.align) + " bytes past a multiple of " +
                                 std::to_string(r.align) + " bytes)");
  }

  /// `later` against `earlier` (earlier in the table): an error names `later`.
  void check_pair(const pointer_arg& later, const pointer_arg& earlier) const {
    if (!later.written() && !earlier.written()) return;  // inputs may share memory
    if (!later.data || !earlier.data || later.bytes == 0 || earlier.bytes == 0) return;
    const std::uintptr_t a0 = addr(later.data), a1 = a0 + later.bytes, b0 = addr(earlier.data), b1 = b0 + earlier.bytes;
    if (!(a0 < b1 && b0 < a1)) return;
    const bool related = later.alias_of == earlier.name || earlier.alias_of == later.name;
    if (related) {
      if (later.data == earlier.data && later.layout == earlier.layout) return;
      const pointer_arg& may = later.alias_of == earlier.name ? later : earlier;
      fail(later, "partly overlaps " + earlier.name + " (" + may.name + " may be " + may.alias_of +
                      " only exactly: the same pointer and layout, or memory of its own)");
    }
    if (later.written() && earlier.written())
      fail(later, "overlaps " + earlier.name + " (outputs and workspaces must not share memory)");
    if (later.written())
      fail(later, "overlaps " + earlier.name + " (an output may not share memory with an input other blocks still read)");
    fail(later, "overlaps " + earlier.name + " (it is read while " + earlier.name + " is written)");
  }

  std::string op_;
  std::vector<pointer_arg> rows_;
};

}  // namespace strata
