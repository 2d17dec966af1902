// dtype.h — the table of TC scalar types: their names in the language, bit widths, kinds and
// DLPack codes. The one place these facts live; parsing, typing, binding and every backend
// ask this table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <dlpack/dlpack.h>

namespace tc {

enum class ScalarKind { Bool, Signed, Unsigned, Float };

enum class ScalarType : uint8_t {
  Bool, UInt8, UInt16, UInt32, UInt64, Int8, Int16, Int32, Int64, Float16, Float32, Float64, BFloat16
};

struct ScalarTypeInfo {
  ScalarType type;
  const char* name;  // canonical name in the language ("float32")
  ScalarKind kind;
  int bits;          // storage bits (bool: 8)
  uint8_t dl_code;   // DLDataTypeCode
};

const ScalarTypeInfo& info(ScalarType t);
inline const char* name(ScalarType t) { return info(t).name; }
inline ScalarKind kind(ScalarType t) { return info(t).kind; }
inline int bits(ScalarType t) { return info(t).bits; }
inline int bytes(ScalarType t) { return info(t).bits / 8; }
inline bool is_float(ScalarType t) { return kind(t) == ScalarKind::Float; }
inline bool is_integer(ScalarType t) { return kind(t) == ScalarKind::Signed || kind(t) == ScalarKind::Unsigned; }
// The 16-bit float types, stored as their bits and computed in float32, each result rounded
// to the type (round to nearest even, NaN kept).
inline bool is_float16_like(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }

// Language spelling, including aliases (float, double, half, bf16, int, byte, ...).
std::optional<ScalarType> scalar_type_from_name(const std::string& spelling);

DLDataType to_dlpack(ScalarType t);
std::optional<ScalarType> from_dlpack(DLDataType dt);  // lanes must be 1
std::string dlpack_to_string(DLDataType dt);           // "float32", "int8x4", "code7:16"

}  // namespace tc
