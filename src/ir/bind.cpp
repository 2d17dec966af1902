// bind.cpp — see bind.h.
#include "ir/bind.h"

#include <algorithm>

#include <climits>
#include <map>
#include <new>
#include <optional>

#include "lang/diagnostics.h"
#include "runtime/validate.h"
#include "support/error.h"

namespace tc::ir {

std::vector<TensorSig> BoundDef::outputs() const {
  std::vector<TensorSig> out;
  for (size_t t = 0; t < tensors.size(); ++t)
    if (def().tensors[t].role == TensorRole::Output) out.push_back(tensors[t]);
  return out;
}

std::vector<TensorSig> BoundDef::inputs() const {
  std::vector<TensorSig> out;
  for (size_t t = 0; t < tensors.size(); ++t)
    if (def().tensors[t].role == TensorRole::Input) out.push_back(tensors[t]);
  return out;
}

std::vector<runtime::ExpectedTensor> BoundDef::expected(TensorRole role) const {
  std::vector<runtime::ExpectedTensor> out(role == TensorRole::Input ? def().num_inputs : def().num_outputs);
  const char* kind = role == TensorRole::Input ? "input" : "output";
  for (size_t t = 0; t < def().tensors.size(); ++t)
    if (def().tensors[t].role == role)
      out[static_cast<size_t>(def().tensors[t].param_index)] = {std::string(kind) + " '" + def().tensors[t].name + "'", tensors[t]};
  return out;
}

bool BoundDef::overwrites(size_t t) const {
  const int tensor = static_cast<int>(t);
  for (size_t k = 0; k < def().stmts.size(); ++k) {
    const Stmt& st = def().stmts[k];
    bool reads = false;
    for (const Read& r : st.reads) reads = reads || r.tensor == tensor;
    if (st.lhs_tensor != tensor) {
      if (reads) return false;
      continue;
    }
    if (reads || (st.reduce != ReduceOp::None && !st.init)) return false;
    if (st.scatter) return true;  // with '!': the whole tensor is set to 0 first
    const auto& shape = tensors[t].shape;
    for (size_t d = 0; d < shape.size(); ++d)
      if (ranges[k][d].first > 0 || ranges[k][d].second < shape[d]) return false;
    return true;
  }
  return true;
}

namespace {

using lang::kMaxExtent;

class Binder {
 public:
  Binder(std::shared_ptr<const Program> program, size_t def_index) {
    b_.program = std::move(program);
    b_.def_index = def_index;
  }

  BoundDef run(const DLTensor* inputs, size_t n) {
    b_.tensors.resize(def().tensors.size());
    bind_inputs(inputs, n);
    for (const auto& name : def().size_names) b_.size_values.push_back(b_.sizes.at(name));
    bind_extents();
    check_call_requirements();
    bind_ranges();
    check_preconditions();
    return std::move(b_);
  }

 private:
  const Def& def() const { return b_.def(); }
  std::string where(const Tensor& t) const {
    return "input '" + t.name + "' (argument " + std::to_string(t.param_index + 1) + " of '" + def().name + "')";
  }

  void bind_inputs(const DLTensor* inputs, size_t n) {
    size_t expected = def().num_inputs;
    if (n != expected)
      fail(TC_ERROR_INVALID_ARGUMENT, "'" + def().name + "' takes " + std::to_string(expected) + " input" +
                                          (expected == 1 ? "" : "s") + ", got " + std::to_string(n));
    if (n > 0 && inputs == nullptr) fail(TC_ERROR_INVALID_ARGUMENT, "inputs is NULL but num_inputs is " + std::to_string(n));
    std::map<std::string, std::string> size_origin;
    for (size_t t = 0; t < def().tensors.size(); ++t) {
      const Tensor& decl = def().tensors[t];
      if (decl.role != TensorRole::Input) continue;
      const DLTensor& x = inputs[decl.param_index];
      std::string what = where(decl);
      runtime::check_header(x, runtime::ExpectedHeader{what, decl.type, decl.ndim, nullptr});
      TensorSig sig{decl.type, {}};
      for (int d = 0; d < decl.ndim; ++d) {
        int64_t got = x.shape[d];
        if (got > kMaxExtent)
          fail(TC_ERROR_UNSUPPORTED, where(decl) + " dimension " + std::to_string(d) + ": size " + std::to_string(got) +
                                         " exceeds the largest supported extent " + std::to_string(kMaxExtent));
        bind_dim(decl, d, got, size_origin);
        sig.shape.push_back(got);
      }
      check_element_count(decl.name, sig.shape);
      b_.tensors[t] = sig;
    }
  }

