// program.h — the checked program: the annotated syntax tree of every def together with its
// inferred ranges, its IR (def.h) and a printable description. Immutable once built; binding
// and the backends read only the IR, the C API's queries the rest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "infer/ranges.h"
#include "ir/def.h"
#include "lang/ast.h"

namespace tc::ir {

struct Program {
  lang::Program ast;
  std::vector<infer::DefRanges> ranges;    // parallel to ast.defs
  std::vector<std::string> descriptions;   // parallel to ast.defs
  std::vector<std::shared_ptr<const Def>> ir;  // parallel to ast.defs

  size_t num_defs() const { return ast.defs.size(); }
  const lang::Def& def(size_t i) const { return ast.defs[i]; }
  // entry nullptr: the only def. Throws TC_ERROR_INVALID_ARGUMENT if absent or ambiguous.
  size_t find_def(const char* entry) const;
};

// Parses, checks and infers. `source_name` may be empty (diagnostics then name the def).
std::shared_ptr<const Program> build_program(const std::string& source, const std::string& source_name);

}  // namespace tc::ir
