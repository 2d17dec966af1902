// def.cpp — see def.h.
#include "ir/def.h"

namespace tc::ir {

bool Read::gather() const {
  for (const auto& s : subscripts)
    if (s.kind == IndexKind::DataDependent) return true;
  return false;
}

int Def::find_tensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

std::string Def::located(const lang::SourceLoc& loc, const std::string& msg) const {
  return lang::format(*source, name, loc, msg);
}

}  // namespace tc::ir
