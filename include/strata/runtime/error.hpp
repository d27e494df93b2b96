// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/runtime/error.hpp -- the exceptions Strata throws. Every message names the failing call or
// the operator and argument, so a user can act on it without a debugger.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace strata {

/// Base of every Strata error.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller passed something an operator or launch cannot take. what() reads
/// "<op>: argument '<arg>' <problem>", e.g. "strata::launch(reduce_kernel): argument 'block' has 0 threads".
class invalid_argument : public error {
 public:
  invalid_argument(std::string op, std::string arg, const std::string& problem)
      : error(op + ": argument '" + arg + "' " + problem), op_(std::move(op)), arg_(std::move(arg)) {}
  const std::string& op() const noexcept { return op_; }
  const std::string& argument() const noexcept { return arg_; }

 private:
  std::string op_, arg_;
};

/// The target lacks a feature the request needs (fp8 on sm80, clusters on gfx90a, ...).
class unsupported : public error {
 public:
  using error::error;
};

/// A CUDA or HIP runtime call failed. what() reads "<call>: <description> (<code name>)".
class backend_error : public error {
 public:
  backend_error(std::string call, int code, const std::string& description)
      : error(call + ": " + description), call_(std::move(call)), code_(code) {}
  const std::string& call() const noexcept { return call_; }
  int code() const noexcept { return code_; }

 private:
  std::string call_;
  int code_;
};

/// The host emulator found a kernel bug: a barrier or warp collective that can never complete, a
/// shared-memory overrun, an exception thrown by a GPU thread. what() names the kernel and block.
class emulator_error : public error {
 public:
  using error::error;
};

}  // namespace strata
