// program.h — the checked program: the annotated syntax tree of every def together with its
// inferred ranges, its IR (def.h) and a printable description. Immutable once built; binding
// and the backends read only the IR, the C API's queries the rest.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "infer/ranges.h"
#include "ir/def.h"
#include "lang/ast.h"
#include "lang/instantiate.h"

namespace tc::ir {

struct Program {
  lang::Program ast;
  std::vector<infer::DefRanges> ranges;    // parallel to ast.defs
  std::vector<std::string> descriptions;   // parallel to ast.defs
  std::vector<std::shared_ptr<const Def>> ir;  // parallel to ast.defs

  // Rank polymorphism (lang/instantiate.h). Per def: whether it has `...`, and its inputs as
  // written (with `...`). ast, ranges, descriptions and ir hold a polymorphic def's instance
  // for rank 1, which checks and describes it (descriptions show "..."); binding compiles
  // the instance for the inputs' rank (instance()).
  std::vector<bool> polymorphic;
  std::vector<std::vector<lang::Param>> written_inputs;
  lang::EllipsisNames ellipsis;

  // The program whose def `def_index` is that def's instance for `rank` (no def of it is
  // polymorphic); built on first use, kept, shared. Thread-safe.
  std::shared_ptr<const Program> instance(size_t def_index, int rank) const;

  size_t num_defs() const { return ast.defs.size(); }
  const lang::Def& def(size_t i) const { return ast.defs[i]; }
  // entry nullptr: the only def. Throws TC_ERROR_INVALID_ARGUMENT if absent or ambiguous.
  size_t find_def(const char* entry) const;

 private:
  mutable std::mutex instances_mu_;
  mutable std::map<std::pair<size_t, int>, std::shared_ptr<const Program>> instances_;
};

// Parses, checks and infers. `source_name` may be empty (diagnostics then name the def).
std::shared_ptr<const Program> build_program(const std::string& source, const std::string& source_name);

}  // namespace tc::ir
