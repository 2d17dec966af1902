// ast.h — the syntax tree of a TC source, plus the annotations sema fills in (resolved
// references, scalar types, the tensor table, reduction kind). Parsing produces it; sema
// completes it; nothing here knows about shapes, ranges or backends.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lang/builtins.h"
#include "lang/diagnostics.h"
#include "lang/token.h"
#include "support/dtype.h"

namespace tc::lang {

struct Expr;
using ExprPtr = std::shared_ptr<Expr>;

// Ellipsis: `...` as a whole subscript of a tensor access (`X(n, ...)`); only in a
// rank-polymorphic def before instantiation (lang/instantiate.h), never after.
enum class ExprKind { IntLit, FloatLit, Ident, Unary, Binary, Ternary, Call, Dim, Ellipsis };

// What a name or call refers to, decided by sema.
enum class Ref { Unresolved, Size, Index, Tensor, Builtin, Cast };

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  std::string name;  // Ident, Call, Dim: the identifier; literals: their spelling
  Tok op = Tok::End;  // Unary, Binary
  std::vector<ExprPtr> args;  // operands, call arguments, ternary (cond, then, else)
  int64_t int_value = 0;  // IntLit; Dim: the dimension number
  double float_value = 0;  // FloatLit
  int height = 1;          // 1 + the tallest operand (the parser caps it)

  // ---- sema annotations ----
  Ref ref = Ref::Unresolved;
  ScalarType type = ScalarType::Int32;
  ScalarType operand_type = ScalarType::Int32;  // Binary (not && ||): both operands are converted to it
  bool weak = false;        // a literal or a negated literal: adapts to the other operand
  int tensor = -1;          // Ref::Tensor (also for a bare 0-d tensor name), Dim
  BuiltinId builtin{};      // Ref::Builtin
  ScalarType cast_to{};     // Ref::Cast

  ExprPtr clone() const;
};

// A dimension of a declared tensor type: a size name or an integer literal.
struct DimSpec {
  std::string name;  // empty for literals; "..." for an ellipsis
  int64_t value = 0;
  SourceLoc loc;
  bool ellipsis = false;  // `...`: zero or more dimensions (a rank-polymorphic def)
  bool is_literal() const { return name.empty(); }
  std::string text() const { return is_literal() ? std::to_string(value) : name; }
};

struct Param {
  std::string name;
  SourceLoc loc;
  std::optional<ScalarType> type;  // outputs: empty when not annotated
  bool has_dims = false;           // outputs: "int32(M,N) out" vs "int32 out" vs "out"
  std::vector<DimSpec> dims;
};

struct RangeConstraint {
  std::string var;
  SourceLoc loc;
  ExprPtr lo, hi;  // half-open [lo, hi)
};

struct Let {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};

enum class ReduceOp { None, Sum, Product, Min, Max };

struct Stmt {
  SourceLoc loc;
  std::string lhs;
  std::vector<std::string> indices;  // "..." for an ellipsis (before instantiation only); empty for a scatter
  std::vector<SourceLoc> index_locs;  // where each left-hand side subscript starts
  // A scatter (`H(I(i)) += 1`, `O(i + k) += X(i) * W(k)`): some left-hand side subscript is not
  // a plain name, so the statement writes through computed subscripts. `write` is then the
  // written access itself, a Call node `lhs(sub0, ...)` (sema marks it Ref::Tensor), and
  // `indices` is empty: no variable defines the written element, every one is iterated.
  // Null for a plain statement.
  ExprPtr write;
  bool bare_lhs = false;  // "s = ..." for a 0-d tensor
  Tok op = Tok::Assign;
  SourceLoc op_loc;
  ExprPtr rhs;
  std::vector<RangeConstraint> ranges;
  std::vector<Let> lets;
  std::vector<ExprPtr> exists;

  // A call statement "a, b = f(x, y)" (parsed; sema reports it unsupported).
  bool is_call = false;
  std::vector<std::string> call_outputs;

  // ---- sema annotations ----
  int lhs_tensor = -1;
  ReduceOp reduce = ReduceOp::None;
  bool init = false;                    // '!' reductions: initialise with the identity first
  std::vector<std::string> vars;        // all index variables: LHS indices first, then reduction vars
  bool is_scatter() const { return write != nullptr; }
  size_t num_lhs_vars() const { return indices.size(); }  // 0 for a scatter
  size_t lhs_rank() const { return is_scatter() ? write->args.size() : indices.size(); }
};

enum class TensorRole { Input, Output, Temporary };

struct TensorDecl {
  std::string name;
  TensorRole role;
  SourceLoc loc;
  ScalarType type = ScalarType::Float32;
  int ndim = 0;
  std::vector<DimSpec> dims;   // inputs (and annotated outputs): as declared
  bool type_annotated = false;
  int param_index = -1;        // position among inputs or outputs
  bool has_dims_annotation() const { return role == TensorRole::Output && static_cast<int>(dims.size()) == ndim && ndim > 0; }
};

// What an inlined call "a, b = f(x, y)" requires of its arguments: checked by sema (rank,
// dtype) and at binding (the callee's size names and literal dims).
struct CallRequirement {
  SourceLoc loc;          // the call
  int call_id = 0;        // size names are shared within one call
  std::string callee;
  std::string param;      // the callee's parameter
  std::string tensor;     // the caller's tensor passed to it
  ScalarType type{};
  std::vector<DimSpec> dims;  // as the callee declares them
};

struct Def {
  std::string name;
  SourceLoc loc;
  std::vector<Param> inputs;
  std::vector<Param> outputs;
  std::vector<Stmt> stmts;
  std::vector<CallRequirement> call_requirements;  // filled by inline_calls
  // Has `...` in a parameter type or an index list (parsed): checked and compiled through its
  // instances (lang/instantiate.h), one per number of dimensions `...` stands for.
  bool polymorphic = false;

  // ---- sema annotations ----
  std::vector<TensorDecl> tensors;  // inputs, then outputs, then temporaries in order of first write
  std::vector<std::string> size_names;  // in order of first appearance in the inputs
  int find_tensor(const std::string& n) const;
  bool is_size(const std::string& n) const;
};

struct Program {
  SourceText source;
  std::vector<Def> defs;
};

// Queries on an annotated expression (after sema).
size_t count_nodes(const Expr& e);                                // e and all its operands
// Inlining (where-clause lets in sema, calls in inline_calls) copies expressions; chains of
// them grow exponentially, so the copies for one statement (lets) or one def (calls) are
// limited to this many nodes, and a program past it is refused with a located error.
constexpr size_t kMaxInlinedNodes = 100000;
// Backends index with 32-bit integers: the largest extent of a dimension, from a literal, a
// where clause or a tensor's shape (checked by sema, range inference and binding).
constexpr int64_t kMaxExtent = 2147483647;
bool reads_tensor(const Expr& e);                                 // any tensor read inside
std::vector<const Expr*> tensor_reads(const Expr& e);             // every tensor read, outermost first
void collect_index_vars(const Expr& e, std::set<std::string>& out);  // index variables used

}  // namespace tc::lang
