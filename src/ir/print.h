// print.h — the IR as text, by one printer in three namings:
//   - to_text(Def): the symbolic IR with the program's names (tensors, sizes, variables), for
//     tests, debugging and `tc check --ir`;
//   - canonical_text(BoundDef): a bound def with every name replaced by its position (t0.. for
//     tensors in def order, s0.. for sizes, v0.. for a statement's variables) and every extent
//     and range a number. Names, whitespace, comments and how calls were written do not
//     appear (calls are already inlined); every fact that changes what a kernel computes does:
//     dtypes, constants (floats exactly, in hexadecimal), operators and operand types, the
//     order of statements, domains, reductions and their '!', which tensors are inputs,
//     outputs or temporaries. The compilation cache keys on it (with the backend and options),
//     so a change of its format must change the version on its first line;
//   - family_text(Def): the symbolic IR with positional names, extents and ranges in the sizes
//     s0..: what canonical_text says of every binding of a def but its numbers. The cache's
//     `family` (the same def at other sizes, which seeds the tuner) is a hash of it.
#pragma once

#include <string>

#include "ir/bind.h"
#include "ir/def.h"

namespace tc::ir {

std::string to_text(const Def& def);
std::string canonical_text(const BoundDef& bound);
std::string family_text(const Def& def);

}  // namespace tc::ir
