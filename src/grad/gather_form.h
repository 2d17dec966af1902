// gather_form.h — rewrites a scatter-add contribution `G(s0, s1, ...) += v` whose subscripts
// are affine in one variable each (a convolution's `h + kh`, a shift's `i + 1`)
// into the equivalent gather `G(j0, j1, ...) += guard ? v[h := clamp(j - rest)] : 0` over
// fresh variables spanning G: every element is then computed once, in parallel, instead of
// accumulated serially point by point. It does not decide what to differentiate
// (gradient.h) nor touch gathers through tensors (`LUT(I(b, l), d)` stays a scatter).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "grad/expr_build.h"
#include "infer/ranges.h"

namespace tc::grad {

// Index variables with their ranges, in the order a where clause lists them.
using Ranges = std::vector<std::pair<std::string, infer::Range>>;

// One accumulation into a gradient tensor: G(subscripts) += value over `ranges`.
struct Contribution {
  std::vector<ExprPtr> subscripts;
  ExprPtr value;
  Ranges ranges;
};

// Rewrites c in place when every subscript is either a distinct plain variable or `v + rest`
// or `-v + rest` with a variable v found in no other subscript (a stride, `2*i + kh`, stays a
// scatter: its gather would test divisibility at every point); when a subscript has several
// variables, v must be one of `eliminate_first` (the forward statement's left-hand side
// variables: solving for them leaves the short window sums), else it stays a scatter. `extents` are G's,
// `new_vars` the names for its dimensions. Returns whether it rewrote.
bool to_gather_form(Contribution& c, const std::vector<infer::SymExpr>& extents,
                    const std::vector<std::string>& new_vars, const std::set<std::string>& eliminate_first);

}  // namespace tc::grad
