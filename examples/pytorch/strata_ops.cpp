// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/pytorch/strata_ops.cpp -- Strata's GEMM, attention and embedding bag as PyTorch operators.
//
//   torch.ops.strata.gemm(a, b)                                   a @ b, 2-D, fp32 / fp16 / bf16
//   torch.ops.strata.attention(q, k, v, causal, scale)           (B, H, S, D) like
//                                                                 F.scaled_dot_product_attention (GQA:
//                                                                 k and v may have fewer heads)
//   torch.ops.strata.embedding_bag(weight, indices, offsets, mode, per_sample_weights, padding_idx)
//                                                                 F.embedding_bag, mode 0 sum / 1 mean /
//                                                                 2 max, offsets without the last one
//
// One source, built twice (setup.py): as C++ into strata_torch_cpu, where Strata's backend is the host
// emulator and the operators are registered for CPU tensors (the emulator's "device" memory is host
// memory), and as CUDA (strata_ops_cuda.cu includes this file) into strata_torch_cuda, registered for
// CUDA tensors on PyTorch's current stream. Two libraries, not one: a translation unit is compiled for
// one Strata backend, and the backends define the same inline names (strata::stream, ...) differently,
// so they must not be linked into one shared object.
#include <cstdint>
#include <torch/library.h>
#include <ATen/ATen.h>
#if STRATA_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <strata/attention.hpp>
#include <strata/embedding.hpp>
#include <strata/gemm.hpp>

namespace {

namespace sg = strata::ops::gemm;

#if STRATA_TORCH_CUDA
constexpr c10::DeviceType device_type = c10::DeviceType::CUDA;
strata::stream current_stream(const at::Tensor& t) {
  return strata::stream::wrap(at::cuda::getCurrentCUDAStream(t.device().index()).stream());
}
#else
constexpr c10::DeviceType device_type = c10::DeviceType::CPU;
strata::stream current_stream(const at::Tensor&) { return strata::stream{}; }
#endif

// The CPU library runs Strata's emulator on PyTorch's own CPU tensors: it registers each tensor's storage
// as device memory for the call (strata::device_memory_registration), so the emulator's host-pointer
// check (STRATA_CHECK_HOST_POINTERS=1, on in Strata's tests) accepts them and still refuses anything
// else. In the CUDA library the registration compiles to nothing.
struct registered {
  std::vector<std::unique_ptr<strata::device_memory_registration>> held;
  explicit registered(std::initializer_list<const at::Tensor*> tensors) {
    for (const at::Tensor* t : tensors)
      if (t->defined() && t->storage().nbytes() > 0)
        held.push_back(std::make_unique<strata::device_memory_registration>(t->storage().data(), t->storage().nbytes()));
  }
};

void check_device(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.device().type() == device_type, "strata: ", name, " is on ", t.device(), ", expected ",
              c10::DeviceTypeName(device_type));
}

// A tensor's element type as strata::dtype: every operator here takes float32, float16 and bfloat16.
strata::dtype dtype_of(const at::Tensor& t, const char* op) {
  switch (t.scalar_type()) {
    case at::kFloat: return strata::dtype::fp32;
    case at::kHalf: return strata::dtype::fp16;
    case at::kBFloat16: return strata::dtype::bf16;
    default: TORCH_CHECK(false, op, ": dtype ", t.scalar_type(), " is not supported (float32, float16, bfloat16)");
  }
}

// A 2-D tensor as a Strata matrix: row-major if its last stride is 1, column-major if its first is.
sg::matrix as_matrix(at::Tensor& t) {
  if (!(t.stride(1) == 1 || t.size(1) <= 1) && !(t.stride(0) == 1 || t.size(0) <= 1)) t = t.contiguous();
  const bool row = t.stride(1) == 1 || t.size(1) <= 1;
  long long ld = row ? t.stride(0) : t.stride(1);
  if (ld < (row ? t.size(1) : t.size(0))) ld = std::max<long long>(1, row ? t.size(1) : t.size(0));
  return {t.data_ptr(), int(t.size(0)), int(t.size(1)), ld, row ? sg::layout::row_major : sg::layout::col_major,
          dtype_of(t, "strata::gemm"), 0};
}

at::Tensor gemm(const at::Tensor& a_in, const at::Tensor& b_in) {
  TORCH_CHECK(a_in.dim() == 2 && b_in.dim() == 2, "strata::gemm: a and b must be 2-D");
  TORCH_CHECK(a_in.size(1) == b_in.size(0), "strata::gemm: a is ", a_in.sizes(), ", b is ", b_in.sizes());
  TORCH_CHECK(a_in.scalar_type() == b_in.scalar_type(), "strata::gemm: a and b must have the same dtype");
  check_device(a_in, "a");
  check_device(b_in, "b");
  at::Tensor a = a_in, b = b_in;
  at::Tensor d = at::empty({a.size(0), b.size(1)}, a.options());
  const sg::matrix ma = as_matrix(a), mb = as_matrix(b), md = as_matrix(d);
  strata::stream s = current_stream(d);
  const registered mem{&a, &b, &d};
  strata::gemm(s, ma, mb, md, md, {.alpha = 1.f, .beta = 0.f});
#if !STRATA_TORCH_CUDA
  s.synchronize();
#endif
  return d;
}

// (B, H, S, D) with any strides whose last is 1: Strata's tensor takes batch, row (sequence) and head
// strides separately.
strata::attn::tensor as_attn(const at::Tensor& t) {
  return {const_cast<void*>(t.data_ptr()), dtype_of(t, "strata::attention"), int(t.size(0)), int(t.size(2)),
          int(t.size(1)), int(t.size(3)), t.stride(0), t.stride(2), t.stride(1)};
}

