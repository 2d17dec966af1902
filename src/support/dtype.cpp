// dtype.cpp — the scalar type table and its DLPack mapping.
#include "support/dtype.h"

#include <map>

#include "tc/tc.h"

namespace tc {
namespace {

const ScalarTypeInfo kTable[] = {
    {ScalarType::Bool, "bool", ScalarKind::Bool, 8, TC_DL_BOOL},
    {ScalarType::UInt8, "uint8", ScalarKind::Unsigned, 8, kDLUInt},
    {ScalarType::UInt16, "uint16", ScalarKind::Unsigned, 16, kDLUInt},
    {ScalarType::UInt32, "uint32", ScalarKind::Unsigned, 32, kDLUInt},
    {ScalarType::UInt64, "uint64", ScalarKind::Unsigned, 64, kDLUInt},
    {ScalarType::Int8, "int8", ScalarKind::Signed, 8, kDLInt},
    {ScalarType::Int16, "int16", ScalarKind::Signed, 16, kDLInt},
    {ScalarType::Int32, "int32", ScalarKind::Signed, 32, kDLInt},
    {ScalarType::Int64, "int64", ScalarKind::Signed, 64, kDLInt},
    {ScalarType::Float16, "float16", ScalarKind::Float, 16, kDLFloat},
    {ScalarType::Float32, "float32", ScalarKind::Float, 32, kDLFloat},
    {ScalarType::Float64, "float64", ScalarKind::Float, 64, kDLFloat},
    {ScalarType::BFloat16, "bfloat16", ScalarKind::Float, 16, kDLBfloat},
};

}  // namespace

const ScalarTypeInfo& info(ScalarType t) { return kTable[static_cast<int>(t)]; }

std::optional<ScalarType> scalar_type_from_name(const std::string& spelling) {
  static const std::map<std::string, ScalarType> kAliases = {
      {"float", ScalarType::Float32}, {"double", ScalarType::Float64}, {"half", ScalarType::Float16},
      {"int", ScalarType::Int32},     {"byte", ScalarType::UInt8},     {"char", ScalarType::Int8},
      {"long", ScalarType::Int64},   {"bf16", ScalarType::BFloat16},
  };
  for (const auto& e : kTable)
    if (spelling == e.name) return e.type;
  auto it = kAliases.find(spelling);
  if (it != kAliases.end()) return it->second;
  return std::nullopt;
}

DLDataType to_dlpack(ScalarType t) {
  DLDataType dt;
  dt.code = info(t).dl_code;
  dt.bits = static_cast<uint8_t>(info(t).bits);
  dt.lanes = 1;
  return dt;
}

std::optional<ScalarType> from_dlpack(DLDataType dt) {
  if (dt.lanes != 1) return std::nullopt;
  for (const auto& e : kTable)
    if (e.dl_code == dt.code && e.bits == dt.bits) return e.type;
  return std::nullopt;
}

std::string dlpack_to_string(DLDataType dt) {
  std::string base;
  DLDataType scalar = dt;
  scalar.lanes = 1;
  if (auto t = from_dlpack(scalar)) {
    base = name(*t);
  } else {
    static const char* kCodes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
    base = dt.code < 7 ? kCodes[dt.code] : "code" + std::to_string(dt.code) + ":";
    base += std::to_string(dt.bits);
  }
  if (dt.lanes != 1) base += "x" + std::to_string(dt.lanes);
  return base;
}

}  // namespace tc
