// c_text.cpp — C spellings for the printer (printer.h): types, literals, conversions with
// TC's semantics, and isl's expressions in C with its min/max/floord as the prelude's.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>

#include "backends/cuda/isl_util.h"
#include "backends/cuda/print/printer.h"
#include "support/half.h"

namespace tc::backends::cuda::print {

std::string c_type(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "unsigned char";
    case ScalarType::UInt16: return "unsigned short";
    case ScalarType::UInt32: return "unsigned int";
    case ScalarType::UInt64: return "unsigned long long";
    case ScalarType::Int8: return "signed char";
    case ScalarType::Int16: return "short";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "long long";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::Float16: return "float";  // computed as float, rounded to half
    case ScalarType::BFloat16: return "float";  // computed as float, rounded to bfloat16
  }
  return "void";
}

// Tensors are stored as their C type, bool as one byte, float16 and bfloat16 as their bits.
std::string storage_type(ScalarType t) {
  return t == ScalarType::Bool ? "unsigned char" : is_float16_like(t) ? "unsigned short" : c_type(t);
}

// A float16 or bfloat16 result rounded to its type; any other unchanged.
std::string rounded(const std::string& x, ScalarType t) {
  if (t == ScalarType::Float16) return "tc_rh(" + x + ")";
  return t == ScalarType::BFloat16 ? "tc_rb(" + x + ")" : x;
}

std::string param(const ir::Tensor& t) { return "p_" + t.name; }

// `value` (of type t) as t is stored: bool as one byte, float16 and bfloat16 as their bits.
std::string stored(const std::string& value, ScalarType t) {
  if (t == ScalarType::Bool) return "(unsigned char)(" + value + ")";
  if (t == ScalarType::BFloat16) return "tc_f2b(" + value + ")";
  return t == ScalarType::Float16 ? "tc_f2h(" + value + ")" : value;
}

std::string load_as(const std::string& element, ScalarType t) {
  if (t == ScalarType::Float16) return "tc_h2f(" + element + ")";
  if (t == ScalarType::BFloat16) return "tc_b2f(" + element + ")";
  return t == ScalarType::Bool ? "(" + element + " != 0)" : element;
}

std::vector<std::string> parameter_types(const ir::Def& def) {
  std::vector<std::string> types;
  for (const auto& t : def.tensors) types.push_back(storage_type(t.type) + "*");
  types.push_back("unsigned long long*");
  return types;
}

std::string kernel_parameters(const ir::Def& def) {
  std::string params;
  for (const auto& t : def.tensors) params += storage_type(t.type) + "* __restrict__ " + param(t) + ", ";
  return params + "unsigned long long* __restrict__ tc_fault";
}

// `x` (of type `from`) as a value of type `to`, with TC's conversions.
std::string convert(const std::string& x, ScalarType from, ScalarType to) {
  if (from == to) return x;
  if (to == ScalarType::Bool) return "((" + x + ") != 0)";
  if (is_float16_like(to)) return rounded("(float)(" + x + ")", to);  // from double: twice, as the reference
  std::string T = c_type(to);
  if (is_float(from) && is_integer(to)) {
    const char* f = kind(to) == ScalarKind::Signed ? "tc_f2s" : "tc_f2u";
    return "((" + T + ")" + f + "((double)(" + x + "), " + std::to_string(bits(to)) + "))";
  }
  return "((" + T + ")(" + x + "))";
}

std::string float_literal(double v, ScalarType t) {
  bool f32 = t != ScalarType::Float64;
  // As a value of its type (the literal 1e39 of a float32 is inf, -5e-324 is -0.0): NVRTC
  // refuses a float constant out of range.
  v = tc::rounded_to_type(v, t);
  if (std::isnan(v)) return f32 ? "tc_nanf()" : "tc_nan()";
  if (std::isinf(v)) return std::string(v < 0 ? "(-" : "(") + (f32 ? "tc_inff()" : "tc_inf()") + ")";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return std::string("(") + buf + (f32 ? "f" : "") + ")";
}

std::string int_literal(int64_t v, ScalarType t) {
  if (t == ScalarType::Bool) return v ? "true" : "false";
  if (kind(t) == ScalarKind::Unsigned) return "((" + c_type(t) + ")" + std::to_string(static_cast<uint64_t>(v)) + "ull)";
  if (v == INT64_MIN) return "((" + c_type(t) + ")(-9223372036854775807ll - 1))";
  return "((" + c_type(t) + ")" + std::to_string(v) + "ll)";
}

// isl's C text with its min/max/floord spelled as the prelude's functions.
std::string renamed_calls(std::string s) {
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      if (at == 0 || !(std::isalnum(static_cast<unsigned char>(s[at - 1])) || s[at - 1] == '_')) s.replace(at, from.size(), to);
  };
  replace("min(", "tc_imin(");
  replace("max(", "tc_imax(");
  replace("floord(", "tc_floord(");
  return s;
}

// isl's expressions in C (takes e).
std::string isl_c(isl_ast_expr* e) {
  isl::ast_expr owned = isl::manage(e);
  return renamed_calls(owned_text(isl_ast_expr_to_C_str(e)));
}

// A printer of C into a string.
isl_printer* c_printer(isl_ctx* ctx) { return isl_printer_set_output_format(isl_printer_to_str(ctx), ISL_FORMAT_C); }

// What `printer` printed (takes it).
std::string c_of(isl_printer* printer) {
  std::unique_ptr<isl_printer, isl_printer* (*)(isl_printer*)> owned(printer, isl_printer_free);
  return owned_text(isl_printer_get_str(printer));
}

}  // namespace tc::backends::cuda::print
