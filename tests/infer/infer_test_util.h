// infer_test_util.h — helpers shared by the white-box tests of src/infer and src/ir.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "infer/ranges.h"
#include "ir/bind.h"
#include "ir/program.h"
#include "common/error_of.h"
#include "support/error.h"

namespace tc_test {

using ProgramPtr = std::shared_ptr<const tc::ir::Program>;

inline ProgramPtr build(const std::string& src) { return tc::ir::build_program(src, ""); }

// The TC paper's softmax: four statements, three temporaries.
inline const char* const kSoftmax =
      "def softmax(float(N, D) I) -> (O) {\n"
      "  maxVal(n) max=! I(n, d)\n"
      "  expDistance(n, d) = exp(I(n, d) - maxVal(n))\n"
      "  expSum(n) +=! expDistance(n, d)\n"
      "  O(n, d) = expDistance(n, d) / expSum(n)\n"
      "}";

inline std::string build_error(const std::string& src, int status = TC_ERROR_SEMANTIC) {
  return error_of([&] { build(src); }, status);
}

inline bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

inline int tensor_index(const tc::ir::Program& p, size_t def, const std::string& name) {
  int t = p.def(def).find_tensor(name);
  if (t < 0) throw std::runtime_error("no tensor named " + name);
  return t;
}

// The symbolic range of index variable `var` in statement `stmt` of def `def`.
inline const tc::infer::Range& range_of(const tc::ir::Program& p, size_t stmt, const std::string& var,
                                        size_t def = 0) {
  const auto& vars = p.def(def).stmts.at(stmt).vars;
  for (size_t v = 0; v < vars.size(); ++v)
    if (vars[v] == var) return p.ranges.at(def).stmts.at(stmt).vars.at(v);
  throw std::runtime_error("statement has no variable " + var);
}

// [lo, hi) of `var` evaluated for concrete sizes.
inline std::pair<int64_t, int64_t> eval_range(const tc::ir::Program& p, size_t stmt, const std::string& var,
                                              const tc::infer::SizeValues& sizes, size_t def = 0) {
  const auto& r = range_of(p, stmt, var, def);
  return {r.lo.evaluate(sizes), r.hi.evaluate(sizes)};
}

// Every extent of tensor `name` evaluated for concrete sizes.
inline std::vector<int64_t> eval_extents(const tc::ir::Program& p, const std::string& name,
                                         const tc::infer::SizeValues& sizes, size_t def = 0) {
  std::vector<int64_t> out;
  for (const auto& e : p.ranges.at(def).extents.at(tensor_index(p, def, name))) out.push_back(e.evaluate(sizes));
  return out;
}

using Range64 = std::pair<int64_t, int64_t>;
using Shape = std::vector<int64_t>;

// Input tensors described by dtype and shape only (bind reads nothing else).
class Inputs {
 public:
  Inputs& add(tc::ScalarType type, Shape shape) {
    shapes_.push_back(std::make_unique<Shape>(std::move(shape)));
    DLTensor t{};
    t.data = nullptr;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shapes_.back()->size());
    t.dtype = tc::to_dlpack(type);
    t.shape = shapes_.back()->data();
    t.strides = nullptr;
    t.byte_offset = 0;
    tensors_.push_back(t);
    return *this;
  }
  Inputs& f32(Shape shape) { return add(tc::ScalarType::Float32, std::move(shape)); }
  DLTensor* data() { return tensors_.data(); }
  DLTensor& operator[](size_t i) { return tensors_[i]; }
  size_t size() const { return tensors_.size(); }

 private:
  std::vector<std::unique_ptr<Shape>> shapes_;
  std::vector<DLTensor> tensors_;
};

inline tc::ir::BoundDef bind_def(const ProgramPtr& p, Inputs& in, size_t def = 0) {
  return tc::ir::bind(p, def, in.data(), in.size());
}

inline std::string bind_error(const ProgramPtr& p, Inputs& in, int status = TC_ERROR_SHAPE, size_t def = 0) {
  return error_of([&] { bind_def(p, in, def); }, status);
}

inline Shape shape_of(const tc::ir::BoundDef& b, const std::string& name) {
  return b.tensors.at(tensor_index(*b.program, b.def_index, name)).shape;
}

// The bound [lo, hi) of `var` in statement `stmt`.
inline Range64 bound_range(const tc::ir::BoundDef& b, size_t stmt, const std::string& var) {
  const auto& vars = b.def().stmts.at(stmt).vars;
  for (size_t v = 0; v < vars.size(); ++v)
    if (vars[v] == var) return b.ranges.at(stmt).at(v);
  throw std::runtime_error("statement has no variable " + var);
}

}  // namespace tc_test
