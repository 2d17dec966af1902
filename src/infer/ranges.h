// ranges.h — what range inference finds for one def, symbolically in the size names:
// every tensor's extents, every statement's index-variable ranges, and the preconditions
// (index bounds of accesses) that must hold once sizes are known.
#pragma once

#include <string>
#include <vector>

#include "infer/sym_expr.h"
#include "lang/ast.h"
#include "lang/diagnostics.h"

namespace tc::infer {

// Half-open [lo, hi).
struct Range {
  SymExpr lo, hi;
  bool from_where = false;  // given by a where clause rather than inferred
  // Provably [0, extent) for every size.
  bool spans(const SymExpr& extent) const { return lo.provably_equal(SymExpr::constant(0)) && hi.provably_equal(extent); }
};

// An access whose index bounds inference did not guarantee: checked when sizes are known.
struct Precondition {
  int stmt = -1;
  const lang::Expr* expr = nullptr;  // the access (a node of the program's AST)
  lang::SourceLoc loc;
  std::string access;  // source text, e.g. "C(i + j)"
  int tensor = -1;
  int dim = -1;
  SymExpr min_index, max_index;  // inclusive bounds of the index over the statement's domain
  bool write = false;            // the written access of a scatter, not a read
  // A read under ?: or the right of && || (evaluated only where its guard holds, so it may be
  // out of bounds elsewhere): never an error; binding records whether it holds, and where it
  // does the read needs no run-time check (ir/bind.h, BoundDef::proven).
  bool guarded = false;
};

// A tensor read of a statement's right-hand side or exists clauses (and of a scatter's
// written subscripts), in the order inference visits them (outermost first); the IR keeps
// these rather than finding them again. A scatter's write itself is not among them.
struct Access {
  const lang::Expr* expr = nullptr;  // the read (a node of the program's AST)
  bool guarded = false;              // under a ?: branch or the right operand of && / ||
};

struct StmtRanges {
  std::vector<Range> vars;         // parallel to Stmt::vars
  std::vector<Access> accesses;
};

struct DefRanges {
  std::vector<std::vector<SymExpr>> extents;  // per tensor (all roles), per dimension
  std::vector<StmtRanges> stmts;
  std::vector<Precondition> preconditions;
};

}  // namespace tc::infer
