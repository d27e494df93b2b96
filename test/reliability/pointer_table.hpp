// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// test/reliability/pointer_table.hpp -- the walk of a host entry's pointer table (issue 30, item 1).
//
// walk(op, call, passed) runs `call` (a valid call of one entry) once and reads the table the entry
// checked (strata::detail::pointer_table_hook), then, row by row, plants each violation the row can
// have into the table the entry builds on a new call -- a null pointer where elements exist, a pointer
// off its alignment, a workspace one byte too short, an overlap with an argument it may not share
// memory with -- and requires the entry to refuse it with strata::invalid_argument naming the
// operator and the argument. `passed` maps the names of the pointers the test passed to their values:
// each must have a row, and each row must read the pointer passed under its name.
//
// pointer_fields<T>() counts the fields of an argument struct that are not numbers, enums or element
// types (pointers, spans, nested descriptors): each test compares it with the rows it expects for that
// struct, so a pointer field added to an options struct without a row in the table fails the test.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "strata/numeric/dtype.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/pointer_table.hpp"

namespace pointer_walk {

// ---- counting the fields of an aggregate that are not plain numbers ---------------------------------

struct any_field {
  template <class T>
  operator T&() const;  // unevaluated only
};
/// Converts to the fields that are not plain values. An element type held in a class that converts to
/// strata::dtype (embedding::element_type) is a plain value too.
struct non_plain_field {
  template <class T>
    requires(!std::is_arithmetic_v<T> && !std::is_enum_v<T> && !std::is_convertible_v<T, strata::dtype>)
  operator T&() const;
};
template <class T, std::size_t... I>
constexpr bool init_with(std::index_sequence<I...>) {
  return requires { T{(void(I), any_field{})...}; };
}
template <class T, std::size_t N = 0>
constexpr std::size_t field_count() {
  if constexpr (N < 64 && init_with<T>(std::make_index_sequence<N + 1>{})) return field_count<T, N + 1>();
  else return N;
}
template <std::size_t K, std::size_t I>
using probe = std::conditional_t<I == K, non_plain_field, any_field>;
template <class T, std::size_t K, std::size_t... I>
constexpr bool non_plain_at(std::index_sequence<I...>) {
  return requires { T{probe<K, I>{}...}; };
}
template <class T, std::size_t... K>
constexpr std::size_t count_non_plain(std::index_sequence<K...>) {
  return (std::size_t(non_plain_at<T, K>(std::make_index_sequence<sizeof...(K)>{})) + ... + std::size_t(0));
}
/// Fields of aggregate T that are pointers, spans or descriptors (not numbers, bools, enums or element types).
template <class T>
constexpr std::size_t pointer_fields() {
  return count_non_plain<T>(std::make_index_sequence<field_count<T>()>{});
}

// ---- the walk ------------------------------------------------------------------------------------------

inline std::vector<strata::pointer_table>& seen() {
  static std::vector<strata::pointer_table> v;
  return v;
}
inline std::function<void(strata::pointer_table&)>& planter() {
  static std::function<void(strata::pointer_table&)> f;
  return f;
}
inline void hook(strata::pointer_table& t) {
  if (planter()) planter()(t);
  else seen().push_back(t);
}

/// Installs the hook for one scope.
struct observe {
  observe() { strata::detail::pointer_table_hook = &hook; }
  ~observe() {
    strata::detail::pointer_table_hook = nullptr;
    planter() = nullptr;
  }
};

/// Runs `call` with `plant` applied to the table; the call must throw invalid_argument naming op and arg.
inline std::string refused(const std::function<void()>& call, const std::function<void(strata::pointer_table&)>& plant,
                           const std::string& op, const std::string& arg, const std::string& what) {
  planter() = plant;
  std::string msg;
  try {
    call();
  } catch (const strata::invalid_argument& e) {
    msg = e.what();
    INFO(what << ": " << msg);
    CHECK(e.op() == op);
    CHECK(e.argument() == arg);
  }
  planter() = nullptr;
  if (msg.empty()) FAIL_CHECK(what << " was accepted (expected " << op << " to refuse argument '" << arg << "')");
  return msg;
}

/// Names of the rows with elements, over every walk of a test (for the coverage checks).
inline std::set<std::string>& covered() {
  static std::set<std::string> s;
  return s;
}

/// The walk of one valid call (see the top of this file). Returns the table the call checked.
inline strata::pointer_table walk(const std::string& op, const std::function<void()>& call,
                                  const std::map<std::string, const void*>& passed) {
  observe scope;
  seen().clear();
  REQUIRE_NOTHROW(call());
  REQUIRE(seen().size() == 1);
  const strata::pointer_table t = seen().front();
  CHECK(t.op() == op);
  for (const auto& [name, ptr] : passed) {
    INFO("argument " << name);
    const strata::pointer_arg* r = t.find(name);
    REQUIRE(r != nullptr);  // every pointer the test passes has a row
    CHECK(r->data == ptr);  // and the row reads that pointer
  }
  const auto& rows = t.rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const strata::pointer_arg& r = rows[i];
    INFO("row " << r.name << " (" << strata::to_string(r.role) << ")");
    if (r.has_elements) covered().insert(r.name);
    const auto at = [i](std::function<void(strata::pointer_arg&)> f) {
      return [i, f](strata::pointer_table& tt) { f(tt.rows()[i]); };
    };
    if (r.has_elements) {
      const auto m = refused(call, at([](strata::pointer_arg& x) { x.data = nullptr; }), op, r.name, "a null " + r.name);
      CHECK_THAT(m, Catch::Contains("null pointer"));
    }
    if (r.data && r.align > 1) {
      const auto m = refused(call, at([](strata::pointer_arg& x) { x.data = static_cast<const char*>(x.data) + x.align / 2; }), op,
                             r.name, "a misaligned " + r.name);
      CHECK_THAT(m, Catch::Contains("aligned"));
    }
    if (r.capacity != strata::pointer_arg::unknown && r.bytes > 0) {
      const auto m = refused(call, at([](strata::pointer_arg& x) { x.capacity = x.bytes - 1; }), op, r.name, "a short " + r.name);
      CHECK_THAT(m, Catch::Contains("holds"));
    }
    if (!r.data || r.bytes == 0) continue;
    // Overlap: over the first row it may not share memory with (an input with an output, an output
    // or workspace with anything); by one alignment step where the two may be each other exactly.
    bool planted = false;
    for (std::size_t j = 0; j < rows.size() && !planted; ++j) {
      const strata::pointer_arg& p = rows[j];
      if (j == i || !p.data || p.bytes == 0 || (!r.written() && !p.written())) continue;
      const bool related = r.alias_of == p.name || p.alias_of == r.name;
      const std::size_t shift = related ? std::max(r.align, p.align) : 0;
      if (shift >= p.bytes) continue;
      const void* target = static_cast<const char*>(p.data) + shift;
      const std::string blamed = rows[std::max(i, j)].name;
      const auto m = refused(call, at([target](strata::pointer_arg& x) { x.data = target; }), op, blamed,
                             r.name + " over " + p.name);
      CHECK_THAT(m, Catch::Contains("overlaps"));
      planted = true;
    }
    CHECK((planted || !r.written()));  // every output has something it may not overlap
  }
  return t;
}

/// The rows a test expects for the pointer fields of one struct: their count must be the struct's.
template <class T>
void fields_have_rows(const char* type, std::size_t host_only, std::initializer_list<const char*> rows) {
  INFO(type << " has " << pointer_fields<T>() << " pointer (or descriptor) fields; this test knows " << rows.size()
            << " rows and " << host_only << " host-only fields for them. A field was added: give it a row in the "
            << "entry's pointer table, then here.");
  CHECK(pointer_fields<T>() == rows.size() + host_only);
  for (const char* r : rows) {
    INFO("row " << r << " never had elements in this test's walks");
    CHECK(covered().count(r) == 1);
  }
}

}  // namespace pointer_walk
