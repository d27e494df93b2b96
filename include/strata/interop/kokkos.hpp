// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/interop/kokkos.hpp -- Strata on Kokkos data and execution spaces.
//
//   #include <Kokkos_Core.hpp>
//   #include <strata/interop/kokkos.hpp>
//   namespace sk = strata::interop::kokkos;
//
//   Kokkos::View<float**, Kokkos::LayoutRight> a("a", m, k);
//   auto t = sk::make_tensor_view(a);          // strata::tensor_view<float, layout<(m, k), (k, 1)>>
//   t(i, j) is a(i, j): the same address, for LayoutLeft, LayoutRight and LayoutStride, rank 1 to 4
//
//   strata::stream s = sk::stream_of(exec);    // the execution space instance's queue
//   strata::gemm(s, sk::to_matrix(a), sk::to_matrix(b), sk::to_matrix(d), sk::to_matrix(d));
//
// Views. make_tensor_view(v) views v's memory through a run-time layout whose extents and strides are
// v.extent(r) and v.stride(r), so every Kokkos layout (padded ones too) maps element for element. The
// element type keeps v's constness. The view must live in memory the backend of this translation unit
// reaches (host memory for the emulator, CUDA / HIP memory for those backends): a static_assert says
// so in words otherwise. to_matrix(v) describes a rank-2 view for the run-time-typed host entries
// (strata::gemm): it needs one unit stride (LayoutRight: row-major, LayoutLeft: column-major,
// LayoutStride with either) and a dtype Strata knows (float, f16, bf16, int8_t, int32_t); anything else is
// strata::invalid_argument naming the argument.
//
// Execution spaces. stream_of(exec) is a strata::stream that runs in order with exec's work:
//   Kokkos::Cuda      a non-owning wrap of exec.cuda_stream()   (CUDA backend)
//   Kokkos::HIP       a non-owning wrap of exec.hip_stream()    (HIP backend; Kokkos::Experimental::HIP
//                     in Kokkos 3.x)
//   host spaces       (Serial, OpenMP, Threads): exec.fence(), then a fresh emulator stream with the
//                     STRATA_EMU_* options; Strata's launches on it complete before they return.
// A space the backend cannot serve (Kokkos::Cuda in a host build) is a static_assert in words.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "strata/numeric/numeric.hpp"
#include "strata/ops/gemm/gemm.hpp"
#include "strata/runtime/error.hpp"
#include "strata/runtime/runtime.hpp"
#include "strata/tensor/layout.hpp"
#include "strata/tensor/tuple.hpp"
#include "strata/tensor/view.hpp"

namespace strata::interop::kokkos {

namespace detail {

template <class>
inline constexpr bool always_false = false;

/// True when the memory space MS is reachable by this translation unit's Strata backend.
template <class MS>
constexpr bool reachable() {
#if STRATA_BACKEND_CUDA
#if defined(KOKKOS_ENABLE_CUDA)
  return Kokkos::SpaceAccessibility<Kokkos::Cuda, MS>::accessible;
#else
  return false;
#endif
#elif STRATA_BACKEND_HIP
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
  return Kokkos::SpaceAccessibility<Kokkos::HIP, MS>::accessible;
#else
  return Kokkos::SpaceAccessibility<Kokkos::Experimental::HIP, MS>::accessible;
#endif
#else
  return false;
#endif
#else
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MS>::accessible;
#endif
}

template <class View, std::size_t... R>
auto layout_of(const View& v, std::index_sequence<R...>) {
  return strata::make_layout(strata::make_tuple(static_cast<long long>(v.extent(R))...),
                             strata::make_tuple(static_cast<long long>(v.stride(R))...));
}

template <class T>
constexpr bool known_dtype() {
  using U = std::remove_cv_t<T>;
  return std::is_same_v<U, float> || std::is_same_v<U, f16> || std::is_same_v<U, bf16> ||
         std::is_same_v<U, std::int8_t> || std::is_same_v<U, std::int32_t>;
}

template <class T>
constexpr strata::dtype dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return strata::dtype::fp32;
  else if constexpr (std::is_same_v<U, f16>) return strata::dtype::fp16;
  else if constexpr (std::is_same_v<U, bf16>) return strata::dtype::bf16;
  else if constexpr (std::is_same_v<U, std::int8_t>) return strata::dtype::int8;
  else return strata::dtype::int32;
}

}  // namespace detail