  void bind_dim(const Tensor& decl, int d, int64_t got, std::map<std::string, std::string>& origin) {
    const lang::DimSpec& spec = decl.declared[d];
    std::string dim = where(decl) + " dimension " + std::to_string(d);
    if (spec.is_literal()) {
      if (got != spec.value)
        fail(TC_ERROR_SHAPE, dim + ": expected " + std::to_string(spec.value) + ", got " + std::to_string(got));
      return;
    }
    auto it = b_.sizes.find(spec.name);
    if (it == b_.sizes.end()) {
      b_.sizes[spec.name] = got;
      origin[spec.name] = "'" + decl.name + "' dimension " + std::to_string(d);
    } else if (it->second != got) {
      fail(TC_ERROR_SHAPE, dim + ": size '" + spec.name + "' is " + std::to_string(it->second) + " (from " +
                               origin[spec.name] + "), got " + std::to_string(got));
    }
  }

  void bind_extents() {
    for (size_t t = 0; t < def().tensors.size(); ++t) {
      const Tensor& decl = def().tensors[t];
      if (decl.role == TensorRole::Input) continue;
      TensorSig sig{decl.type, {}};
      for (int d = 0; d < decl.ndim; ++d) {
        std::optional<int64_t> e = decl.extents[d].try_evaluate(b_.sizes);
        if (!e || *e > kMaxExtent)
          fail(TC_ERROR_UNSUPPORTED, "'" + decl.name + "' dimension " + std::to_string(d) + " would have extent " +
                                         (e ? std::to_string(*e) : std::string("beyond 64-bit integers")) +
                                         ", more than the supported " + std::to_string(kMaxExtent) + " (sizes: " + sizes_text() + ")");
        if (decl.has_dims_annotation()) check_annotation(decl, d, *e);
        sig.shape.push_back(*e);
      }
      check_element_count(decl.name, sig.shape);
      b_.tensors[t] = sig;
    }
  }

  // An inlined call's arguments must fit the callee's signature: literal dims and size names
  // shared between its parameters.
  void check_call_requirements() const {
    std::map<std::pair<int, std::string>, std::pair<int64_t, std::string>> seen;
    for (const auto& r : def().call_requirements) {
      const TensorSig& sig = b_.tensors[def().find_tensor(r.tensor)];
      for (size_t d = 0; d < r.dims.size(); ++d) {
        int64_t got = sig.shape[d];
        std::string where = "'" + r.tensor + "' dimension " + std::to_string(d);
        const auto& spec = r.dims[d];
        if (spec.is_literal()) {
          if (got != spec.value)
            fail(TC_ERROR_SHAPE, located(r.loc, "call to '" + r.callee + "': " + where + " is " + std::to_string(got) +
                                                    ", but parameter '" + r.param + "' declares " + spec.text()));
          continue;
        }
        auto key = std::make_pair(r.call_id, spec.name);
        auto it = seen.find(key);
        if (it == seen.end()) {
          seen[key] = {got, where};
        } else if (it->second.first != got) {
          fail(TC_ERROR_SHAPE, located(r.loc, "call to '" + r.callee + "': size '" + spec.name + "' is " +
                                                  std::to_string(it->second.first) + " (from " + it->second.second +
                                                  "), but " + where + " is " + std::to_string(got)));
        }
      }
    }
  }

