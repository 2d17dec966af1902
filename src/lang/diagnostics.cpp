// diagnostics.cpp — formatting of source errors with the offending line and a caret.
#include "lang/diagnostics.h"

#include <cctype>

#include "support/error.h"

namespace tc::lang {

std::string SourceText::line_at(int line) const {
  size_t start = 0;
  for (int l = 1; l < line && start != std::string::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos || start > text.size()) return "";
  size_t end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The name of the last "def NAME" that starts before `offset`, or "" (a textual scan, so that
// lexer and parser errors name their def too).
std::string enclosing_def(const std::string& text, size_t offset) {
  std::string found;
  for (size_t p = text.find("def"); p != std::string::npos && p < offset; p = text.find("def", p + 3)) {
    bool starts_word = p == 0 || !word_char(text[p - 1]);
    size_t q = p + 3;
    if (!starts_word || q >= text.size() || !std::isspace(static_cast<unsigned char>(text[q]))) continue;
    while (q < text.size() && std::isspace(static_cast<unsigned char>(text[q]))) ++q;
    size_t e = q;
    while (e < text.size() && word_char(text[e])) ++e;
    if (e > q) found = text.substr(q, e - q);
  }
  return found;
}

}  // namespace

std::string format(const SourceText& src, const std::string& def_name, SourceLoc loc,
                   const std::string& message) {
  std::string def = !def_name.empty() ? def_name : enclosing_def(src.text, loc.offset);
  std::string where = !src.file_name.empty() ? src.file_name : (!def.empty() ? def : "<source>");
  std::string out = where + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) +
                    ": error: " + message;
  std::string line = src.line_at(loc.line);  // may be empty (an error at the end of input)
  std::string caret;
  for (int i = 1; i < loc.col && i <= static_cast<int>(line.size()); ++i) caret += line[i - 1] == '\t' ? '\t' : ' ';
  return out + "\n" + line + "\n" + caret + "^";
}

void report(int status, const SourceText& src, const std::string& def_name, SourceLoc loc,
            const std::string& message) {
  fail(status, format(src, def_name, loc, message));
}

}  // namespace tc::lang