at::Tensor attention(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in, bool causal,
                     std::optional<double> scale) {
  TORCH_CHECK(q_in.dim() == 4 && k_in.dim() == 4 && v_in.dim() == 4, "strata::attention: q, k, v must be (B, H, S, D)");
  check_device(q_in, "q");
  check_device(k_in, "k");
  check_device(v_in, "v");
  const at::Tensor q = q_in.stride(3) == 1 ? q_in : q_in.contiguous();
  const at::Tensor k = k_in.stride(3) == 1 ? k_in : k_in.contiguous();
  const at::Tensor v = v_in.stride(3) == 1 ? v_in : v_in.contiguous();
  at::Tensor o = at::empty({q.size(0), q.size(1), q.size(2), v.size(3)}, q.options());
  strata::attn::options opt;
  opt.causal = causal;
  opt.align = strata::attn::alignment::top_left;  // F.scaled_dot_product_attention(is_causal=True)
  if (scale) opt.scale = float(*scale);
  strata::stream s = current_stream(o);
  const registered mem{&q, &k, &v, &o};
  strata::attention(s, as_attn(q), as_attn(k), as_attn(v), as_attn(o), opt);
#if !STRATA_TORCH_CUDA
  s.synchronize();
#endif
  return o;
}

at::Tensor embedding_bag(const at::Tensor& weight_in, const at::Tensor& indices_in, const at::Tensor& offsets_in,
                         int64_t mode, const std::optional<at::Tensor>& per_sample_weights, int64_t padding_idx) {
  namespace se = strata::embedding;
  TORCH_CHECK(weight_in.dim() == 2 && indices_in.dim() == 1 && offsets_in.dim() == 1,
              "strata::embedding_bag: weight (rows, dim), 1-D indices and 1-D offsets");
  TORCH_CHECK(mode >= 0 && mode <= 2, "strata::embedding_bag: mode is 0 (sum), 1 (mean) or 2 (max), got ", mode);
  check_device(weight_in, "weight");
  check_device(indices_in, "indices");
  check_device(offsets_in, "offsets");
  const at::Tensor weight = weight_in.stride(1) == 1 ? weight_in : weight_in.contiguous();
  const strata::dtype type = dtype_of(weight, "strata::embedding_bag");  // of the rows and of the output
  // Strata's offsets are CSR (bags + 1 entries); PyTorch's (include_last_offset=False) leave out the end.
  const at::Tensor indices = indices_in.to(at::kLong).contiguous();
  const at::Tensor offsets =
      at::cat({offsets_in.to(at::kLong), at::full({1}, indices.numel(), offsets_in.options().dtype(at::kLong))}).contiguous();
  const long long bags = offsets_in.numel();
  at::Tensor out = at::empty({bags, weight.size(1)}, weight.options());
  at::Tensor psw;
  if (per_sample_weights && per_sample_weights->defined()) {
    TORCH_CHECK(mode == 0, "strata::embedding_bag: per_sample_weights need mode 0 (sum), as in PyTorch");
    psw = per_sample_weights->to(at::kFloat).contiguous();
  }
  const se::table table{weight.data_ptr(), weight.size(0), int(weight.size(1)),
                        weight.stride(0) * (long long)weight.element_size(),
                        padding_idx < 0 ? (padding_idx == -1 ? se::no_padding : weight.size(0) + padding_idx) : padding_idx};
  const se::feature feature{0, bags, 0, weight.size(1)};
  se::forward_args args{};
  args.in.row_format = *se::row_format_of(type);
  args.in.tables = std::span<const se::table>(&table, 1);
  args.in.features = std::span<const se::feature>(&feature, 1);
  args.in.indices = indices.data_ptr();
  args.in.num_indices = indices.numel();
  args.in.indices_type = se::index_type::int64;
  args.in.offsets = offsets.data_ptr();
  args.in.per_sample_weights = psw.defined() ? psw.data_ptr<float>() : nullptr;
  args.in.mode = mode == 0 ? se::pooling::sum : mode == 1 ? se::pooling::mean : se::pooling::max;
  args.in.policy = se::bounds::error;
  args.output = out.data_ptr();
  args.output_format = type;
  const std::size_t ws_bytes = strata::embedding_bag_workspace_size(args);
  // The workspace must start on a 256-byte boundary; torch's CPU allocator only promises 64 bytes.
  constexpr std::size_t align = 256;
  at::Tensor ws = at::empty({static_cast<long long>(ws_bytes + align)}, weight.options().dtype(at::kByte));
  const auto base = reinterpret_cast<std::uintptr_t>(ws.data_ptr());
  void* aligned = reinterpret_cast<void*>((base + align - 1) / align * align);
  strata::stream s = current_stream(out);
  const registered mem{&weight, &indices, &offsets, &psw, &out, &ws};
  strata::embedding_bag(s, args, {aligned, ws_bytes});
  return out;
}

}  // namespace

#if !STRATA_TORCH_CUDA
// The schemas, once: the CPU library is loaded first (strata_torch/__init__.py).
TORCH_LIBRARY(strata, m) {
  m.def("gemm(Tensor a, Tensor b) -> Tensor");
  m.def("attention(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None) -> Tensor");
  m.def("embedding_bag(Tensor weight, Tensor indices, Tensor offsets, int mode=0, Tensor? per_sample_weights=None, "
        "int padding_idx=-1) -> Tensor");
}
TORCH_LIBRARY_IMPL(strata, CPU, m) {
#else
TORCH_LIBRARY_IMPL(strata, CUDA, m) {
#endif
  m.impl("gemm", &gemm);
  m.impl("attention", &attention);
  m.impl("embedding_bag", &embedding_bag);
}
