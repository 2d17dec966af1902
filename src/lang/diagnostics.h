// diagnostics.h — source positions and the one formatter of source errors:
//   "<name>:<line>:<col>: error: <message>\n<source line>\n<caret>"
// where <name> is the file name given to tc_define_named, else the enclosing def's name.
// It does not decide statuses beyond carrying the one the caller passes.
#pragma once

#include <memory>
#include <string>

namespace tc::lang {

struct SourceLoc {
  int line = 1;  // 1-based
  int col = 1;   // 1-based
  size_t offset = 0;
};

struct SourceText {
  std::string text;
  std::string file_name;  // empty: diagnostics use the def name
  std::string line_at(int line) const;
};

// Formats and throws tc::Error(status, ...). `def_name` may be empty (outside any def).
[[noreturn]] void report(int status, const SourceText& src, const std::string& def_name, SourceLoc loc,
                         const std::string& message);
std::string format(const SourceText& src, const std::string& def_name, SourceLoc loc,
                   const std::string& message);

}  // namespace tc::lang
