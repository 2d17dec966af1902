// bind.h — binding a def to concrete input types and shapes: checks the inputs against the
// signature (dtype, rank, literal dims, repeated size names), gives every size name its value,
// evaluates every extent and range, and checks the preconditions inference left open. The
// result is what backends compile. Done once per tc_infer_outputs / tc_compile, never in tc_run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

#include "ir/program.h"
#include "runtime/tensor_view.h"
#include "runtime/validate.h"

namespace tc::ir {

using runtime::TensorSig;
using runtime::shape_text;

struct BoundDef {
  std::shared_ptr<const Program> program;
  size_t def_index = 0;
  infer::SizeValues sizes;          // by name, for evaluating symbolic extents
  std::vector<int64_t> size_values;  // by position (Def::size_names), for the IR's Size nodes
  std::vector<TensorSig> tensors;  // every tensor of the def, indexed like Def::tensors
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges;  // per statement, per var: [lo, hi)
  std::vector<bool> guarded_in_bounds;  // per Def::preconditions entry of a guarded read

  // Whether a subscript needs no run-time check: proven by inference and binding, or a
  // guarded read whose bounds over the whole domain are inside its tensor for these sizes.
  bool proven(const Subscript& s) const {
    return s.proven || (s.guarded_precondition >= 0 && guarded_in_bounds[static_cast<size_t>(s.guarded_precondition)]);
  }
  // Whether a read of `st` has a subscript that is not proven (a gather's: checked at run time).
  bool has_unproven_read(const Stmt& st) const {
    for (const Read& r : st.reads)
      for (const Subscript& sub : r.subscripts)
        if (!proven(sub)) return true;
    return false;
  }

  // Whether a call sets every element of tensor t without reading what t held (so an output
  // may be passed uninitialised): the first statement that reads or writes t writes all of it,
  // plainly or with '!' (a scatter with '!': it sets the whole tensor first), and does not read
  // it; or no statement touches t (its elements are set to 0). Conservative: false where a
  // reduction without '!' adds to t's contents, and where t's first writer covers only part.
  bool overwrites(size_t t) const;

  const Def& def() const { return *program->ir[def_index]; }
  std::vector<TensorSig> outputs() const;
  std::vector<TensorSig> inputs() const;
  // The def's tensors of one role in parameter order, each with what messages call it
  // ("input 'A'") and its signature.
  std::vector<runtime::ExpectedTensor> expected(TensorRole role) const;
};

// Only dtype, ndim and shape of `inputs` are read (checked by runtime::check_header, the one
// validator of DLTensors). Throws TC_ERROR_SHAPE (mismatches, out-of-bounds preconditions) or
// TC_ERROR_INVALID_ARGUMENT (count, NULLs).
BoundDef bind(std::shared_ptr<const Program> program, size_t def_index, const DLTensor* inputs, size_t num_inputs);

// Every tensor of the def for one call, indexed like Def::tensors: the inputs and outputs as
// given, each temporary allocated row-major and zeroed, owned by `temporaries`.
struct CallTensors {
  std::vector<runtime::TensorView> views;
  std::vector<std::vector<char>> temporaries;
};

// Throws TC_ERROR_NO_MEMORY ("<backend>: out of memory running 'f': N bytes for temporary 'T'
// could not be allocated") where a temporary cannot be allocated.
CallTensors call_tensors(const BoundDef& bound, const std::vector<runtime::TensorView>& inputs,
                         const std::vector<runtime::TensorView>& outputs, const std::string& backend);


}  // namespace tc::ir
