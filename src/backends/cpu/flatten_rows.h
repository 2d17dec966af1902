// flatten_rows.h — which reductions the cpu backend computes over flattened rows: a valid
// convolution `O(..., h, w) +=! I(..., h + kh, w + kw) * W(..., kh, kw)` computed at the
// positions q = h·Win + w of its input's rows (Win the input's row length), so that the
// vectors run along whole input planes instead of along output rows of Wout < Win elements.
// A 54-column output row in vectors of 16 computes 64 columns (the last vector shifted
// inwards); over flattened rows it computes 56 for each 54 (the columns past Wout, dropped).
// In the flattened stage h is 0 and w is q: a read I(..., h + kh, w + kw) is then
// I(..., kh, q + kw), whose address is the flattened one when I's rows are Win apart, so the
// reads need no other change; the generated code is given I with its innermost dimension
// Hin·Win long (cpu_backend.cpp) and requires the rows to be dense (else the general variant
// runs). Every output element sums the same terms in the same order: the bits are those of
// the unflattened stage. It decides; lower.cpp builds the stages, schedule/ schedules them.
#pragma once

#include <vector>

#include "ir/bind.h"

namespace tc::backends::cpu {

struct RowFlattening {
  int stmt = -1;               // the statement
  int64_t row = 0;             // Win: the length of the flattened inputs' rows
  int64_t positions = 0;       // (Hout - 1)·Win + Wout: the flattened positions computed
  std::vector<int> inputs;     // the flattened inputs (tensor numbers)
};

// mode: 1 every statement that can be flattened; -1 (auto) those whose output rows leave more
// than 10% of the vector lanes unused, whose flattened rows leave at most 12.5% (Win - Wout of
// every Win) and whose reduction is long enough for the lanes saved to pay for the copy back
// (flatten_rows.cpp, kCopyLanes); 0 none. vector_bytes: the target's vector width (64 with
// AVX-512).
std::vector<RowFlattening> plan_row_flattening(const ir::BoundDef& bound, int mode, int vector_bytes);

}  // namespace tc::backends::cpu
