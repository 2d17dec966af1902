// gemm_route.h — the cpu.blas route: a def that is one plain (batched) matrix product,
//   C(b..., i, j) +=! A(b..., i, k) * B(b..., k, j)   (either operand stored transposed, float
//   or double, `+=` adding to C's entry values),
// computed by the system's CBLAS sgemm/dgemm (cblas.h) instead of the Halide pipeline. What it
// recognises and how it calls BLAS; not when to use it (the cpu.blas knob, set by hand or by
// the tuner when it measures BLAS faster) and not the fallback (cpu_backend.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/cblas.h"
#include "ir/bind.h"
#include "runtime/tensor_view.h"

namespace tc::backends::cpu {

struct GemmPlan {
  ScalarType type = ScalarType::Float32;  // float32: sgemm, float64: dgemm
  int a = -1, b = -1;                     // input parameter positions: C = op(A) * op(B)
  int c = -1;                             // output parameter position
  bool a_trans = false;                   // A is read A(k, i): stored K x M
  bool b_trans = false;                   // B is read B(j, k): stored N x K
  bool accumulate = false;                // `+=` without `!`: C's entry values are added to (beta 1)
  int batch = 0;                          // leading dimensions shared by A, B and C, looped over

  std::string describe() const;  // "C = A * B^T (cblas_sgemm), 2 batch dimensions"
};

// The plan for `bound` if its def is one such product over whole tensors, else nullopt and
// `why` (when given) says what is not plain.
std::optional<GemmPlan> plan_gemm(const ir::BoundDef& bound, std::string* why = nullptr);

// Runs the plan with `blas` on `threads` threads (OpenBLAS's process-wide count where the
// library has one). False, having done nothing, when a tensor's layout is not one BLAS takes
// (innermost stride not 1, a row stride shorter than a row, an extent past INT_MAX): the
// caller computes it another way.
bool run_gemm(const GemmPlan& plan, const Cblas& blas, const std::vector<runtime::TensorView>& inputs,
              const std::vector<runtime::TensorView>& outputs, int threads);

}  // namespace tc::backends::cpu
