// printer.h — prints expressions back as TC source (for messages and descriptions).
#pragma once

#include <string>

#include "lang/ast.h"

namespace tc::lang {

std::string to_source(const Expr& e);

}  // namespace tc::lang
