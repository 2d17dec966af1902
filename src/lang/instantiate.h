// instantiate.h — rank polymorphism: a def with `...` (in a parameter type, `float(N, ...) X`,
// or an index list, `O(n, ...)`, `X(n, ...)`) stands for one ordinary def per number of
// dimensions `...` denotes. Like NumPy's einsum ellipsis, every `...` of a def denotes the
// same dimensions: in types, the same size names; in a statement's index lists, the same
// fresh index variables (LHS: output dimensions; right-hand side only: reduction variables).
// This file checks what can be checked without a rank and rewrites a parsed def into its
// instance for a given rank; sema, inference and everything after see only instances. It
// does not pick the rank (binding does, from the inputs: ir/bind.cpp) nor cache instances
// (ir/program.cpp).
#pragma once

#include <string>

#include "lang/ast.h"

namespace tc::lang {

// The names an instance gives the dimensions `...` stands for: sizes `<size_prefix>0`, ...,
// index variables `<index_prefix>0`, ...; prefixes that no identifier of the source uses.
struct EllipsisNames {
  std::string size_prefix = "_E";
  std::string index_prefix = "_e";
  std::string size(int k) const { return size_prefix + std::to_string(k); }
  std::string index(int k) const { return index_prefix + std::to_string(k); }
};
EllipsisNames ellipsis_names(const SourceText& source);

// The checks that need no rank (TC_ERROR_SEMANTIC, located): a `...` in an index list needs
// an input whose type has one; an output's annotation may not have one; no def may call a
// polymorphic def (TC_ERROR_UNSUPPORTED).
void check_polymorphism(const Program& program);

// Rewrites a parsed, not yet checked, def in place: each `...` becomes `rank` dimensions or
// index variables. The result has no `...` and is an ordinary def (polymorphic stays set).
void instantiate(Def& def, int rank, const EllipsisNames& names);

// `text` with the instance names written as the user wrote them: "...[k]" for dimension k of
// `...` (sizes and index variables alike), or "..." for all of them when `rank` is 1 (the
// instance that describes a polymorphic def).
std::string show_ellipsis(std::string text, const EllipsisNames& names, int rank);

}  // namespace tc::lang
