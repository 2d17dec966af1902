// def.h — the IR of one def, built once at tc_define from the checked syntax tree and range
// inference (from_ast.h): its tensors with symbolic extents, and its statements in order,
// each with its iteration domain, its write (a scatter's: computed subscripts), its
// right-hand side as IR expressions, the list of tensor reads (with what inference proved
// about each subscript), and its reduction.
// Everything here is symbolic in the size names; binding (bind.h) gives it numbers once per
// input signature. Rank-specific facts stay symbolic per tensor so that a rank-polymorphic
// def can later be instantiated per rank at bind time.
// Names (of tensors, sizes, variables) and source positions are kept for messages only; the
// canonical text (print.h's canonical_text) ignores them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "infer/ranges.h"
#include "ir/expr.h"
#include "lang/ast.h"

namespace tc::ir {

using lang::ReduceOp;
using lang::TensorRole;

struct Tensor {
  std::string name;
  TensorRole role = TensorRole::Input;
  ScalarType type = ScalarType::Float32;
  int ndim = 0;
  int param_index = -1;                 // position among the inputs or the outputs
  std::vector<lang::DimSpec> declared;  // inputs (and annotated outputs): the dims as written
  std::vector<infer::SymExpr> extents;  // per dimension, in the size names
  lang::SourceLoc loc;
  bool has_dims_annotation() const { return role == TensorRole::Output && static_cast<int>(declared.size()) == ndim && ndim > 0; }
};

// How a subscript depends on the statement's variables.
enum class IndexKind {
  Affine,         // a sum of variables times constants or sizes, plus a constant or size
  NonAffine,      // other integer arithmetic of variables and sizes (i * j, i / 2, ?:)
  DataDependent,  // reads a tensor (a gather)
};

struct Subscript {
  Expr index;
  IndexKind kind = IndexKind::Affine;
  // Binding checks that it stays in bounds over the whole domain (a precondition), or it is
  // the written element itself: no run-time check is needed. Otherwise (gathers, reads under
  // ?: or the right of && ||, indices inference cannot bound) each evaluation is checked.
  bool proven = false;
  // A guarded read's bounds over the whole domain (Def::preconditions[k]): where binding
  // finds them inside the tensor, no check is needed either (BoundDef::proven).
  int guarded_precondition = -1;
  int var = -1;  // the statement variable it is, when it is exactly one
};

struct Read {
  int tensor = -1;
  std::vector<Subscript> subscripts;
  bool guarded = false;    // evaluated only under a ?: branch or the right operand of && ||
  bool pointwise = false;  // its subscripts are the written element's, in order
  lang::SourceLoc loc;
  std::string text;        // as written, e.g. "A(i + 1, k)"
  bool gather() const;     // some subscript is data-dependent
};

struct Stmt {
  int lhs_tensor = -1;
  // Index variables: the written element's subscripts (in order) first, then the reduction
  // variables. The statement writes lhs_tensor(vars[0], ..., vars[num_lhs - 1]) — unless it
  // is a scatter (below): then num_lhs is 0 and every variable is iterated.
  std::vector<std::string> vars;
  size_t num_lhs = 0;
  // A scatter (`d_LUT(I(b, l), d) += d_O(b, d)`): at every point of the domain it adds the
  // right-hand side to lhs_tensor(write.subscripts...), computed subscripts that may read
  // tensors (their reads are in `reads`, like the right-hand side's). Its reduction is Sum;
  // with `init`, the WHOLE tensor is set to 0 first. A subscript binding did not prove in
  // bounds is checked where it is evaluated (checked=1) or the update is skipped (checked=0).
  bool scatter = false;
  Read write;  // scatter only: tensor, subscripts, location and text of the written access
  std::vector<infer::Range> domain;  // per variable: [lo, hi) in the size names
  Expr rhs;
  std::vector<Read> reads;           // every tensor read of rhs, outermost first
  ReduceOp reduce = ReduceOp::None;
  bool init = false;                 // '!': the written box (a scatter: the whole tensor) is set to the identity first
  lang::SourceLoc loc;
  std::vector<lang::SourceLoc> index_locs;  // of the written subscripts
  size_t num_lhs_vars() const { return num_lhs; }
};

struct Def {
  std::string name;
  std::vector<Tensor> tensors;  // inputs, then outputs, then temporaries in order of first write
  size_t num_inputs = 0, num_outputs = 0;
  std::vector<std::string> size_names;  // in order of first appearance in the inputs
  std::vector<Stmt> stmts;
  std::vector<infer::Precondition> preconditions;  // checked by binding
  std::vector<lang::CallRequirement> call_requirements;
  std::shared_ptr<const lang::SourceText> source;

  int find_tensor(const std::string& n) const;
  // "<source>:<line>:<col>: error: <msg>" with the source line and a caret.
  std::string located(const lang::SourceLoc& loc, const std::string& msg) const;
  // A checked subscript out of bounds at run time, located at the access, in the words every
  // backend uses: "'A(I(i))' reads 'A' out of bounds: index 7 in dimension 0, whose extent is 3
  // (at i=2)" ("writes" for a scatter's written element). vars[k] = values[k] for the "at" part.
  std::string out_of_bounds(const lang::SourceLoc& loc, const std::string& access, bool write, const std::string& tensor,
                            const std::string& index, int dim, int64_t extent, const std::vector<std::string>& vars,
                            const std::vector<std::string>& values) const;
};

}  // namespace tc::ir