  void check_annotation(const Tensor& decl, int d, int64_t inferred) const {
    const auto& spec = decl.declared[d];
    int64_t declared = spec.is_literal() ? spec.value : b_.sizes.at(spec.name);
    if (declared != inferred)
      fail(TC_ERROR_SHAPE, located(spec.loc, "output '" + decl.name + "' dimension " + std::to_string(d) + ": declared " +
                                                 spec.text() + " = " + std::to_string(declared) +
                                                 ", but the statements give it extent " + std::to_string(inferred)));
  }

  static void check_element_count(const std::string& name, const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d != 0 && n > INT64_MAX / 16 / d)
        fail(TC_ERROR_UNSUPPORTED, "'" + name + "' with shape " + shape_text(shape) + " has too many elements");
      n *= d;
    }
  }

  void bind_ranges() {
    for (size_t s = 0; s < def().stmts.size(); ++s) {
      const Stmt& st = def().stmts[s];
      std::vector<std::pair<int64_t, int64_t>> rs;
      bool empty = false;
      for (size_t v = 0; v < st.vars.size(); ++v) {
        const infer::Range& r = st.domain[v];
        rs.emplace_back(index_bound(r.lo, st, v), index_bound(r.hi, st, v));
        empty = empty || rs.back().first >= rs.back().second;
      }
      for (size_t v = 0; v < st.num_lhs_vars() && !empty; ++v)
        if (rs[v].first < 0)
          fail(TC_ERROR_SHAPE, located(st.index_locs[v], "statement writes '" + def().tensors[st.lhs_tensor].name + "' at index " +
                                   std::to_string(rs[v].first) + " in dimension " + std::to_string(v) + " ('" +
                                   st.vars[v] + "' in " + std::to_string(rs[v].first) + ":" +
                                   std::to_string(rs[v].second) + "); indices written must be non-negative"));
      b_.ranges.push_back(rs);
    }
  }

  // A bound of a loop variable's range: backends index with 32-bit integers, so it must fit.
  int64_t index_bound(const infer::SymExpr& e, const Stmt& st, size_t v) const {
    std::optional<int64_t> x = e.try_evaluate(b_.sizes);
    if (x && *x >= INT32_MIN && *x <= INT32_MAX) return *x;
    fail(TC_ERROR_UNSUPPORTED, located(st.loc, "the range of '" + st.vars[v] + "' reaches " +
                                                   (x ? std::to_string(*x) : std::string("beyond 64-bit integers")) +
                                                   ", outside the supported 32-bit index range (sizes: " +
                                                   sizes_text() + ")"));
  }

  void check_preconditions() {
    b_.guarded_in_bounds.assign(def().preconditions.size(), false);
    for (size_t k = 0; k < def().preconditions.size(); ++k) {
      const auto& p = def().preconditions[k];
      bool empty = false;
      for (const auto& r : b_.ranges[p.stmt]) empty = empty || r.first >= r.second;
      if (empty) continue;
      std::optional<int64_t> lo = p.min_index.try_evaluate(b_.sizes), hi = p.max_index.try_evaluate(b_.sizes);
      int64_t extent = b_.tensors[p.tensor].shape[p.dim];
      bool inside = lo && hi && *lo >= 0 && *hi < extent;
      if (p.guarded) b_.guarded_in_bounds[k] = inside;  // never an error: the guard may exclude the rest
      if (inside || p.guarded) continue;
      std::string indices = lo && hi ? std::to_string(*lo) + ".." + std::to_string(*hi) : "beyond 64-bit integers";
      fail(TC_ERROR_SHAPE, located(p.loc, "'" + p.access + (p.write ? "' writes '" : "' reads '") + def().tensors[p.tensor].name +
                               "' out of bounds in dimension " + std::to_string(p.dim) + ": indices " +
                               indices + " but the extent is " +
                               std::to_string(extent) + " (sizes: " + sizes_text() + ")"));
    }
  }

  std::string located(const lang::SourceLoc& loc, const std::string& msg) const {
    return def().located(loc, msg);
  }

  std::string sizes_text() const {
    std::string out;
    for (const auto& [k, v] : b_.sizes) out += (out.empty() ? "" : ", ") + k + "=" + std::to_string(v);
    return out.empty() ? "none" : out;
  }

