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

std::string Def::out_of_bounds(const lang::SourceLoc& loc, const std::string& access, bool write,
                               const std::string& tensor, const std::string& index, int dim, int64_t extent,
                               const std::vector<std::string>& vars, const std::vector<std::string>& values) const {
  std::string at;
  for (size_t i = 0; i < vars.size() && i < values.size(); ++i) at += (i ? ", " : "") + vars[i] + "=" + values[i];
  return located(loc, "'" + access + (write ? "' writes '" : "' reads '") + tensor + "' out of bounds: index " + index +
                          " in dimension " + std::to_string(dim) + ", whose extent is " + std::to_string(extent) +
                          (at.empty() ? "" : " (at " + at + ")"));
}

}  // namespace tc::ir
