// row_plan.h — recognising a row-wise def for the cuda backend's row route (cuda.rowwise):
// statements that all run over the same leading indices (a row: softmax's n, layernorm's n)
// and at most one more index each, along the row, such as
//   mx(n) max=! X(n,d)            a reduction along the row, into one value per row
//   e(n,d) = exp(X(n,d) - mx(n))   a pointwise statement over the row
//   r(n) = rsqrt(v(n) + 1e-5)      a value per row
// where what a statement reads of a tensor the def writes is from the same row, and every read
// that moves along the row index does so in its tensor's last dimension (the rows lie in
// memory along that index: neighbouring threads read neighbouring elements). Such a def runs
// as one kernel, a group of threads per row, each statement in turn, the group synchronised
// between them (print/rows.cpp). What it recognises and why it refuses; not the printing, and
// not whether a def takes the route (cuda_backend.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/bind.h"

namespace tc::backends::cuda {

// One statement as the route runs it: `along` says whether it has an index along the row
// (`var`, its statement variable, over [lo, hi)) and whether that index is summed (a
// reduction into one value per row: split across the row's threads and combined by a tree)
// or written (a pointwise statement: the row's threads take its values round robin).
struct RowStatement {
  enum class Along { None, Written, Reduced };
  size_t stmt = 0;
  Along along = Along::None;
  int var = -1;
  int64_t lo = 0, hi = 0;
};

struct RowPlan {
  std::vector<int64_t> rows;  // the row indices' extents (the first `rows.size()` of every written tensor)
  std::vector<RowStatement> stmts;
  // A reduction along the row reads a matrix that does not depend on every row index (a matrix
  // product's operand: isl's register tiles reuse it across rows, the route would read it again
  // for each): cuda.rowwise=auto leaves such a def to isl.
  bool shared_matrix = false;
  int64_t row_count() const;
  int64_t longest() const;  // the most values along the row any statement has
  // "2 statements reduced along the row, 2 pointwise; 128 rows"
  std::string describe() const;
};

// What the route may compute: `fma` (cuda.fma) allows float sums and products in the tree's
// order; without it a def with one stays off the route (its bits would not be the reference's).
// nullopt where the def is not row-wise; `why` (where given) then says what refused it.
std::optional<RowPlan> plan_rows(const ir::BoundDef& bound, bool fma, std::string* why = nullptr);

}  // namespace tc::backends::cuda