/// The layout (extents and strides, in elements) of a Kokkos::View of rank 1 to 4.
template <class View>
auto layout_of(const View& v) {
  static_assert(Kokkos::is_view<View>::value, "strata::interop::kokkos::layout_of: the argument must be a Kokkos::View");
  static_assert(View::rank >= 1 && View::rank <= 4,
                "strata::interop::kokkos: only views of rank 1 to 4 map to Strata tensor views");
  return detail::layout_of(v, std::make_index_sequence<View::rank>{});
}

/// A strata::tensor_view of the view's memory: element (i, j, ...) at the address of v(i, j, ...).
template <class View>
auto make_tensor_view(const View& v) {
  static_assert(Kokkos::is_view<View>::value,
                "strata::interop::kokkos::make_tensor_view: the argument must be a Kokkos::View");
  static_assert(detail::reachable<typename View::memory_space>(),
                "strata::interop::kokkos::make_tensor_view: the view's memory space is not reachable by this "
                "translation unit's Strata backend (host memory for the emulator, device memory for CUDA / HIP); "
                "create_mirror_view_and_copy it into a space that is");
  return strata::global_view(v.data(), layout_of(v));
}

/// A rank-2 view as a strata::ops::gemm::matrix (for strata::gemm): one of its strides must be 1.
template <class View>
ops::gemm::matrix to_matrix(const View& v, const char* name = "view") {
  static_assert(Kokkos::is_view<View>::value, "strata::interop::kokkos::to_matrix: the argument must be a Kokkos::View");
  static_assert(View::rank == 2, "strata::interop::kokkos::to_matrix: a matrix is a view of rank 2");
  static_assert(detail::reachable<typename View::memory_space>(),
                "strata::interop::kokkos::to_matrix: the view's memory space is not reachable by this translation "
                "unit's Strata backend (host memory for the emulator, device memory for CUDA / HIP)");
  static_assert(detail::known_dtype<typename View::value_type>(),
                "strata::interop::kokkos::to_matrix: the element type must be float, strata::f16, strata::bf16, "
                "std::int8_t or std::int32_t");
  const int rows = static_cast<int>(v.extent(0)), cols = static_cast<int>(v.extent(1));
  const long long s0 = static_cast<long long>(v.stride(0)), s1 = static_cast<long long>(v.stride(1));
  ops::gemm::matrix m{};
  m.data = v.data();
  m.rows = rows;
  m.cols = cols;
  m.type = detail::dtype_of<typename View::value_type>();
  // A dimension of extent 1 may carry any stride: it is never stepped over.
  if (s1 == 1 || cols <= 1) {
    m.order = ops::gemm::layout::row_major;
    m.ld = rows <= 1 ? (cols > 0 ? cols : 1) : s0;
  } else if (s0 == 1 || rows <= 1) {
    m.order = ops::gemm::layout::col_major;
    m.ld = cols <= 1 ? (rows > 0 ? rows : 1) : s1;
  } else {
    throw invalid_argument("strata::interop::kokkos::to_matrix", name,
                           "has strides (" + std::to_string(s0) + ", " + std::to_string(s1) +
                               "): a matrix needs one dimension of stride 1 (copy it to LayoutLeft or LayoutRight)");
  }
  return m;
}

/// A strata::stream ordered with the execution space instance `exec` (see the header comment).
template <class ExecSpace>
strata::stream stream_of(const ExecSpace& exec) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "strata::interop::kokkos::stream_of: the argument must be a Kokkos execution space instance");
#if STRATA_BACKEND_CUDA && defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) return strata::stream::wrap(exec.cuda_stream());
  else
#elif STRATA_BACKEND_HIP && defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) return strata::stream::wrap(exec.hip_stream());
  else
#else
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Experimental::HIP>) return strata::stream::wrap(exec.hip_stream());
  else
#endif
#endif
  {
#if STRATA_BACKEND_HOST
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible,
                  "strata::interop::kokkos::stream_of: this translation unit runs Strata on the host emulator, which "
                  "serves host execution spaces (Serial, OpenMP, Threads) only; build it for CUDA or HIP to run "
                  "on a device space");
    exec.fence();  // Kokkos work queued before this call finishes before Strata's first launch
    return strata::stream{};
#else
    static_assert(detail::always_false<ExecSpace>,
                  "strata::interop::kokkos::stream_of: this translation unit's Strata backend (CUDA or HIP) "
                  "serves only Kokkos::Cuda or Kokkos::HIP instances respectively");
#endif
  }
}

}  // namespace strata::interop::kokkos