  BoundDef b_;
};

}  // namespace

namespace {

// How many dimensions `...` stands for in a call of polymorphic def `d` with these inputs:
// the same in every input whose type has one. With the wrong number of inputs, or NULL,
// rank 1 (whose binding then reports that).
int ellipsis_rank(const Program& program, size_t d, const DLTensor* inputs, size_t num_inputs) {
  const auto& params = program.written_inputs[d];
  if (inputs == nullptr || num_inputs != params.size()) return 1;
  int rank = -1;
  std::string first;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& dims = params[i].dims;
    bool poly = std::any_of(dims.begin(), dims.end(), [](const lang::DimSpec& x) { return x.ellipsis; });
    if (!poly) continue;
    std::string type;
    for (const auto& x : dims) type += (type.empty() ? "" : ", ") + x.text();
    std::string what = "input '" + params[i].name + "' (argument " + std::to_string(i + 1) + " of '" +
                       program.def(d).name + "', type (" + type + "))";
    int fixed = static_cast<int>(dims.size()) - 1;
    int got = inputs[i].ndim;
    if (got < fixed || got > TC_MAX_NDIM)
      fail(TC_ERROR_SHAPE, what + ": has rank " + std::to_string(got) + "; its type needs " +
                               (got < fixed ? "at least " + std::to_string(fixed)
                                            : "at most " + std::to_string(TC_MAX_NDIM) + " (TC_MAX_NDIM)") +
                               " dimensions");
    int r = got - fixed;
    if (rank >= 0 && r != rank)
      fail(TC_ERROR_SHAPE, "'...' stands for " + std::to_string(rank) + " dimension" + (rank == 1 ? "" : "s") +
                               " in " + first + " but for " + std::to_string(r) + " in " + what +
                               ": every '...' of a def denotes the same dimensions");
    if (rank < 0) rank = r, first = what;
  }
  return rank < 0 ? 1 : rank;
}

}  // namespace

BoundDef bind(std::shared_ptr<const Program> program, size_t def_index, const DLTensor* inputs, size_t num_inputs) {
  if (def_index < program->polymorphic.size() && program->polymorphic[def_index]) {
    int rank = ellipsis_rank(*program, def_index, inputs, num_inputs);
    std::shared_ptr<const Program> instance = program->instance(def_index, rank);
    try {
      return Binder(std::move(instance), def_index).run(inputs, num_inputs);
    } catch (const Error& e) {
      throw Error(e.status(), lang::show_ellipsis(e.what(), program->ellipsis, rank));
    }
  }
  return Binder(std::move(program), def_index).run(inputs, num_inputs);
}

CallTensors call_tensors(const BoundDef& bound, const std::vector<runtime::TensorView>& inputs,
                         const std::vector<runtime::TensorView>& outputs, const std::string& backend) {
  const Def& def = bound.def();
  CallTensors call;
  call.views.resize(def.tensors.size());
  for (size_t t = 0; t < def.tensors.size(); ++t) {
    const Tensor& decl = def.tensors[t];
    if (decl.role == TensorRole::Input) {
      call.views[t] = inputs[static_cast<size_t>(decl.param_index)];
    } else if (decl.role == TensorRole::Output) {
      call.views[t] = outputs[static_cast<size_t>(decl.param_index)];
    } else {
      size_t n = static_cast<size_t>(bound.tensors[t].num_elements()) * static_cast<size_t>(bytes(bound.tensors[t].type));
      try {
        call.temporaries.emplace_back(n, 0);
      } catch (const std::bad_alloc&) {
        fail(TC_ERROR_NO_MEMORY, backend + ": out of memory running '" + def.name + "': " + std::to_string(n) +
                                     " bytes for temporary '" + decl.name + "' could not be allocated");
      }
      call.views[t] = runtime::row_major_view(call.temporaries.back().data(), bound.tensors[t]);
    }
  }
  return call;
}

}  // namespace tc::ir
