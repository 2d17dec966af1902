// print_cuda.cpp — see print_cuda.h. Walks isl's AST of the mapped schedule; loop bounds and
// statement arguments are isl's expressions in C, statement bodies the IR printed with the
// prelude's helpers.
#include "backends/cuda/print_cuda.h"

#include "backends/cuda/mapping.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/aff.h>
#include <isl/fixed_box.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/local_space.h>
#include <isl/printer.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/schedule.h>
#include <isl/val.h>

#include "backends/cuda/isl_util.h"
#include "support/error.h"
#include "support/exp_f32.h"
#include "support/half.h"

namespace tc::backends::cuda {
namespace {

// TC's scalar semantics as device functions, valid CUDA and host C++ alike (the emulation
// compiles the same text for the host). Mirrors src/backends/reference/scalar.cpp.
constexpr const char* kPrelude = R"(// TC's scalar semantics (libtc: src/backends/cuda/print_cuda.cpp)
#define TC_DEVICE __device__ __forceinline__
TC_DEVICE long long tc_imin(long long a, long long b) { return a < b ? a : b; }
TC_DEVICE long long tc_imax(long long a, long long b) { return a > b ? a : b; }
TC_DEVICE long long tc_floord(long long n, long long d) { return n < 0 ? -((-n + d - 1) / d) : n / d; }
TC_DEVICE long long tc_clamp(long long i, long long n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }
// The block (or thread) that runs the instances whose mapped schedule value is v: values step by
// `stride`; consecutive steps go to consecutive ones of `count`, round robin. One rule for every
// loop and every statement, so instances with equal values run on one thread.
TC_DEVICE long long tc_owner(long long v, long long stride, long long count) {
  long long r = tc_floord(v, stride) % count;
  return r < 0 ? r + count : r;
}
// The first step of a loop (its first value's step index q) that `id` owns.
TC_DEVICE long long tc_first(long long q, long long id, long long count) {
  long long r = (id - q) % count;
  return r < 0 ? r + count : r;
}
// A bad index of check `id`, recorded if it is the first (check id + 1, the index, the
// statement's variables there).
TC_DEVICE void tc_record(unsigned long long* fault, unsigned long long id, long long i, const long long* at, int vars) {
  if (atomicCAS(fault, 0ull, id + 1) == 0ull) {
    fault[1] = (unsigned long long)i;
    for (int k = 0; k < vars; ++k) fault[2 + k] = (unsigned long long)at[k];
  }
}
// A checked read's index: in [0, n), else recorded and the read clamped.
TC_DEVICE long long tc_checked(long long i, long long n, unsigned long long* fault, unsigned long long id,
                               const long long* at, int vars) {
  if (i >= 0 && i < n) return i;
  tc_record(fault, id, i, at, vars);
  return tc_clamp(i, n);
}
TC_DEVICE float tc_nanf() { union { unsigned u; float f; } x; x.u = 0x7fc00000u; return x.f; }
TC_DEVICE double tc_nan() { union { unsigned long long u; double f; } x; x.u = 0x7ff8000000000000ull; return x.f; }
TC_DEVICE float tc_inff() { union { unsigned u; float f; } x; x.u = 0x7f800000u; return x.f; }
TC_DEVICE double tc_inf() { union { unsigned long long u; double f; } x; x.u = 0x7ff0000000000000ull; return x.f; }
// Integers wrap: computed modulo 2^64, then narrowed.
template <typename T> TC_DEVICE T tc_add(T a, T b) { return (T)((unsigned long long)a + (unsigned long long)b); }
template <typename T> TC_DEVICE T tc_sub(T a, T b) { return (T)((unsigned long long)a - (unsigned long long)b); }
template <typename T> TC_DEVICE T tc_mul(T a, T b) { return (T)((unsigned long long)a * (unsigned long long)b); }
template <typename T> TC_DEVICE T tc_neg(T a) { return (T)(0ull - (unsigned long long)a); }
TC_DEVICE float tc_add(float a, float b) { return a + b; }
TC_DEVICE double tc_add(double a, double b) { return a + b; }
TC_DEVICE float tc_sub(float a, float b) { return a - b; }
TC_DEVICE double tc_sub(double a, double b) { return a - b; }
TC_DEVICE float tc_mul(float a, float b) { return a * b; }
TC_DEVICE double tc_mul(double a, double b) { return a * b; }
TC_DEVICE float tc_neg(float a) { return -a; }
TC_DEVICE double tc_neg(double a) { return -a; }
// Euclidean integer division (support/int_math.h): 0 <= a % b < |b|; by zero gives 0.
TC_DEVICE long long tc_ediv(long long a, long long b) {
  if (b == 0) return 0;
  if (b == -1) return (long long)(0ull - (unsigned long long)a);
  long long q = a / b;
  if (a % b < 0) q += b > 0 ? -1 : 1;
  return q;
}
TC_DEVICE long long tc_emod(long long a, long long b) {
  if (b == 0 || b == -1) return 0;
  long long r = a % b;
  if (r >= 0) return r;
  unsigned long long magnitude = b < 0 ? 0ull - (unsigned long long)b : (unsigned long long)b;
  return (long long)((unsigned long long)r + magnitude);
}
template <typename T> TC_DEVICE T tc_div(T a, T b) {
  if ((T)-1 < (T)0) return (T)tc_ediv((long long)a, (long long)b);
  return b == 0 ? (T)0 : (T)(a / b);
}
template <typename T> TC_DEVICE T tc_mod(T a, T b) {
  if ((T)-1 < (T)0) return (T)tc_emod((long long)a, (long long)b);
  return b == 0 ? (T)0 : (T)(a % b);
}
TC_DEVICE float tc_div(float a, float b) { return a / b; }
TC_DEVICE double tc_div(double a, double b) { return a / b; }
// Floats: NumPy's floored modulo.
TC_DEVICE float tc_mod(float a, float b) {
  float r = fmodf(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) return r + b;
  if (r == 0) return b < 0 ? -0.0f : 0.0f;
  return r;
}
TC_DEVICE double tc_mod(double a, double b) {
  double r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) return r + b;
  if (r == 0) return b < 0 ? -0.0 : 0.0;
  return r;
}
// min and max: NaN if either is NaN.
template <typename T> TC_DEVICE T tc_min(T a, T b) { return a < b ? a : b; }
template <typename T> TC_DEVICE T tc_max(T a, T b) { return b < a ? a : b; }
TC_DEVICE float tc_min(float a, float b) { return (a != a || b != b) ? tc_nanf() : a < b ? a : b; }
TC_DEVICE double tc_min(double a, double b) { return (a != a || b != b) ? tc_nan() : a < b ? a : b; }
TC_DEVICE float tc_max(float a, float b) { return (a != a || b != b) ? tc_nanf() : b < a ? a : b; }
TC_DEVICE double tc_max(double a, double b) { return (a != a || b != b) ? tc_nan() : b < a ? a : b; }
template <typename T> TC_DEVICE T tc_abs(T a) { return a < (T)0 ? tc_neg(a) : a; }
TC_DEVICE float tc_abs(float a) { return fabsf(a); }
TC_DEVICE double tc_abs(double a) { return fabs(a); }
// copysign with a NaN's sign counted as positive (the reference's rule).
TC_DEVICE float tc_copysign(float x, float y) { return y != y ? fabsf(x) : copysignf(x, y); }
TC_DEVICE double tc_copysign(double x, double y) { return y != y ? fabs(x) : copysign(x, y); }
TC_DEVICE float tc_rsqrt(float a) { return 1.0f / sqrtf(a); }
TC_DEVICE double tc_rsqrt(double a) { return 1.0 / sqrt(a); }
// float16 is stored as its bits (unsigned short) and computed as float, every result rounded
// to half (round to nearest even), as support/half.h does for the other backends.
TC_DEVICE float tc_h2f(unsigned short h) {
  unsigned sign = (unsigned)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {
      int e = -1;
      do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
      bits = sign | (unsigned)(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  union { unsigned u; float f; } x; x.u = bits; return x.f;
}
TC_DEVICE unsigned short tc_f2h(float f) {
  union { unsigned u; float f; } v; v.f = f;
  unsigned x = v.u, abs = x & 0x7fffffffu;
  unsigned short sign = (unsigned short)((x >> 16) & 0x8000u);
  if (abs >= 0x7f800000u) return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  if (abs >= 0x477ff000u) return sign | 0x7c00u;
  if (abs < 0x33000001u) return sign;
  unsigned exp = abs >> 23, man = (abs & 0x7fffffu) | 0x800000u;
  int shift = exp < 113 ? (int)(126 - exp) : 13;
  unsigned half_man = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (half_man & 1u))) ++half_man;
  if (exp < 113) return sign | (unsigned short)half_man;
  return sign | (unsigned short)(((exp - 112) << 10) + (half_man - 0x400u));
}
TC_DEVICE float tc_rh(float f) { return tc_h2f(tc_f2h(f)); }
// bfloat16 likewise: stored as its bits (float's upper half), computed as float, every result
// rounded to nearest even (a NaN gives 0x7fc0), as support/half.h does.
TC_DEVICE float tc_b2f(unsigned short b) { union { unsigned u; float f; } x; x.u = (unsigned)b << 16; return x.f; }
TC_DEVICE unsigned short tc_f2b(float f) {
  union { unsigned u; float f; } v; v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return (unsigned short)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}
TC_DEVICE float tc_rb(float f) { return tc_b2f(tc_f2b(f)); }
// A scatter's update, atomic (several threads may add to one element): CUDA's atomicAdd for 4-
// and 8-byte elements (integers wrap), a compare-and-swap of the aligned 32-bit word holding
// a 1- or 2-byte element (bool: or; float16, bfloat16: added as float, rounded to the type).
template <typename Op> TC_DEVICE void tc_atomic_field(void* p, unsigned width, Op op) {
  unsigned long long a = (unsigned long long)p;
  unsigned* word = (unsigned*)(a & ~3ull);
  unsigned shift = (unsigned)(a & 3ull) * 8u, mask = (width == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    unsigned next = (op((assumed & mask) >> shift) << shift) & mask;
    old = atomicCAS(word, assumed, (assumed & ~mask) | next);
  } while (old != assumed);
}
struct tc_add_s8 { signed char v; TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned char)tc_add((signed char)x, v); } };
struct tc_add_u8 { unsigned char v; TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned char)tc_add((unsigned char)x, v); } };
struct tc_add_s16 { short v; TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned short)tc_add((short)x, v); } };
struct tc_add_u16 { unsigned short v; TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned short)tc_add((unsigned short)x, v); } };
struct tc_or_bool { bool v; TC_DEVICE unsigned operator()(unsigned x) const { return (x != 0u || v) ? 1u : 0u; } };
struct tc_add_half { float v; TC_DEVICE unsigned operator()(unsigned x) const { return tc_f2h(tc_h2f((unsigned short)x) + v); } };
struct tc_add_bf16 { float v; TC_DEVICE unsigned operator()(unsigned x) const { return tc_f2b(tc_b2f((unsigned short)x) + v); } };
TC_DEVICE void tc_atomic_add(float* p, float v) { atomicAdd(p, v); }
TC_DEVICE void tc_atomic_add(double* p, double v) { atomicAdd(p, v); }
TC_DEVICE void tc_atomic_add(int* p, int v) { atomicAdd((unsigned*)p, (unsigned)v); }
TC_DEVICE void tc_atomic_add(unsigned* p, unsigned v) { atomicAdd(p, v); }
TC_DEVICE void tc_atomic_add(long long* p, long long v) { atomicAdd((unsigned long long*)p, (unsigned long long)v); }
TC_DEVICE void tc_atomic_add(unsigned long long* p, unsigned long long v) { atomicAdd(p, v); }
TC_DEVICE void tc_atomic_add(signed char* p, signed char v) { tc_add_s8 op = {v}; tc_atomic_field(p, 1, op); }
TC_DEVICE void tc_atomic_add(unsigned char* p, unsigned char v) { tc_add_u8 op = {v}; tc_atomic_field(p, 1, op); }
TC_DEVICE void tc_atomic_add(short* p, short v) { tc_add_s16 op = {v}; tc_atomic_field(p, 2, op); }
TC_DEVICE void tc_atomic_add(unsigned short* p, unsigned short v) { tc_add_u16 op = {v}; tc_atomic_field(p, 2, op); }
TC_DEVICE void tc_atomic_or(unsigned char* p, bool v) { tc_or_bool op = {v}; tc_atomic_field(p, 1, op); }
TC_DEVICE void tc_atomic_add_half(unsigned short* p, float v) { tc_add_half op = {v}; tc_atomic_field(p, 2, op); }
TC_DEVICE void tc_atomic_add_bf16(unsigned short* p, float v) { tc_add_bf16 op = {v}; tc_atomic_field(p, 2, op); }
// An element updated atomically: f maps its stored value to the new one (the lanes' partial
// reductions combined into it, cuda.reduction=atomic). 4 and 8 bytes: a compare-and-swap of the
// element; 1 and 2 bytes: of the aligned 32-bit word that holds it.
template <typename T, typename F> TC_DEVICE void tc_atomic_cas32(T* p, F f) {
  unsigned* w = (unsigned*)p;
  unsigned old = *w, assumed;
  do {
    assumed = old;
    union { unsigned u; T v; } cur, next;
    cur.u = assumed;
    next.v = f(cur.v);
    old = atomicCAS(w, assumed, next.u);
  } while (old != assumed);
}
template <typename T, typename F> TC_DEVICE void tc_atomic_cas64(T* p, F f) {
  unsigned long long* w = (unsigned long long*)p;
  unsigned long long old = *w, assumed;
  do {
    assumed = old;
    union { unsigned long long u; T v; } cur, next;
    cur.u = assumed;
    next.v = f(cur.v);
    old = atomicCAS(w, assumed, next.u);
  } while (old != assumed);
}
template <typename T, typename F> struct tc_narrow {
  F f;
  TC_DEVICE unsigned operator()(unsigned x) const { return (unsigned)(unsigned short)f((T)x) & (sizeof(T) == 1 ? 0xffu : 0xffffu); }
};
template <typename F> TC_DEVICE void tc_atomic_update(float* p, F f) { tc_atomic_cas32(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(int* p, F f) { tc_atomic_cas32(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(unsigned* p, F f) { tc_atomic_cas32(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(double* p, F f) { tc_atomic_cas64(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(long long* p, F f) { tc_atomic_cas64(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(unsigned long long* p, F f) { tc_atomic_cas64(p, f); }
template <typename F> TC_DEVICE void tc_atomic_update(signed char* p, F f) { tc_narrow<signed char, F> op = {f}; tc_atomic_field(p, 1, op); }
template <typename F> TC_DEVICE void tc_atomic_update(unsigned char* p, F f) { tc_narrow<unsigned char, F> op = {f}; tc_atomic_field(p, 1, op); }
template <typename F> TC_DEVICE void tc_atomic_update(short* p, F f) { tc_narrow<short, F> op = {f}; tc_atomic_field(p, 2, op); }
template <typename F> TC_DEVICE void tc_atomic_update(unsigned short* p, F f) { tc_narrow<unsigned short, F> op = {f}; tc_atomic_field(p, 2, op); }
// A warp's lanes combine their partial reductions (cuda.reduction=tree): lane l gets lane
// l + off's value (its own past the warp's end).
template <typename T> TC_DEVICE T tc_shfl_down(T v, int off) { return (T)__shfl_down_sync(0xffffffffu, (long long)v, off); }
TC_DEVICE float tc_shfl_down(float v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
TC_DEVICE double tc_shfl_down(double v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
TC_DEVICE bool tc_shfl_down(bool v, int off) { return __shfl_down_sync(0xffffffffu, (int)v, off) != 0; }
// The threads along x that share threadIdx.y and z (a reduction's loop is split across them,
// cuda.reduction=tree|atomic; blockDim.x is a multiple of 32) wait for each other and see each
// other's writes: one warp with __syncwarp, several with the hardware barrier 1 + their
// group's index (the host allows at most 15 groups then; barrier 0 is __syncthreads').
TC_DEVICE void tc_group_sync() {
  if (blockDim.x == 32) __syncwarp();
  else __barrier_sync_count(1u + threadIdx.y + blockDim.y * threadIdx.z, blockDim.x);
}
// The index of the calling thread's warp in its block (threads numbered x fastest).
TC_DEVICE unsigned tc_warp_index() { return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 32u; }
// Float to integer: truncated toward zero, saturated, NaN gives 0.
TC_DEVICE long long tc_f2s(double x, int bits) {
  if (x != x) return 0;
  double hi = ldexp(1.0, bits - 1);
  if (x >= hi) return bits == 64 ? 9223372036854775807ll : (long long)hi - 1;
  if (x <= -hi) return bits == 64 ? -9223372036854775807ll - 1 : -(long long)hi;
  return (long long)trunc(x);
}
TC_DEVICE unsigned long long tc_f2u(double x, int bits) {
  if (x != x || x <= 0) return 0;
  double hi = ldexp(1.0, bits);
  if (x >= hi) return bits == 64 ? 18446744073709551615ull : (unsigned long long)hi - 1;
  return (unsigned long long)trunc(x);
}
)";

// Where a reduction is split across several warps (cuda.reduction=tree): each warp's total, in
// the member of the reduction's type, one slot per warp of a block (at most 32), shared by all
// such reductions of a kernel (the group's barrier before each keeps them apart). After the
// prelude in the texts that use it.
constexpr const char* kWarpTotals = R"(// The warps' totals of reductions across threads (cuda.reduction=tree)
union tc_total {
  bool b; unsigned char u8; unsigned short u16; unsigned int u32; unsigned long long u64;
  signed char s8; short s16; int s32; long long s64; float f32; double f64;
};
__shared__ tc_total tc_warp_totals[32];
)";

// TC's float32 exp as CUDA C: support/exp_f32.h's algorithm, operation for operation (its
// constants taken from there), so that the GPU and the emulation give the reference's bits.
std::string exp_f32_text() {
  namespace E = tc::exp_f32;
  auto f = [](float v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%af", static_cast<double>(v));
    return std::string(buf);
  };
  std::string poly = "  float p = " + f(E::kPoly[0]) + ";\n";
  for (size_t i = 1; i < sizeof E::kPoly / sizeof E::kPoly[0]; ++i) poly += "  p = fmaf(p, r, " + f(E::kPoly[i]) + ");\n";
  return "// float32 exp: libtc's one definition (src/support/exp_f32.h), step for step\n"
         "TC_DEVICE float tc_pow2f(int k) { union { unsigned u; float f; } x; x.u = (unsigned)(k + 127) << 23; return x.f; }\n"
         "TC_DEVICE float tc_expf(float x) {\n"
         "  if (x != x) return x;\n"
         "  float xc = x < " + f(E::kHighest) + " ? x : " + f(E::kHighest) + ";\n"
         "  xc = xc > " + f(E::kLowest) + " ? xc : " + f(E::kLowest) + ";\n"
         "  float n = floorf(fmaf(xc, " + f(E::kLog2E) + ", 0.5f));\n"
         "  float r = fmaf(n, " + f(-E::kLn2High) + ", xc);\n"
         "  r = fmaf(n, " + f(-E::kLn2Low) + ", r);\n" + poly +
         "  float y = fmaf(p * r, r, r) + 1.0f;\n"
         "  int ni = (int)n, n1 = ni >> 1, n2 = ni - n1;\n"
         "  return y * tc_pow2f(n1) * tc_pow2f(n2);\n"
         "}\n";
}

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

// isl's expressions in C.
std::string isl_c(isl_ast_expr* e) {
  std::string s = owned_text(isl_ast_expr_to_C_str(e));
  isl_ast_expr_free(e);
  return renamed_calls(s);
}

// Sets a variable for a scope and gives it its former value back at the scope's end, an
// exception included.
template <typename T>
class Scoped {
 public:
  Scoped(T& variable, T value) : variable_(variable), old_(variable) { variable_ = value; }
  ~Scoped() { variable_ = old_; }
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;

 private:
  T& variable_;
  T old_;
};

class Printer {
 public:
  Printer(const ir::BoundDef& b, const PolyModel& m, const PrintOptions& o)
      : b_(b),
        m_(m),
        checked_(o.checked),
        private_(o.registers),
        atomic_lanes_(o.atomic_lanes),
        fma_(o.fma),
        idx_(o.index32 ? "int" : "long long"),
        index_suffix_(o.index32 ? "" : "ll") {}

  CudaSource run(const isl_schedule* mapped) {
    isl_ast_build* build = isl_ast_build_alloc(m_.ctx());
    build = isl_ast_build_set_before_each_mark(build, &Printer::enter_mark, this);
    build = isl_ast_build_set_after_each_mark(build, &Printer::leave_mark, this);
    build = isl_ast_build_set_at_each_domain(build, &Printer::at_statement, this);
    isl_ast_node* tree = isl_ast_build_node_from_schedule(build, isl_schedule_copy(const_cast<isl_schedule*>(mapped)));
    isl_ast_build_free(build);
    if (callback_error_) {
      isl_ast_node_free(tree);
      std::rethrow_exception(callback_error_);
    }
    checked(tree, m_.ctx(), "generating the loop nest");
    try {
      top(tree);
    } catch (...) {
      isl_ast_node_free(tree);
      throw;
    }
    isl_ast_node_free(tree);
    out_.text = cuda_prelude() + (warp_totals_ ? std::string(kWarpTotals) + "\n" : "") + kernels_;
    for (const auto& t : b_.def().tensors) out_.param_types.push_back(storage_type(t.type) + "*");
    out_.param_types.push_back("unsigned long long*");
    for (const auto& st : b_.def().stmts) out_.fault_words = std::max(out_.fault_words, 2 + st.vars.size());
    return out_;
  }

 private:
  // Outside any kernel: a sequence is split into its parts, a kernel mark is a kernel, anything
  // else (a 0-d statement) a kernel of its own.
  void top(isl_ast_node* node) {
    if (isl_ast_node_get_type(node) == isl_ast_node_block) {
      isl_ast_node_list* children = isl_ast_node_block_get_children(node);
      for (int i = 0; i < isl_ast_node_list_n_ast_node(children); ++i) {
        isl_ast_node* child = isl_ast_node_list_get_ast_node(children, i);
        try {
          top(child);
        } catch (...) {
          isl_ast_node_free(child);
          isl_ast_node_list_free(children);
          throw;
        }
        isl_ast_node_free(child);
      }
      isl_ast_node_list_free(children);
      return;
    }
    kernel(node);
  }

  // ---- which block and thread runs a statement instance ----
  // A mapped member's values (the mark "block.x:32": blockIdx.x, step 32) go round robin to
  // the blocks or threads along its axis (tc_owner). A marked loop isl printed strides over
  // the values its block or thread owns; where isl printed no loop (a single value for the
  // statements there, say a 0-d statement after a loop over the same member), the statement
  // is guarded by the owner of its value instead. Either way an instance runs on the thread
  // that owns its values, so dependences of zero distance along the mapped members (all
  // that isl's coincidence leaves within a kernel) stay within one thread, in schedule order.
  struct Mapping {
    std::string index, count;  // "threadIdx.x", "blockDim.x"
    int64_t stride = 1;
  };

  static bool is_mapping(const std::string& mark) { return mark.rfind("block.", 0) == 0 || mark.rfind("thread.", 0) == 0; }

  static Mapping mapping_of(const std::string& mark) {
    bool block = mark[0] == 'b';
    size_t dot = mark.find('.'), colon = mark.find(':');
    std::string axis = mark.substr(dot + 1, colon == std::string::npos ? std::string::npos : colon - dot - 1);
    Mapping m{std::string(block ? "blockIdx." : "threadIdx.") + axis, std::string(block ? "gridDim." : "blockDim.") + axis};
    if (colon != std::string::npos) m.stride = std::stoll(mark.substr(colon + 1));
    return m;
  }

  struct OpenMark {
    std::string mark;
    const isl_union_pw_aff* values;  // the member's value per statement instance (the mark's user data)
  };

  static isl_stat enter_mark(isl_id* mark, isl_ast_build* build, void* user) {
    auto* p = static_cast<Printer*>(user);
    std::string name = isl_id_get_name(mark);
    if (is_mapping(name)) {
      const auto* member = static_cast<const MemberMark*>(isl_id_get_user(mark));
      p->open_marks_.push_back({name, member->values});
      p->member_loops_.push_back("c" + std::to_string(member->depth));  // its loop, where isl prints one
    }
    if (name == "kernel") p->shared_budget_ = kSharedBytes;  // static shared memory is per kernel: its marks share it
    if (name == "shared") {
      try {  // no exception may cross isl's C frames
        p->open_shared_.push_back(p->promotions_.size());
        p->promotions_.push_back(p->promote(build));
      } catch (...) {
        p->callback_error_ = std::current_exception();
        return isl_stat_error;
      }
    }
    return isl_stat_ok;
  }

  static isl_ast_node* leave_mark(isl_ast_node* node, isl_ast_build*, void* user) {
    auto* p = static_cast<Printer*>(user);
    isl_id* id = isl_ast_node_mark_get_id(node);
    std::string name = isl_id_get_name(id);
    isl_id_free(id);
    if (is_mapping(name) && !p->open_marks_.empty()) {
      p->open_marks_.pop_back();
      node = isl_ast_node_set_annotation(node, isl_id_alloc(isl_ast_node_get_ctx(node), p->member_loops_.back().c_str(), nullptr));
      p->member_loops_.pop_back();
    }
    if (name == "shared" && !p->open_shared_.empty()) {  // which promotions the printer finds at this mark
      std::string k = "shared" + std::to_string(p->open_shared_.back());
      p->open_shared_.pop_back();
      node = isl_ast_node_set_annotation(node, isl_id_alloc(isl_ast_node_get_ctx(node), k.c_str(), nullptr));
    }
    return node;
  }

  // ---- shared memory (cuda.shared): the reused tiles of a kernel's read-only tensors ----
  // At a "shared" mark (above a point band, inside the tile loops, which are the same for
  // every thread of a block), each tensor that the kernel reads but does not write, whose
  // every read is proven in bounds (so its index needs no clamping) and whose elements are
  // read more than once (its reads are not injective), is copied to shared memory: the box
  // isl finds around what one tile reads (isl_map_get_range_simple_fixed_box_hull: a fixed
  // size, an offset affine in the tile loops), if it fits the budget left. All of a block's
  // threads copy it (the elements inside the tensor), between two __syncthreads, and the
  // tile's reads of the tensor read the copy.
  // CUDA's static shared memory per block, less the prelude's tc_warp_totals.
  static constexpr int64_t kSharedBytes = 48 * 1024 - 32 * 8;

  struct SharedArray {
    size_t tensor = 0;
    std::string name;                 // tc_shared<k>
    std::vector<std::string> offset;  // per dimension: the box's first index, C over the tile loops' iterators
    std::vector<int64_t> size;        // per dimension
    int64_t elements() const {
      int64_t n = 1;
      for (int64_t x : size) n *= x;
      return n;
    }
    // Rows (the innermost dimension) of an even size are stored one element longer: threads of
    // a warp that read one column of several rows then hit distinct banks (rows 32 floats apart
    // all fall in one bank).
    int64_t row() const {
      if (size.empty()) return 1;
      return size.size() >= 2 && size.back() % 2 == 0 ? size.back() + 1 : size.back();
    }
    int64_t stored_elements() const { return size.empty() ? 1 : elements() / size.back() * row(); }
    // The distance between consecutive indices of dimension k in the stored array.
    int64_t stride(size_t k) const {
      if (k + 1 == size.size()) return 1;
      int64_t n = row();
      for (size_t j = k + 1; j + 1 < size.size(); ++j) n *= size[j];
      return n;
    }
  };

  // The tensor whose model space is named `tuple`, or the number of tensors.
  size_t tensor_of(const std::string& tuple) const {
    const auto& tensors = b_.def().tensors;
    for (size_t t = 0; t < tensors.size(); ++t)
      if (tuple_name(tensors[t].name) == tuple) return t;
    return tensors.size();
  }

  // Whether a statement among `stmts` reads tensor t at a subscript not proven in bounds.
  bool read_unproven(const std::set<size_t>& stmts, size_t t) const {
    for (size_t s : stmts)
      for (const ir::Read& r : b_.def().stmts[s].reads)
        if (static_cast<size_t>(r.tensor) == t)
          for (const ir::Subscript& sub : r.subscripts)
            if (!b_.proven(sub)) return true;
    return false;
  }

  std::vector<SharedArray> promote(isl_ast_build* build) {
    isl_union_map* schedule = isl_ast_build_get_schedule(build);  // instance -> the tile loops' values
    isl_union_set* instances = isl_union_map_domain(isl_union_map_copy(schedule));
    std::set<std::string> written;
    std::set<size_t> stmts;
    isl_union_map* writes = isl_union_map_intersect_domain(isl_union_map_copy(const_cast<isl_union_map*>(m_.writes())),
                                                           isl_union_set_copy(instances));
    isl_union_map_foreach_map(
        writes,
        [](isl_map* map, void* user) {
          static_cast<std::set<std::string>*>(user)->insert(isl_map_get_tuple_name(map, isl_dim_out));
          isl_map_free(map);
          return isl_stat_ok;
        },
        &written);
    isl_union_map_free(writes);
    isl_union_set_foreach_set(
        instances,
        [](isl_set* set, void* user) {
          std::string name = isl_set_get_tuple_name(set);
          if (name[0] == 'S' || name[0] == 'I') static_cast<std::set<size_t>*>(user)->insert(std::stoul(name.substr(1)));
          isl_set_free(set);
          return isl_stat_ok;
        },
        &stmts);
    isl_union_map* reads =
        isl_union_map_intersect_domain(isl_union_map_copy(const_cast<isl_union_map*>(m_.reads())), instances);
    isl_union_map* footprints = isl_union_map_apply_range(isl_union_map_reverse(schedule), isl_union_map_copy(reads));
    std::map<size_t, isl_map*> by_tensor;  // tile loops -> elements read, per tensor (in the def's order)
    struct Collect {
      const Printer* p;
      std::map<size_t, isl_map*>* maps;
    } collect{this, &by_tensor};
    isl_union_map_foreach_map(
        footprints,
        [](isl_map* map, void* user) {
          auto* c = static_cast<Collect*>(user);
          isl_map*& slot = (*c->maps)[c->p->tensor_of(isl_map_get_tuple_name(map, isl_dim_out))];
          isl_map_free(slot);
          slot = map;
          return isl_stat_ok;
        },
        &collect);
    isl_union_map_free(footprints);
    std::vector<SharedArray> arrays;
    int64_t& budget = shared_budget_;
    try {
      for (auto& [t, footprint] : by_tensor) {
        if (t >= b_.def().tensors.size() || written.count(isl_map_get_tuple_name(footprint, isl_dim_out))) continue;
        if (read_unproven(stmts, t)) continue;
        isl_union_map* reads_t = isl_union_map_intersect_range(
            isl_union_map_copy(reads), isl_union_set_from_set(isl_set_universe(isl_space_range(isl_map_get_space(footprint)))));
        isl_bool injective = isl_union_map_is_injective(reads_t);
        isl_union_map_free(reads_t);
        if (injective != isl_bool_false) continue;  // no element read twice: nothing to gain
        std::optional<SharedArray> a = box_of(build, footprint, t);
        if (!a) continue;
        int64_t bytes_needed = a->stored_elements() * static_cast<int64_t>(bytes(b_.def().tensors[t].type));
        if (bytes_needed > budget) continue;
        budget -= bytes_needed;
        a->name = "tc_shared" + std::to_string(shared_arrays_++);
        arrays.push_back(std::move(*a));
      }
    } catch (...) {
      for (auto& entry : by_tensor) isl_map_free(entry.second);
      isl_union_map_free(reads);
      throw;
    }
    for (auto& entry : by_tensor) isl_map_free(entry.second);
    isl_union_map_free(reads);
    return arrays;
  }

  // The fixed-size box around `footprint`'s range (tile loops -> elements of tensor t), with
  // its offset as C at the build's position; nothing if isl finds no fixed size.
  std::optional<SharedArray> box_of(isl_ast_build* build, isl_map* footprint, size_t t) const {
    isl_fixed_box* box = isl_map_get_range_simple_fixed_box_hull(footprint);
    std::optional<SharedArray> a;
    if (box && isl_fixed_box_is_valid(box) == isl_bool_true) {
      a = SharedArray{};
      a->tensor = t;
      isl_multi_val* size = isl_fixed_box_get_size(box);
      isl_multi_aff* offset = isl_fixed_box_get_offset(box);
      isl_size rank = isl_multi_val_size(size);
      for (int d = 0; d < rank && a; ++d) {
        isl_val* v = isl_multi_val_get_at(size, d);
        if (isl_val_is_int(v) && isl_val_is_pos(v)) a->size.push_back(isl_val_get_num_si(v));
        else a.reset();
        isl_val_free(v);
      }
      for (int d = 0; d < rank && a; ++d) {
        isl_pw_aff* first = isl_pw_aff_from_aff(isl_multi_aff_get_at(offset, d));
        isl_ast_expr* e = isl_ast_build_expr_from_pw_aff(build, first);
        if (e) a->offset.push_back(isl_c(e));
        else a.reset();
      }
      isl_multi_val_free(size);
      isl_multi_aff_free(offset);
    }
    isl_fixed_box_free(box);
    return a;
  }

  // A "shared" mark: its arrays copied in, then what it marks, reading them.
  void shared_scope(isl_ast_node* inner, const std::vector<SharedArray>& arrays, std::string& out, int depth) {
    shared_scope(arrays, out, depth, [&](std::string& o, int d) { walk(inner, o, d); });
  }

  void shared_scope(const std::vector<SharedArray>& arrays, std::string& out, int depth,
                    const std::function<void(std::string&, int)>& inner) {
    if (arrays.empty()) return inner(out, depth);
    axes_->synchronises = true;
    int d = depth + 1;
    out += pad(depth) + "{  // reused tiles in shared memory\n";
    out += pad(d) + "const " + idx_ + " tc_tid = threadIdx.x + (" + idx_ + ")blockDim.x * (threadIdx.y + (" + idx_ +
           ")blockDim.y * threadIdx.z);\n";
    out += pad(d) + "const " + idx_ + " tc_threads = (" + idx_ + ")blockDim.x * blockDim.y * blockDim.z;\n";
    out += pad(d) + "__syncthreads();  // every thread is done with the previous tile's copies\n";
    for (const SharedArray& a : arrays) {
      const ir::Tensor& t = b_.def().tensors[a.tensor];
      // Declared once at the kernel's top: a mark printed twice (hoisted()) uses one array.
      shared_declarations_.emplace(a.name, "__shared__ " + storage_type(t.type) + " " + a.name + "[" +
                                               std::to_string(a.stored_elements()) + "];  // " + t.name +
                                               (a.size.size() >= 2 && a.row() != a.size.back() ? " (rows padded)" : ""));
      copy_into_shared(a, out, d);
    }
    out += pad(d) + "__syncthreads();\n";
    active_shared_.push_back(&arrays);
    try {
      inner(out, d);
    } catch (...) {
      active_shared_.pop_back();
      throw;
    }
    active_shared_.pop_back();
    out += pad(depth) + "}\n";
  }

  // The copy of one array's box by all of a block's threads, each element inside the tensor.
  // Where the elements are floats and the box's rows and the tensor's are multiples of 4 long,
  // and at run time the tensor's address is a multiple of 16 bytes and the box's first column of
  // 4, each thread copies 4 consecutive elements of a row with one 128-bit load (a float4: LDG.128
  // on the GPU; the four stores go to a padded row, which is not 16-byte aligned); a row's end
  // outside the tensor element by element. Else element by element.
  void copy_into_shared(const SharedArray& a, std::string& out, int d) {
    const ir::Tensor& t = b_.def().tensors[a.tensor];
    const auto& shape = b_.tensors[a.tensor].shape;
    const int64_t row = a.size.empty() ? 1 : a.size.back();
    const bool vectors = t.type == ScalarType::Float32 && !a.size.empty() && row % 4 == 0 && shape.back() % 4 == 0;
    // The element's coordinates in the tensor (tc_g0, ...), from its index in the box (tc_e);
    // `inside`: every coordinate's bounds but the last one's when `vectors`.
    auto coordinates = [&](int at, bool all, std::vector<std::string>& global, std::string& inside) {
      int64_t stride = a.elements();
      for (size_t k = 0; k < a.size.size(); ++k) {
        stride /= a.size[k];
        std::string g = "tc_g" + std::to_string(k);
        out += pad(at) + "const " + idx_ + " " + g + " = " + offset_name(a, k) + " + (tc_e / " + index_literal(stride) +
               ") % " + index_literal(a.size[k]) + ";\n";
        if (all || k + 1 < a.size.size())
          inside += (inside.empty() ? "" : " && ") + g + " >= 0 && " + g + " < " + index_literal(shape[k]);
        global.push_back(g);
      }
    };
    std::string at = a.row() == row ? "tc_e" : "tc_e / " + index_literal(row) + " * " + index_literal(a.row()) + " + tc_e % " + index_literal(row);
    auto scalar_loop = [&](int at_depth) {
      out += pad(at_depth) + "for (" + idx_ + " tc_e = tc_tid; tc_e < " + index_literal(a.elements()) + "; tc_e += tc_threads) {\n";
      std::vector<std::string> global;
      std::string inside;
      coordinates(at_depth + 1, true, global, inside);
      std::string copy = a.name + "[" + at + "] = " + param(t) + "[" + offset(a.tensor, global) + "];";
      out += pad(at_depth + 1) + (inside.empty() ? copy : "if (" + inside + ") " + copy) + "\n";
      out += pad(at_depth) + "}\n";
    };
    if (!vectors) return scalar_loop(d);
    out += pad(d) + "if ((unsigned long long)" + param(t) + " % 16ull == 0 && " + offset_name(a, a.size.size() - 1) +
           " % 4 == 0) {  // rows of float4\n";
    out += pad(d + 1) + "for (" + idx_ + " tc_q = tc_tid; tc_q < " + index_literal(a.elements() / 4) +
           "; tc_q += tc_threads) {\n";
    int q = d + 2;
    out += pad(q) + "const " + idx_ + " tc_e = 4 * tc_q;\n";
    std::vector<std::string> global;
    std::string inside;
    coordinates(q, false, global, inside);
    std::string last = global.back(), first = offset(a.tensor, global);
    std::string whole = (inside.empty() ? "" : inside + " && ") + last + " >= 0 && " + last + " + 3 < " + index_literal(shape.back());
    out += pad(q) + "if (" + whole + ") {\n";
    out += pad(q + 1) + "const float4 tc_v = *(const float4*)&" + param(t) + "[" + first + "];\n";
    const char* lanes[] = {"x", "y", "z", "w"};
    for (int j = 0; j < 4; ++j)
      out += pad(q + 1) + a.name + "[" + at + (j ? " + " + std::to_string(j) : "") + "] = tc_v." + lanes[j] + ";\n";
    out += pad(q) + "} else {\n";
    out += pad(q + 1) + "for (int tc_j = 0; tc_j < 4; ++tc_j)\n";
    out += pad(q + 2) + "if (" + (inside.empty() ? "" : inside + " && ") + last + " + tc_j >= 0 && " + last + " + tc_j < " +
           index_literal(shape.back()) + ") " + a.name + "[" + at + " + tc_j] = " + param(t) + "[" + first + " + tc_j];\n";
    out += pad(q) + "}\n";
    out += pad(d + 1) + "}\n";
    out += pad(d) + "} else {\n";
    scalar_loop(d + 1);
    out += pad(d) + "}\n";
  }

  // Dimension k of the box's first index.
  static std::string offset_name(const SharedArray& a, size_t k) { return "(" + a.offset[k] + ")"; }

  // The shared array that holds tensor t's reads here, if any.
  const SharedArray* shared_copy(size_t t) const {
    for (auto it = active_shared_.rbegin(); it != active_shared_.rend(); ++it)
      for (const SharedArray& a : **it)
        if (a.tensor == t) return &a;
    return nullptr;
  }

  // Annotates a statement with the value of each mapped member above it, as C over the
  // statement's variables (i0, i1, ...: the names the model gave them).
  static isl_ast_node* at_statement(isl_ast_node* node, isl_ast_build* build, void* user) {
    auto* p = static_cast<Printer*>(user);
    std::vector<std::pair<std::string, std::string>> values;
    isl_set* instances = isl_set_from_union_set(isl_union_map_domain(isl_ast_build_get_schedule(build)));
    isl_space* space = isl_space_add_dims(isl_space_from_domain(isl_set_get_space(instances)), isl_dim_out, 1);
    isl_set_free(instances);
    for (const OpenMark& m : p->open_marks_) {
      isl_pw_aff* value = isl_union_pw_aff_extract_pw_aff(const_cast<isl_union_pw_aff*>(m.values), isl_space_copy(space));
      values.emplace_back(m.mark, value ? c_text(value) : std::string());
    }
    isl_space_free(space);
    std::string id = "mapped" + std::to_string(p->statement_values_.size());
    p->statement_values_.push_back(std::move(values));
    return isl_ast_node_set_annotation(node, isl_id_alloc(isl_ast_node_get_ctx(node), id.c_str(), nullptr));
  }

  // A (quasi-)affine function of one piece as C over its space's variable names (isl's
  // printer; floord as the prelude's); "" for several pieces (a band member's values are one
  // affine function per statement, with floors where tiled).
  static std::string c_text(isl_pw_aff* value) {
    std::string text;
    if (isl_pw_aff_n_piece(value) == 1) {
      isl_aff* piece = nullptr;
      isl_pw_aff_foreach_piece(
          value,
          [](isl_set* set, isl_aff* aff, void* user) {
            isl_set_free(set);
            *static_cast<isl_aff**>(user) = aff;
            return isl_stat_ok;
          },
          &piece);
      isl_printer* printer = isl_printer_to_str(isl_pw_aff_get_ctx(value));
      printer = isl_printer_set_output_format(printer, ISL_FORMAT_C);
      printer = isl_printer_print_aff(printer, piece);
      text = renamed_calls(owned_text(isl_printer_get_str(printer)));
      isl_printer_free(printer);
      isl_aff_free(piece);
    }
    isl_pw_aff_free(value);
    return text;
  }

  // The guard of a statement: the owner of each mapped value that no enclosing marked loop
  // iterates ("" when there is none). Inside the statement's block (its variables defined).
  std::string ownership_guard(const std::string& annotation) const {
    size_t k = std::stoul(annotation.substr(6));
    std::string guard;
    for (const auto& [mark, value] : statement_values_[k]) {
      bool iterated = false;
      for (const std::string& open : owned_) iterated = iterated || open == mark;
      if (iterated) continue;
      if (value.empty()) fail(TC_ERROR_INTERNAL, "the cuda printer could not express the value of mark " + mark);
      Mapping m = mapping_of(mark);
      guard += (guard.empty() ? "" : " && ") + std::string("tc_owner(") + value + ", " + std::to_string(m.stride) +
               ", " + m.count + ") == (long long)" + m.index;
    }
    return guard;
  }

  void kernel(isl_ast_node* node) {
    Launch launch;
    launch.kernel = b_.def().name + "_k" + std::to_string(out_.launches.size());
    axes_ = &launch;
    std::string body;
    shared_declarations_.clear();
    walk(node, body, 1);
    std::string declarations;
    for (const auto& [name, line] : shared_declarations_) declarations += pad(1) + line + "\n";
    body = declarations + body;
    std::string params;
    for (const auto& t : b_.def().tensors)
      params += (params.empty() ? "" : ", ") + storage_type(t.type) + "* __restrict__ " + param(t);
    params += std::string(params.empty() ? "" : ", ") + "unsigned long long* __restrict__ tc_fault";
    kernels_ += "extern \"C\" __global__ void " + launch.kernel + "(" + params + ") {\n" + body + "}\n\n";
    out_.launches.push_back(launch);
  }

  std::string index_literal(int64_t v) const { return std::to_string(v) + index_suffix_; }

  static std::string pad(int depth) { return std::string(2 * static_cast<size_t>(depth), ' '); }

  // A node and its children as C, `depth` levels in.
  void walk(isl_ast_node* node, std::string& out, int depth) {
    switch (isl_ast_node_get_type(node)) {
      case isl_ast_node_for: return loop(node, out, depth, "");
      case isl_ast_node_if: {
        out += pad(depth) + "if (" + isl_c(isl_ast_node_if_get_cond(node)) + ") {\n";
        child(isl_ast_node_if_get_then_node(node), out, depth + 1);
        if (isl_ast_node_if_has_else_node(node) == isl_bool_true) {
          out += pad(depth) + "} else {\n";
          child(isl_ast_node_if_get_else_node(node), out, depth + 1);
        }
        out += pad(depth) + "}\n";
        return;
      }
      case isl_ast_node_block:  // a run of two or more children updating one element: in a register
        return in_runs(node, [&](isl_ast_node_list* children, int from, int to, const Element* e) {
          auto print = [&](std::string& o, int d) {
            for (int i = from; i < to; ++i) child(isl_ast_node_list_get_ast_node(children, i), o, d);
          };
          if (e) in_register(*e, out, depth, print);
          else print(out, depth);
        });
      case isl_ast_node_mark: {
        std::string name = mark_name(node);
        isl_ast_node* inner = isl_ast_node_mark_get_node(node);
        try {
          if (is_mapping(name)) {
            mapped(inner, name, member_of(node), out, depth);
          } else if (name == "lanes") {  // threadIdx.x is the reductions' (cuda.reduction=tree)
            axes_->block_axes = std::max(axes_->block_axes, 1);
            Scoped<int> in_lanes(lanes_, lanes_ + 1);
            walk(inner, out, depth);
          } else if (name == "shared") {
            isl_id* k = isl_ast_node_get_annotation(node);
            size_t index = k ? std::stoul(isl_id_get_name(k) + 6) : promotions_.size();
            isl_id_free(k);
            if (index >= promotions_.size()) fail(TC_ERROR_INTERNAL, "the cuda printer lost a shared memory mark");
            shared_scope(inner, promotions_[index], out, depth);
          } else {
            walk(inner, out, depth);
          }
        } catch (...) {
          isl_ast_node_free(inner);
          throw;
        }
        isl_ast_node_free(inner);
        return;
      }
      case isl_ast_node_user: return statement(node, out, depth);
      default: fail(TC_ERROR_INTERNAL, "the cuda printer met an isl AST node it does not know");
    }
  }

  static std::string mark_name(isl_ast_node* mark) {
    isl_id* id = isl_ast_node_mark_get_id(mark);
    std::string name = isl_id_get_name(id);
    isl_id_free(id);
    return name;
  }

  // What a mapping mark node says: the loop of its member ("c<depth>", from its annotation) and,
  // for a thread mark, its register tile (MemberMark).
  struct MarkedMember {
    std::string loop;
    int64_t copies = 1, tile = 0;
  };
  static MarkedMember member_of(isl_ast_node* mark_node) {
    MarkedMember m;
    isl_id* loop_id = isl_ast_node_get_annotation(mark_node);
    m.loop = loop_id ? isl_id_get_name(loop_id) : "";
    isl_id_free(loop_id);
    isl_id* id = isl_ast_node_mark_get_id(mark_node);
    if (const auto* member = static_cast<const MemberMark*>(isl_id_get_user(id))) {
      m.copies = member->copies;
      m.tile = member->tile;
    }
    isl_id_free(id);
    return m;
  }

  // Walks and frees `node`.
  void child(isl_ast_node* node, std::string& out, int depth) {
    consumed(node, [&] { walk(node, out, depth); });
  }

  // Runs `use` on `node`, then frees it, an exception included.
  static void consumed(isl_ast_node* node, const std::function<void()>& use) {
    try {
      use();
    } catch (...) {
      isl_ast_node_free(node);
      throw;
    }
    isl_ast_node_free(node);
  }

  // What a mark maps to the grid or a block: a loop strides over the values its block or
  // thread owns; anything else is walked as it is (its statements guard themselves).
  // `member_loop`: the iterator of the marked member's loop (c<depth>). Where isl printed no
  // loop of that member (one value), the node under the mark may be a deeper member's loop,
  // which is not the mapped one: walked as it is, its statements guarded by their owner.
  void mapped(isl_ast_node* inner, const std::string& mark, const MarkedMember& member, std::string& out, int depth) {
    bool block = mark[0] == 'b';
    Mapping m = mapping_of(mark);
    size_t axis = static_cast<size_t>(m.index.back() - 'x');
    int& axes = block ? axes_->grid_axes : axes_->block_axes;
    axes = std::max(axes, static_cast<int>(axis) + 1);
    if (isl_ast_node_get_type(inner) != isl_ast_node_for || !iterates(inner, member.loop)) return walk(inner, out, depth);
    if (block) axes_->tiles[axis] = std::max(axes_->tiles[axis], trip_count(inner));
    if (tiles_copies(inner, mark, member)) return register_tile(inner, mark, member, {Copy{}}, out, depth);
    loop(inner, out, depth, mark);
  }


  static bool iterates(isl_ast_node* loop, const std::string& iterator) {
    return isl_c(isl_ast_node_for_get_iterator(loop)) == iterator;
  }

  // The iterations of a loop whose bounds are constants (`for (c = 0; c <= 63; c += 32)`: 2),
  // else 0.
  static int64_t trip_count(isl_ast_node* node) {
    auto value = [](isl_ast_expr* e) -> std::optional<int64_t> {
      std::optional<int64_t> v;
      if (isl_ast_expr_get_type(e) == isl_ast_expr_int) {
        isl_val* x = isl_ast_expr_get_val(e);
        if (isl_val_is_int(x)) v = isl_val_get_num_si(x);
        isl_val_free(x);
      }
      isl_ast_expr_free(e);
      return v;
    };
    std::optional<int64_t> init = value(isl_ast_node_for_get_init(node)), inc = value(isl_ast_node_for_get_inc(node));
    isl_ast_expr* cond = isl_ast_node_for_get_cond(node);
    std::optional<int64_t> last;
    if (isl_ast_expr_get_type(cond) == isl_ast_expr_op) {
      isl_ast_expr_op_type op = isl_ast_expr_op_get_type(cond);
      if (op == isl_ast_expr_op_le || op == isl_ast_expr_op_lt) {
        last = value(isl_ast_expr_op_get_arg(cond, 1));
        if (last && op == isl_ast_expr_op_lt) --*last;
      }
    }
    isl_ast_expr_free(cond);
    if (!init || !inc || !last || *inc <= 0 || *last < *init) return 0;
    return (*last - *init) / *inc + 1;
  }

  // `mark`: the mark of a mapped loop ("block.x:32"), "" for a plain one. A mapped loop whose
  // step is the mark's stride starts at the first value its block or thread owns and steps
  // over the others'; with another step (not made by libtc's tiling) it visits every value and
  // skips those it does not own.
  void loop(isl_ast_node* node, std::string& out, int depth, const std::string& mark) {
    if (mark.empty() && not_hoisting_ == 0) {
      Hoist plan;
      if (plan_hoist(node, plan)) return hoisted(node, plan, out, depth);
    }
    loop_as_is(node, out, depth, mark);
  }

  void loop_as_is(isl_ast_node* node, std::string& out, int depth, const std::string& mark = "") {
    std::string it = isl_c(isl_ast_node_for_get_iterator(node));
    std::string init = isl_c(isl_ast_node_for_get_init(node));
    std::string cond = isl_c(isl_ast_node_for_get_cond(node));
    std::string inc = isl_c(isl_ast_node_for_get_inc(node));
    std::string skip;
    if (!mark.empty()) {
      Mapping m = mapping_of(mark);
      if (inc == std::to_string(m.stride)) {
        init = "(" + init + ") + (" + inc + ") * tc_first(tc_floord(" + init + ", " + inc + "), " + m.index + ", " +
               m.count + ")";
        inc = "(" + inc + ") * (" + idx_ + ")" + m.count;
      } else {
        skip = "tc_owner(" + it + ", " + std::to_string(m.stride) + ", " + m.count + ") != (long long)" + m.index;
      }
      owned_.push_back(mark);
    }
    std::string header = "for (" + idx_ + " " + it + " = " + init + "; " + cond + "; " + it + " += " + inc + ")";
    auto print = [&](std::string& o, int d) {
      o += pad(d) + header + " {\n";
      if (!skip.empty()) o += pad(d + 1) + "if (" + skip + ") continue;\n";
      child(isl_ast_node_for_get_body(node), o, d + 1);
      o += pad(d) + "}\n";
    };
    std::optional<Element> e;
    if (mark.empty() && promotable(node, e)) {
      if (lanes_ > 0) {  // the loop's values split round robin across the threads along x
        header = "for (" + idx_ + " " + it + " = (" + init + ") + (" + inc + ") * (" + idx_ + ")threadIdx.x; " + cond + "; " +
                 it + " += (" + inc + ") * (" + idx_ + ")blockDim.x)";
        across_lanes(*e, out, depth, print);
      } else {
        in_register(*e, out, depth, print);
      }
    } else {
      print(out, depth);
    }
    if (!mark.empty()) owned_.pop_back();
  }

  // ---- statements ----

  // A statement instance as the AST gives it: its name (Z<t>, I<s>, S<s>), its variables' values
  // (C expressions of the loop iterators) and its ownership guard ("" for none).
  struct Call {
    std::string name;
    size_t index = 0;  // t or s
    std::vector<std::string> args;
    std::string guard;
  };

  Call call_of(isl_ast_node* node) const {
    Call c;
    if (isl_id* id = isl_ast_node_get_annotation(node)) {
      c.guard = ownership_guard(isl_id_get_name(id));
      isl_id_free(id);
    }
    isl_ast_expr* call = isl_ast_node_user_get_expr(node);
    isl_ast_expr* callee = isl_ast_expr_get_op_arg(call, 0);
    isl_id* name_id = isl_ast_expr_get_id(callee);
    isl_ast_expr_free(callee);
    c.name = isl_id_get_name(name_id);
    isl_id_free(name_id);
    for (int i = 1; i < isl_ast_expr_get_op_n_arg(call); ++i) c.args.push_back(isl_c(isl_ast_expr_get_op_arg(call, i)));
    isl_ast_expr_free(call);
    c.index = std::stoul(c.name.substr(1));
    return c;
  }

  std::string variable(size_t k, const std::string& value) const {
    return "const " + idx_ + " i" + std::to_string(k) + " = " + value + ";\n";
  }

  // A statement instance: its variables, then (where no marked loop iterates a mapped value)
  // a guard that leaves the block unless this block and thread own it, then its update.
  void statement(isl_ast_node* node, std::string& out, int depth) {
    Call c = call_of(node);
    out += pad(depth) + "{\n";
    if (accumulating_ && c.name[0] == 'S' && c.index == accumulating_->stmt) {  // in_register: into tc_acc
      const ir::Stmt& st = b_.def().stmts[c.index];
      // A copy's statement (per_copy) defines its written variables too: its register's are not in scope.
      for (size_t k = acc_name_ == "tc_acc" ? st.num_lhs : 0; k < c.args.size(); ++k)
        out += pad(depth + 1) + variable(k, c.args[k]);
      out += pad(depth + 1) + acc_name_ + " = " + updated(st, c.index, acc_name_, false, out, depth + 1) + ";\n";
      out += pad(depth) + "}\n";
      return;
    }
    for (size_t k = 0; k < c.args.size(); ++k) out += pad(depth + 1) + variable(k, c.args[k]);
    c.guard = lane_zero(c.guard);
    if (c.guard.empty()) {
      statement_update(c.name, c.index, c.args.size(), out, depth + 1);
    } else {
      out += pad(depth + 1) + "if (" + c.guard + ") {\n";
      statement_update(c.name, c.index, c.args.size(), out, depth + 2);
      out += pad(depth + 1) + "}\n";
    }
    out += pad(depth) + "}\n";
  }

  // Whether C text `text` uses the identifier `name`.
  static bool mentions(const std::string& text, const std::string& name) {
    auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
      if ((at == 0 || !ident(text[at - 1])) && (at + name.size() == text.size() || !ident(text[at + name.size()])))
        return true;
    return false;
  }

  // ---- registers (cuda.private=1) ----
  // A loop, or a run of two or more statements (an unrolled loop's), all of whose statement
  // instances are one reduction updating one element keeps the element in a register: one
  // load before, one store after, instead of a load and a store per update. The element's
  // written subscripts and guard must not use the iterators of loops inside (nor the guard
  // the statement's reduction variables), and its right-hand side must not read the tensor it
  // writes.
  struct Element {
    size_t stmt = 0;
    std::vector<std::string> lhs;  // the written subscripts, C over the enclosing iterators
    std::string guard;
    bool operator==(const Element& o) const { return stmt == o.stmt && lhs == o.lhs && guard == o.guard; }
  };

  // Whether every statement instance under `node` updates one element (`e`: filled from the
  // first, compared with the others); `inner` collects the iterators of the loops passed.
  bool one_element(isl_ast_node* node, std::optional<Element>& e, std::vector<std::string>& inner) const {
    switch (isl_ast_node_get_type(node)) {
      case isl_ast_node_user: {
        Call c = call_of(node);
        if (c.name[0] != 'S') return false;
        const ir::Stmt& st = b_.def().stmts[c.index];
        if (st.scatter || st.reduce == ir::ReduceOp::None) return false;
        for (const ir::Read& r : st.reads)
          if (r.tensor == st.lhs_tensor) return false;
        for (size_t k = st.num_lhs; k < c.args.size(); ++k)
          if (mentions(c.guard, "i" + std::to_string(k))) return false;
        Element mine{c.index, std::vector<std::string>(c.args.begin(), c.args.begin() + static_cast<long>(st.num_lhs)), c.guard};
        if (!e) e = mine;
        return *e == mine;
      }
      case isl_ast_node_for: {
        inner.push_back(isl_c(isl_ast_node_for_get_iterator(node)));
        isl_ast_node* body = isl_ast_node_for_get_body(node);
        bool ok = one_element(body, e, inner);
        isl_ast_node_free(body);
        return ok;
      }
      case isl_ast_node_if: {
        if (isl_ast_node_if_has_else_node(node) != isl_bool_false) return false;
        isl_ast_node* then = isl_ast_node_if_get_then_node(node);
        bool ok = one_element(then, e, inner);
        isl_ast_node_free(then);
        return ok;
      }
      case isl_ast_node_block: {
        isl_ast_node_list* children = isl_ast_node_block_get_children(node);
        bool ok = true;
        for (int i = 0; ok && i < isl_ast_node_list_n_ast_node(children); ++i) {
          isl_ast_node* c = isl_ast_node_list_get_ast_node(children, i);
          ok = one_element(c, e, inner);
          isl_ast_node_free(c);
        }
        isl_ast_node_list_free(children);
        return ok;
      }
      default: return false;  // marks: mapped loops inside
    }
  }

  bool promotable(isl_ast_node* node, std::optional<Element>& e) const {
    if (!private_ || accumulating_) return false;
    std::vector<std::string> inner;
    if (!one_element(node, e, inner) || !e) return false;
    for (const std::string& it : inner) {
      if (mentions(e->guard, it)) return false;
      for (const std::string& sub : e->lhs)
        if (mentions(sub, it)) return false;
    }
    return true;
  }

  // The children of block `node` in order, in runs: two or more consecutive children updating
  // one element (promotable: an unrolled loop's statements) as one run, with that element; any
  // other child alone, with none.
  void in_runs(isl_ast_node* node, const std::function<void(isl_ast_node_list*, int, int, const Element*)>& each) {
    isl_ast_node_list* children = isl_ast_node_block_get_children(node);
    int n = isl_ast_node_list_n_ast_node(children);
    try {
      for (int i = 0; i < n;) {
        std::optional<Element> e;
        int end = i;
        for (; end < n; ++end) {
          isl_ast_node* c = isl_ast_node_list_get_ast_node(children, end);
          std::optional<Element> next = e;
          bool same = promotable(c, next);
          isl_ast_node_free(c);
          if (!same) break;
          e = next;
        }
        if (end - i < 2) end = i + 1;
        each(children, i, end, end - i >= 2 ? &*e : nullptr);
        i = end;
      }
    } catch (...) {
      isl_ast_node_list_free(children);
      throw;
    }
    isl_ast_node_list_free(children);
  }

  // Prints `body` (what updates e's element) with the element in tc_acc.
  void in_register(const Element& e, std::string& out, int depth, const std::function<void(std::string&, int)>& body) {
    const ir::Tensor& t = written_tensor(e);
    std::string element = element_of(e), guard = lane_zero(e.guard);
    int d = open_element(e, "in a register over the loop", guard, out, depth);
    out += pad(d) + c_type(t.type) + " tc_acc = " + load_as(element, t.type) + ";\n";
    accumulate(e, body, out, d);
    out += pad(d) + element + " = " + stored("tc_acc", t.type) + ";\n";
    close_element(guard, out, d, depth);
  }

  const ir::Tensor& written_tensor(const Element& e) const {
    return b_.def().tensors[static_cast<size_t>(b_.def().stmts[e.stmt].lhs_tensor)];
  }

  // e's element, at the variables open_element defines (i0, i1, ...).
  std::string element_of(const Element& e) const {
    const ir::Stmt& st = b_.def().stmts[e.stmt];
    std::vector<std::string> lhs;
    for (size_t k = 0; k < st.num_lhs; ++k) lhs.push_back("i" + std::to_string(k));
    return param(written_tensor(e)) + "[" + offset(static_cast<size_t>(st.lhs_tensor), lhs) + "]";
  }

  // Opens the scope of e's element: its written subscripts as variables, then `guard`. Returns
  // the depth inside.
  int open_element(const Element& e, const std::string& how, const std::string& guard, std::string& out, int depth) {
    int d = depth + 1;
    out += pad(depth) + "{  // " + written_tensor(e).name + "'s element " + how + "\n";
    for (size_t k = 0; k < e.lhs.size(); ++k) out += pad(d) + variable(k, e.lhs[k]);
    if (!guard.empty()) out += pad(d++) + "if (" + guard + ") {\n";
    return d;
  }

  void close_element(const std::string& guard, std::string& out, int d, int depth) {
    if (!guard.empty()) out += pad(--d) + "}\n";
    out += pad(depth) + "}\n";
  }

  // Prints `body` with e's statements accumulating into tc_acc.
  void accumulate(const Element& e, const std::function<void(std::string&, int)>& body, std::string& out, int d) {
    Scoped<const Element*> accumulating(accumulating_, &e);
    body(out, d);
  }

  // ---- register tiles (cuda.regtile) ----
  // A thread mark with copies R > 1 (mapping.h) over a loop with the mark's step: each thread
  // runs R of the values it owns at once, `c = c_t + r * step * blockDim` for r < R, each with
  // a flag saying whether the loop's condition holds for it. What the loop contains is printed
  // once for all of them where it can be (loops and conditions that do not depend on the copies'
  // values, a nested register-tiled thread loop: its copies multiply), else once per copy,
  // with its values bound (`const int c3 = c3_2;`) and under its flag. The values a thread owns
  // are independent of one another (the mark's member is parallel: every dependence inside the
  // kernel has distance 0 along it), so running them interleaved computes what running them in
  // turn does. A reduction loop that cuda.private keeps in a register (in_register) keeps one
  // register per copy (tc_acc_<r>...), loaded before the loop and stored after it: a loop of
  // R·R' fused multiply-adds per iteration whose operands (a row of A, a column of B) each
  // serve R or R' of them. Where every copy is inside (the flags all hold, as in every full
  // tile) the loop runs without the flags.
  struct Copy {
    std::vector<std::pair<std::string, std::string>> values;  // iterator, the copy's value
    std::vector<std::string> flags;                           // each tiled loop's: inside its bounds
    std::string suffix;                                       // "_3_1": the copy's index per tiled loop
    // Where a tiled loop hands out runs (run_of): the copy's place in its run, and a key equal
    // for the copies of one run ("_3_r0": suffix with the run's index in place of the copy's).
    int64_t lane = -1;
    std::string run_key;
    std::string inside() const {
      std::string all;
      for (const std::string& f : flags) all += (all.empty() ? "" : " && ") + f;
      return all;
    }
  };

  // Whether every copy is inside its loops: each loop's flags, once.
  static std::string all_inside(const std::vector<Copy>& copies) {
    std::string all;
    for (const Copy& c : copies)
      for (const std::string& f : c.flags)
        if (!mentions(all, f)) all += (all.empty() ? "" : " && ") + f;
    return all.empty() ? "true" : all;
  }

  bool tiles_copies(isl_ast_node* loop_node, const std::string& mark, const MarkedMember& member) {
    if (member.copies <= 1 || mark[0] != 't' || lanes_ > 0 || accumulating_) return false;
    int64_t run = run_of(loop_node, mark);
    return member.copies % run == 0 &&
           (run > 1 || isl_c(isl_ast_node_for_get_inc(loop_node)) == std::to_string(mapping_of(mark).stride));
  }

  // The values of thread loop `node` (of mark `mark`) a thread owns in a row: the mark's stride
  // over a loop of step 1 (mapping.h, kVectorValues), else 1 (values blockDim apart).
  static int64_t run_of(isl_ast_node* node, const std::string& mark) {
    int64_t stride = mapping_of(mark).stride;
    return stride > 1 && isl_c(isl_ast_node_for_get_inc(node)) == "1" ? stride : 1;
  }

  // A loop's bounds and step as one text (separated: "c5" must not run into the next term).
  static std::string loop_header_text(isl_ast_node* loop) {
    return isl_c(isl_ast_node_for_get_init(loop)) + " ; " + isl_c(isl_ast_node_for_get_cond(loop)) + " ; " +
           isl_c(isl_ast_node_for_get_inc(loop));
  }

  // Whether C text is an integer literal that is a multiple of `n`.
  static bool is_multiple_literal(const std::string& text, int64_t n) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18) return false;
    return std::stoll(text) % n == 0;
  }

  // Whether C text mentions one of the copies' bound iterators.
  static bool depends_on_copies(const std::string& text, const std::vector<Copy>& copies) {
    for (const auto& [it, value] : copies.front().values)
      if (mentions(text, it)) return true;
    return false;
  }

  // Every occurrence of identifier `name` in C text replaced by `by`.
  static std::string replaced(const std::string& text, const std::string& name, const std::string& by) {
    auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    std::string out;
    size_t from = 0;
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
      if ((at > 0 && ident(text[at - 1])) || (at + name.size() < text.size() && ident(text[at + name.size()]))) continue;
      out += text.substr(from, at - from) + by;
      from = at + name.size();
    }
    return out + text.substr(from);
  }

  // The register-tiled thread loop `node` (of mark `mark`) inside `outer` copies.
  void register_tile(isl_ast_node* node, const std::string& mark, const MarkedMember& member,
                     const std::vector<Copy>& outer, std::string& out, int depth) {
    std::string it = isl_c(isl_ast_node_for_get_iterator(node)), cond = isl_c(isl_ast_node_for_get_cond(node));
    std::string base = it + "_t";
    out += pad(depth) + "for (" + idx_ + " " + base + " = " + first_value(node, mark) + "; " + replaced(cond, it, base) + "; " +
           base + " += " + std::to_string(member.copies / run_of(node, mark)) + " * " + thread_step(node, mark) + ") {  // " +
           std::to_string(member.copies) + " values per thread, in registers\n";
    std::vector<Copy> copies = open_copies(node, mark, member, outer, out, depth + 1);
    {
      std::vector<std::string> marks = owned_;
      marks.push_back(mark);
      Scoped<std::vector<std::string>> owned(owned_, marks);
      lockstep_child(isl_ast_node_for_get_body(node), copies, out, depth + 1);
    }
    out += pad(depth) + "}\n";
  }

  // The first value of thread loop `node` (of mark `mark`) that this thread owns, and the step
  // between the values it owns.
  // With runs (run_of > 1): the first value of the first run it owns, which may lie below the
  // loop's first value (open_copies' flags test both bounds).
  std::string first_value(isl_ast_node* node, const std::string& mark) const {
    Mapping m = mapping_of(mark);
    std::string init = isl_c(isl_ast_node_for_get_init(node)), inc = isl_c(isl_ast_node_for_get_inc(node));
    int64_t run = run_of(node, mark);
    if (run > 1) {
      std::string q = "tc_floord(" + init + ", " + std::to_string(run) + ")";
      return std::to_string(run) + " * (" + q + " + tc_first(" + q + ", " + m.index + ", " + m.count + "))";
    }
    return "(" + init + ") + (" + inc + ") * tc_first(tc_floord(" + init + ", " + inc + "), " + m.index + ", " + m.count + ")";
  }
  // The step between a thread's values (with runs: between its runs).
  std::string thread_step(isl_ast_node* node, const std::string& mark) const {
    int64_t run = run_of(node, mark);
    return "(" + (run > 1 ? std::to_string(run) : isl_c(isl_ast_node_for_get_inc(node))) + ") * (" + idx_ + ")" +
           mapping_of(mark).count;
  }

  // The copies of a register-tiled thread loop inside `outer` ones, from its value <it>_t: each
  // copy's value and its flag (the loop's condition there) defined; the launch's threads along
  // the axis recorded.
  std::vector<Copy> open_copies(isl_ast_node* node, const std::string& mark, const MarkedMember& member,
                                const std::vector<Copy>& outer, std::string& out, int depth) {
    size_t axis = static_cast<size_t>(mapping_of(mark).index.back() - 'x');
    axes_->threads[axis] = std::max(axes_->threads[axis], (std::max<int64_t>(member.tile, 1) + member.copies - 1) / member.copies);
    axes_->block_axes = std::max(axes_->block_axes, static_cast<int>(axis) + 1);
    std::string it = isl_c(isl_ast_node_for_get_iterator(node)), cond = isl_c(isl_ast_node_for_get_cond(node));
    std::string init = isl_c(isl_ast_node_for_get_init(node));
    std::string base = it + "_t", step = thread_step(node, mark);
    int64_t run = run_of(node, mark);
    // A run's first value may lie below the loop's first one, unless that starts a run.
    bool below = run > 1 && !is_multiple_literal(init, run);
    std::vector<Copy> copies;
    for (int64_t r = 0; r < member.copies; ++r) {
      std::string value = it + "_" + std::to_string(r), flag = "tc_in_" + value;
      std::string offset = run > 1 ? std::to_string(r / run) + " * " + step + " + " + std::to_string(r % run)
                                   : std::to_string(r) + " * " + step;
      out += pad(depth) + "const " + idx_ + " " + value + " = " + base + " + " + offset + ";\n";
      out += pad(depth) + "const bool " + flag + " = " + replaced(cond, it, value) +
             (below ? " && " + value + " >= (" + init + ")" : "") + ";\n";
      for (const Copy& o : outer) {
        Copy c = o;
        c.values.emplace_back(it, value);
        c.flags.push_back(flag);
        c.suffix += "_" + std::to_string(r);
        c.run_key += "_" + (run > 1 ? "r" + std::to_string(r / run) : std::to_string(r));
        if (run > 1) c.lane = r % run;
        copies.push_back(std::move(c));
      }
    }
    return copies;
  }

  // ---- registers across a loop of tiles (the reduction's tiles: matmul's k tiles) ----
  // A loop L that no thread is mapped to (matmul's loop over k tiles, c2) whose body is, below
  // an optional shared mark, register-tiled thread loops around (an initialisation of the
  // element under a condition on L, then) a loop updating one element per copy, where neither
  // the thread loops' bounds nor the element depend on L: each thread updates the same
  // elements in every iteration of L. Where each thread loop runs once per thread (its copies
  // times the block's threads along its axis cover its tile: the auto block), the registers live
  // across L: loaded before it, stored after it (global memory sees each element once, besides
  // the first read), the initialisation setting the registers. Else (a smaller block) L is
  // printed as it is, loading and storing the registers in each iteration.
  struct HoistLevel {
    isl_ast_node* loop;  // the thread loop (borrowed from Hoist::nodes)
    std::string mark;
    MarkedMember member;
  };
  struct Hoist {
    std::vector<isl_ast_node*> nodes;  // every node taken from isl, freed with the plan
    size_t shared = SIZE_MAX;          // the shared mark's promotions, if there is one
    std::vector<HoistLevel> levels;    // the thread loops, outermost first
    isl_ast_node* init = nullptr;      // the if node of the initialisation, if there is one
    isl_ast_node* region = nullptr;    // the loop updating the elements
    Element e;
    Hoist() = default;
    Hoist(const Hoist&) = delete;
    Hoist& operator=(const Hoist&) = delete;
    ~Hoist() {
      for (isl_ast_node* n : nodes) isl_ast_node_free(n);
    }
    isl_ast_node* keep(isl_ast_node* n) {
      nodes.push_back(n);
      return n;
    }
  };

  // Whether loop L has the shape above; `plan` filled where it does.
  bool plan_hoist(isl_ast_node* loop, Hoist& plan) {
    if (!private_ || accumulating_ || lanes_ > 0) return false;
    std::string it = isl_c(isl_ast_node_for_get_iterator(loop));
    std::vector<std::string> outer_its = {it};
    auto mentions_any = [&](const std::string& text) {
      for (const std::string& o : outer_its)
        if (mentions(text, o)) return true;
      return false;
    };
    isl_ast_node* node = plan.keep(isl_ast_node_for_get_body(loop));
    if (isl_ast_node_get_type(node) == isl_ast_node_mark) {
      std::string name = mark_name(node);
      if (name == "shared") {
        isl_id* k = isl_ast_node_get_annotation(node);
        if (!k) return false;
        plan.shared = std::stoul(isl_id_get_name(k) + 6);
        isl_id_free(k);
        if (plan.shared >= promotions_.size()) return false;
        node = plan.keep(isl_ast_node_mark_get_node(node));
      }
    }
    while (isl_ast_node_get_type(node) == isl_ast_node_mark) {
      std::string name = mark_name(node);
      if (!is_mapping(name) || name[0] != 't') return false;
      MarkedMember member = member_of(node);
      isl_ast_node* inner = plan.keep(isl_ast_node_mark_get_node(node));
      if (isl_ast_node_get_type(inner) != isl_ast_node_for || !iterates(inner, member.loop) ||
          !tiles_copies(inner, name, member))
        return false;
      if (mentions_any(loop_header_text(inner))) return false;
      plan.levels.push_back({inner, name, member});
      outer_its.push_back(isl_c(isl_ast_node_for_get_iterator(inner)));
      node = plan.keep(isl_ast_node_for_get_body(inner));
    }
    if (plan.levels.empty()) return false;
    // The statements' guards as they are printed inside the thread loops (their marks owned).
    Scoped<std::vector<std::string>> owned(owned_, owned_with(plan.levels));
    return plan_hoisted_body(node, plan, outer_its);
  }

  // The marks of the enclosing mapped loops and those of `levels`.
  std::vector<std::string> owned_with(const std::vector<HoistLevel>& levels) const {
    std::vector<std::string> marks = owned_;
    for (const HoistLevel& l : levels) marks.push_back(l.mark);
    return marks;
  }

  bool plan_hoisted_body(isl_ast_node* node, Hoist& plan, std::vector<std::string> outer_its) {
    const std::string it = outer_its.front();
    auto mentions_any = [&](const std::string& text) {
      for (const std::string& o : outer_its)
        if (mentions(text, o)) return true;
      return false;
    };
    if (isl_ast_node_get_type(node) == isl_ast_node_block) {
      isl_ast_node_list* children = isl_ast_node_block_get_children(node);
      int n = isl_ast_node_list_n_ast_node(children);
      if (n == 2) {
        plan.init = plan.keep(isl_ast_node_list_get_ast_node(children, 0));
        plan.region = plan.keep(isl_ast_node_list_get_ast_node(children, 1));
      }
      isl_ast_node_list_free(children);
      if (n != 2) return false;
    } else {
      plan.region = node;
    }
    if (isl_ast_node_get_type(plan.region) != isl_ast_node_for) return false;
    std::optional<Element> e;
    if (!promotable(plan.region, e)) return false;
    plan.e = *e;
    if (mentions(plan.e.guard, it)) return false;
    for (const std::string& sub : plan.e.lhs)
      if (mentions(sub, it)) return false;
    outer_its.erase(outer_its.begin());  // the thread loops' iterators: the region's loop is printed once for all copies
    if (mentions_any(loop_header_text(plan.region))) return false;
    if (plan.init) {  // if (<a condition on L only>) I<s>(the element)
      if (isl_ast_node_get_type(plan.init) != isl_ast_node_if || isl_ast_node_if_has_else_node(plan.init) != isl_bool_false)
        return false;
      if (mentions_any(isl_c(isl_ast_node_if_get_cond(plan.init)))) return false;
      isl_ast_node* then = plan.keep(isl_ast_node_if_get_then_node(plan.init));
      if (isl_ast_node_get_type(then) != isl_ast_node_user) return false;
      Call c = call_of(then);
      if (c.name[0] != 'I' || c.index != plan.e.stmt || c.args != plan.e.lhs || c.guard != plan.e.guard) return false;
    }
    return true;
  }

  // Loop L (plan_hoist's) printed with the registers across it where each thread loop runs
  // once and every copy is inside its loops (a full tile: no flag is tested inside L, which
  // keeps the registers the flags would take), and as it is elsewhere.
  void hoisted(isl_ast_node* loop, const Hoist& plan, std::string& out, int depth) {
    std::string once;
    for (const HoistLevel& l : plan.levels) {
      Mapping m = mapping_of(l.mark);
      once += (once.empty() ? "" : " && ") + std::to_string(l.member.copies) + " * (" + idx_ + ")" + m.count +
              " >= " + index_literal(std::max<int64_t>(l.member.tile, 1));
    }
    const ir::Stmt& st = b_.def().stmts[plan.e.stmt];
    ScalarType type = written_tensor(plan.e).type;
    int d = depth + 1, dd = depth + 2;
    out += pad(depth) + "{  // " + written_tensor(plan.e).name + "'s elements in registers across the loop where each "
           "thread loop runs once and every copy is inside\n";
    // Whether to: in a scope of its own, so that neither branch keeps its values alive (a
    // compiler that reused them in the other branch ran out of registers: 64 bytes spilled).
    auto open_all = [&](std::string& o, int at) {
      std::vector<Copy> copies{Copy{}};
      for (const HoistLevel& l : plan.levels) {
        std::string it = isl_c(isl_ast_node_for_get_iterator(l.loop));
        o += pad(at) + "const " + idx_ + " " + it + "_t = " + first_value(l.loop, l.mark) + ";\n";
        copies = open_copies(l.loop, l.mark, l.member, copies, o, at);
      }
      return copies;
    };
    out += pad(d) + "bool tc_hoist = " + once + ";\n";
    out += pad(d) + "if (tc_hoist) {\n";
    out += pad(d + 1) + "tc_hoist = " + all_inside(open_all(out, d + 1)) + ";\n";
    out += pad(d) + "}\n";
    out += pad(d) + "if (tc_hoist) {\n";
    std::vector<Copy> copies = open_all(out, dd);
    {
      Scoped<std::vector<std::string>> owned(owned_, owned_with(plan.levels));
      Scoped<bool> unguarded(unguarded_copies_, true);
      load_registers(plan.e, copies, out, dd);
      std::string it = isl_c(isl_ast_node_for_get_iterator(loop));
      out += pad(dd) + "for (" + idx_ + " " + it + " = " + isl_c(isl_ast_node_for_get_init(loop)) + "; " +
             isl_c(isl_ast_node_for_get_cond(loop)) + "; " + it + " += " + isl_c(isl_ast_node_for_get_inc(loop)) + ") {\n";
      static const std::vector<SharedArray> kNone;
      shared_scope(plan.shared == SIZE_MAX ? kNone : promotions_[plan.shared], out, dd + 1, [&](std::string& o, int d3) {
        if (plan.init) {
          o += pad(d3) + "if (" + isl_c(isl_ast_node_if_get_cond(plan.init)) + ") {  // the elements' initialisation\n";
          for (const Copy& c : copies) o += pad(d3 + 1) + "tc_acc" + c.suffix + " = " + identity(st.reduce, type) + ";\n";
          o += pad(d3) + "}\n";
        }
        accumulate(plan.e, [&](std::string& o2, int d2) { plain_loop(plan.region, copies, o2, d2); }, o, d3);
      });
      out += pad(dd) + "}\n";
      store_registers(plan.e, copies, out, dd);
    }
    out += pad(d) + "} else {\n";
    {
      Scoped<int> as_is(not_hoisting_, not_hoisting_ + 1);
      loop_as_is(loop, out, dd);
    }
    out += pad(d) + "}\n";
    out += pad(depth) + "}\n";
  }

  // Walks and frees `node` for every copy (lockstep).
  void lockstep_child(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth) {
    consumed(node, [&] { lockstep(node, copies, out, depth); });
  }

  void lockstep(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth) {
    switch (isl_ast_node_get_type(node)) {
      case isl_ast_node_for: {
        std::string header = loop_header_text(node);
        if (depends_on_copies(header, copies)) return per_copy(node, copies, out, depth);
        std::optional<Element> e;
        if (promotable(node, e)) {
          return registers_per_copy(*e, copies, out, depth,
                                    [&](std::string& o, int d) { plain_loop(node, copies, o, d); });
        }
        return plain_loop(node, copies, out, depth);
      }
      case isl_ast_node_if: {
        std::string cond = isl_c(isl_ast_node_if_get_cond(node));
        if (depends_on_copies(cond, copies)) return per_copy(node, copies, out, depth);
        out += pad(depth) + "if (" + cond + ") {\n";
        lockstep_child(isl_ast_node_if_get_then_node(node), copies, out, depth + 1);
        if (isl_ast_node_if_has_else_node(node) == isl_bool_true) {
          out += pad(depth) + "} else {\n";
          lockstep_child(isl_ast_node_if_get_else_node(node), copies, out, depth + 1);
        }
        out += pad(depth) + "}\n";
        return;
      }
      case isl_ast_node_block:  // a run updating one element (an unrolled loop's): a register per copy
        return in_runs(node, [&](isl_ast_node_list* children, int from, int to, const Element* e) {
          auto print = [&](std::string& o, int d) {
            for (int k = from; k < to; ++k) lockstep_child(isl_ast_node_list_get_ast_node(children, k), copies, o, d);
          };
          if (e) registers_per_copy(*e, copies, out, depth, print);
          else print(out, depth);
        });
      case isl_ast_node_mark: {
        std::string name = mark_name(node);
        isl_ast_node* inner = isl_ast_node_mark_get_node(node);
        bool nested = false;
        if (is_mapping(name) && isl_ast_node_get_type(inner) == isl_ast_node_for) {
          MarkedMember member = member_of(node);
          std::string header = loop_header_text(inner);
          if (iterates(inner, member.loop) && tiles_copies(inner, name, member) && !depends_on_copies(header, copies)) {
            nested = true;  // open_copies records the launch's axis
            try {
              register_tile(inner, name, member, copies, out, depth);
            } catch (...) {
              isl_ast_node_free(inner);
              throw;
            }
          }
        }
        isl_ast_node_free(inner);
        if (!nested) per_copy(node, copies, out, depth);
        return;
      }
      default: return per_copy(node, copies, out, depth);
    }
  }

  // A loop whose bounds are the same for every copy: once, its body in lockstep.
  void plain_loop(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth) {
    std::string it = isl_c(isl_ast_node_for_get_iterator(node));
    out += pad(depth) + "for (" + idx_ + " " + it + " = " + isl_c(isl_ast_node_for_get_init(node)) + "; " +
           isl_c(isl_ast_node_for_get_cond(node)) + "; " + it + " += " + isl_c(isl_ast_node_for_get_inc(node)) + ") {\n";
    lockstep_child(isl_ast_node_for_get_body(node), copies, out, depth + 1);
    out += pad(depth) + "}\n";
  }

  // `node` once per copy: the copy's values bound, under its flags (unless unguarded_copies_),
  // updating the copy's register where a reduction is kept in one.
  void per_copy(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth) {
    for (const Copy& c : copies) {
      out += pad(depth) + "{\n";
      for (const auto& [it, value] : c.values) out += pad(depth + 1) + "const " + idx_ + " " + it + " = " + value + ";\n";
      std::string inside = unguarded_copies_ ? "" : c.inside();
      int d = depth + 1;
      if (!inside.empty()) out += pad(d++) + "if (" + inside + ") {\n";
      acc_name_ = accumulating_ ? "tc_acc" + c.suffix : "tc_acc";
      walk(node, out, d);
      acc_name_ = "tc_acc";
      if (!inside.empty()) out += pad(--d) + "}\n";
      out += pad(depth) + "}\n";
    }
  }

  // e's element of every copy in a register (tc_acc<suffix>) while `body` updates it: loaded
  // before (where the copy is inside and owns it), stored after; the body printed twice, for
  // when every copy is inside (no flags) and for when some is not.
  void registers_per_copy(const Element& e, const std::vector<Copy>& copies, std::string& out, int depth,
                          const std::function<void(std::string&, int)>& body) {
    out += pad(depth) + "{  // " + written_tensor(e).name + "'s elements in registers over the loop, one per copy\n";
    load_registers(e, copies, out, depth + 1);
    accumulate_copies(e, copies, out, depth + 1, body);
    store_registers(e, copies, out, depth + 1);
    out += pad(depth) + "}\n";
  }

  // For each copy whose element is inside its loops and owned here (e's guard): `action`, with
  // the copy's values and e's written variables defined.
  void each_element(const Element& e, const std::vector<Copy>& copies, std::string& out, int d,
                    const std::function<std::string(const Copy&)>& action) {
    for (const Copy& c : copies) {
      out += pad(d) + "{\n";
      for (const auto& [it, value] : c.values) out += pad(d + 1) + "const " + idx_ + " " + it + " = " + value + ";\n";
      std::string inside = unguarded_copies_ ? "" : c.inside();
      if (!e.guard.empty()) inside += (inside.empty() ? "" : " && ") + std::string("(") + e.guard + ")";
      for (size_t k = 0; k < e.lhs.size(); ++k) out += pad(d + 1) + variable(k, e.lhs[k]);
      out += pad(d + 1) + (inside.empty() ? "" : "if (" + inside + ") ") + action(c) + "\n";
      out += pad(d) + "}\n";
    }
  }

  // Declares each copy's register (tc_acc<suffix>) and loads its element.
  void load_registers(const Element& e, const std::vector<Copy>& copies, std::string& out, int d) {
    const ir::Tensor& t = written_tensor(e);
    std::string element = element_of(e);
    for (const Copy& c : copies) out += pad(d) + c_type(t.type) + " tc_acc" + c.suffix + " = " + zero_of(t.type) + ";\n";
    std::vector<Copy> single = vector_runs(e, copies, /*load=*/true, out, d);
    each_element(e, single, out, d, [&](const Copy& c) { return "tc_acc" + c.suffix + " = " + load_as(element, t.type) + ";"; });
  }

  void store_registers(const Element& e, const std::vector<Copy>& copies, std::string& out, int d) {
    const ir::Tensor& t = written_tensor(e);
    std::string element = element_of(e);
    std::vector<Copy> single = vector_runs(e, copies, /*load=*/false, out, d);
    each_element(e, single, out, d, [&](const Copy& c) { return element + " = " + stored("tc_acc" + c.suffix, t.type) + ";"; });
  }

  // ---- 128-bit accesses of a register tile's runs (mapping.h, kVectorValues) ----
  // Where every copy is inside (hoisted()'s full tiles), the copies of a float32 element that
  // form runs of 4 along x (Copy::lane) are loaded (`load`) or stored together: each copy's
  // address taken where it is owned here (e's guard; else null), and where the four are
  // adjacent and the first is 16-byte aligned (the layout, the tensor's address and the run's
  // place decide: tested at run time, the compiler folds what it can), one float4 access; else
  // each non-null address alone. Returns the copies left to each_element.
  std::vector<Copy> vector_runs(const Element& e, const std::vector<Copy>& copies, bool load, std::string& out, int d) {
    if (written_tensor(e).type != ScalarType::Float32 || !unguarded_copies_) return copies;
    std::vector<std::string> keys;
    std::map<std::string, std::vector<const Copy*>> runs;
    for (const Copy& c : copies) {
      if (c.lane < 0) continue;
      if (!runs.count(c.run_key)) keys.push_back(c.run_key);
      runs[c.run_key].push_back(&c);
    }
    std::vector<Copy> single;
    for (const Copy& c : copies)
      if (c.lane < 0 || runs[c.run_key].size() != static_cast<size_t>(kVectorValues)) single.push_back(c);
    std::string element = element_of(e);
    for (const std::string& key : keys) {
      const std::vector<const Copy*>& run = runs[key];
      if (run.size() != static_cast<size_t>(kVectorValues)) continue;
      auto at = [](size_t k) { return "tc_ptr" + std::to_string(k); };
      auto acc = [&](size_t k) { return "tc_acc" + run[k]->suffix; };
      out += pad(d) + "{  // a run of 4 adjacent elements: one 128-bit access where the address allows\n";
      std::string adjacent = at(0), vector = load ? "const float4 tc_v = *(const float4*)tc_ptr0;" : "float4 tc_v;", one;
      for (size_t k = 0; k < run.size(); ++k) {
        out += pad(d + 1) + "float* " + at(k) + " = nullptr;\n";
        if (k > 0) adjacent += " && " + at(k) + " == tc_ptr0 + " + std::to_string(k);
        std::string lane = std::string("tc_v.") + "xyzw"[k];
        vector += " " + (load ? acc(k) + " = " + lane : lane + " = " + acc(k)) + ";";
        one += pad(d + 2) + "if (" + at(k) + ") " + (load ? acc(k) + " = *" + at(k) : "*" + at(k) + " = " + acc(k)) + ";\n";
      }
      if (!load) vector += " *(float4*)tc_ptr0 = tc_v;";
      for (size_t k = 0; k < run.size(); ++k)
        each_element(e, {*run[k]}, out, d + 1, [&](const Copy&) { return at(k) + " = &" + element + ";"; });
      out += pad(d + 1) + "if (" + adjacent + " && (unsigned long long)tc_ptr0 % 16ull == 0) {\n";
      out += pad(d + 2) + vector + "\n";
      out += pad(d + 1) + "} else {\n" + one;
      out += pad(d + 1) + "}\n";
      out += pad(d) + "}\n";
    }
    return single;
  }

  // `body` with e's statements updating the copies' registers: printed twice, for when every copy
  // is inside (no flags) and for when some is not; once, with the flags, in hoisted()'s other
  // branch (edge tiles: its full tiles took the first branch), which keeps the kernel's
  // registers within what ptxas allocates without spilling.
  void accumulate_copies(const Element& e, const std::vector<Copy>& copies, std::string& out, int d,
                         const std::function<void(std::string&, int)>& body) {
    if (not_hoisting_ > 0) return accumulate(e, body, out, d);  // hoisted()'s other branch: full tiles took the first
    out += pad(d) + "if (" + all_inside(copies) + ") {  // every copy inside\n";
    {
      Scoped<bool> unguarded(unguarded_copies_, true);
      accumulate(e, body, out, d + 1);
    }
    out += pad(d) + "} else {\n";
    accumulate(e, body, out, d + 1);
    out += pad(d) + "}\n";
  }

  // ---- reductions across the threads along x (cuda.reduction=tree|atomic) ----
  // Under a "lanes" mark threadIdx.x is no loop's: a reduction loop that in_register would
  // keep in one thread's register is split round robin across the threads along x (blockDim.x
  // is a multiple of 32, so a warp's lanes share threadIdx.y and z, and so do all the threads
  // of a group, those along x: every loop and guard outside the split loop is the same for a
  // group). Each thread reduces its share into tc_acc from the identity; then (tree) each
  // warp's lanes combine theirs in a tree of shuffles (16, 8, 4, 2, 1 apart); where a group
  // has several warps, lane 0 of each writes its warp's total to shared memory (the prelude's
  // tc_warp_totals) and, after the group's barrier, the group's first warp combines them in a
  // second tree; thread 0 combines the total into the element. Or (atomic) each thread
  // combines its own into the element atomically. Every other statement there runs on thread
  // 0 only (lane_zero); a group barrier (tc_group_sync) before each split loop makes what
  // thread 0 wrote before visible to the group, and keeps a warp from overwriting the shared
  // totals the first warp is still reading.
  std::string lane_zero(const std::string& guard) const {
    if (lanes_ == 0 || accumulating_) return guard;
    return guard.empty() ? "threadIdx.x == 0" : "threadIdx.x == 0 && " + guard;
  }

  void across_lanes(const Element& e, std::string& out, int depth, const std::function<void(std::string&, int)>& body) {
    const ir::Stmt& st = b_.def().stmts[e.stmt];
    const ir::Tensor& t = written_tensor(e);
    std::string element = element_of(e), type = c_type(t.type), identity_value = identity(st.reduce, t.type);
    axes_->synchronises = true;
    int d = open_element(e, std::string("reduced across the threads along x over the loop (") +
                                (atomic_lanes_ ? "atomics" : "a tree of shuffles, then of the warps' totals") + ")",
                         e.guard, out, depth);
    out += pad(d) + "tc_group_sync();  // thread 0's earlier writes, seen by every thread along x\n";
    out += pad(d) + type + " tc_acc = " + identity_value + ";\n";
    accumulate(e, body, out, d);
    if (atomic_lanes_) {
      out += pad(d) + "tc_atomic_update(&" + element + ", [&](" + storage_type(t.type) + " tc_old) { return (" +
             storage_type(t.type) + ")" + stored(rounded(combined(st.reduce, load_as("tc_old", t.type), "tc_acc"), t.type), t.type) +
             "; });\n";
      out += pad(d) + "tc_group_sync();  // every thread's update, seen by thread 0's later statements\n";
    } else {
      std::string member = "." + total_member(t.type), w = std::to_string(kWarpSize);
      warp_totals_ = true;
      warp_tree(st.reduce, t.type, out, d);
      out += pad(d) + "if (blockDim.x > " + w + ") {  // several warps: their totals through shared memory\n";
      out += pad(d + 1) + "if (threadIdx.x % " + w + " == 0) tc_warp_totals[tc_warp_index()]" + member + " = tc_acc;\n";
      out += pad(d + 1) + "tc_group_sync();\n";
      out += pad(d + 1) + "if (threadIdx.x < " + w + ") {  // the group's first warp\n";
      out += pad(d + 2) + "tc_acc = threadIdx.x < blockDim.x / " + w + " ? tc_warp_totals[tc_warp_index() + threadIdx.x]" +
             member + " : " + identity_value + ";\n";
      warp_tree(st.reduce, t.type, out, d + 2);
      out += pad(d + 1) + "}\n";
      out += pad(d) + "}\n";
      out += pad(d) + "if (threadIdx.x == 0) " + element + " = " +
             stored(rounded(combined(st.reduce, load_as(element, t.type), "tc_acc"), t.type), t.type) + ";\n";
    }
    close_element(e.guard, out, d, depth);
  }

  // The member of tc_total (the prelude) that holds a reduction of type t.
  static std::string total_member(ScalarType t) {
    switch (t) {
      case ScalarType::Bool: return "b";
      case ScalarType::UInt8: return "u8";
      case ScalarType::UInt16: return "u16";
      case ScalarType::UInt32: return "u32";
      case ScalarType::UInt64: return "u64";
      case ScalarType::Int8: return "s8";
      case ScalarType::Int16: return "s16";
      case ScalarType::Int32: return "s32";
      case ScalarType::Int64: return "s64";
      case ScalarType::Float32: case ScalarType::Float16: case ScalarType::BFloat16:
        return "f32";  // float16 and bfloat16 are computed as float
      case ScalarType::Float64: return "f64";
    }
    return "u64";
  }

  // A warp's lanes combine their tc_acc; lane 0 gets the total.
  void warp_tree(ir::ReduceOp op, ScalarType type, std::string& out, int d) const {
    out += pad(d) + "for (int tc_off = " + std::to_string(kWarpSize / 2) + "; tc_off > 0; tc_off /= 2)\n";
    out += pad(d + 1) + "tc_acc = " + rounded(combined(op, "tc_acc", "tc_shfl_down(tc_acc, tc_off)"), type) + ";\n";
  }

  // `acc` combined with `value` by a reduction.
  static std::string combined(ir::ReduceOp op, const std::string& acc, const std::string& value) {
    switch (op) {
      case ir::ReduceOp::Sum: return "tc_add(" + acc + ", " + value + ")";
      case ir::ReduceOp::Product: return "tc_mul(" + acc + ", " + value + ")";
      case ir::ReduceOp::Min: return "tc_min(" + acc + ", " + value + ")";
      case ir::ReduceOp::Max: return "tc_max(" + acc + ", " + value + ")";
      case ir::ReduceOp::None: break;
    }
    return value;
  }

  // The update of statement instance `name` (Z<t>, I<s>, S<s>) whose `rank` variables i0, ...
  // are defined, as lines `depth` levels in.
  void statement_update(const std::string& name, size_t s, size_t rank, std::string& out, int depth) {
    if (name[0] == 'Z') {  // an output's unwritten elements: 0
      const ir::Tensor& t = b_.def().tensors[s];
      std::vector<std::string> at;
      for (size_t k = 0; k < rank; ++k) at.push_back("i" + std::to_string(k));
      out += pad(depth) + param(t) + "[" + offset(s, at) + "] = " + stored(zero_of(t.type), t.type) + ";\n";
      return;
    }
    const ir::Stmt& st = b_.def().stmts[s];
    const ir::Tensor& t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)];
    if (st.scatter && name[0] == 'S') return scatter(st, s, out, depth);
    std::vector<std::string> lhs;  // I<s>: its arguments are the written element (a scatter's: any)
    for (size_t k = 0; k < (name[0] == 'I' ? rank : st.num_lhs); ++k) lhs.push_back("i" + std::to_string(k));
    std::string element = param(t) + "[" + offset(static_cast<size_t>(st.lhs_tensor), lhs) + "]";
    std::string value;
    ScalarType tt = t.type;
    if (name[0] == 'I') {
      value = identity(st.reduce, tt);
    } else if (st.reduce == ir::ReduceOp::None) {
      value = begin_statement(st, s, false, out, depth);
    } else {
      value = updated(st, s, load_as(element, tt), false, out, depth);
    }
    out += pad(depth) + element + " = " + stored(value, tt) + ";\n";
  }

  // Whether statement st's update is acc = fma(a, b, acc): a float32/float64 += reduction whose
  // right-hand side is one product of its type (cuda.fma).
  bool fused(const ir::Stmt& st) const {
    ScalarType t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)].type;
    const ir::Node& e = *st.rhs;
    return fma_ && st.reduce == ir::ReduceOp::Sum && (t == ScalarType::Float32 || t == ScalarType::Float64) &&
           e.op == ir::ExprOp::Binary && e.binop == ir::BinOp::Mul && e.type == t && e.operand_type == t;
  }

  // Reduction statement s's new value of `acc` (its element, or a register holding it), after
  // what begin_statement prints.
  std::string updated(const ir::Stmt& st, size_t s, const std::string& acc, bool checks_write, std::string& out, int depth) {
    ScalarType t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)].type;
    if (!fused(st)) return rounded(combined(st.reduce, acc, begin_statement(st, s, checks_write, out, depth)), t);
    begin_statement_variables(st, s, checks_write, out, depth);
    const ir::Node& e = *st.rhs;
    std::string a = convert(expr(*e.args[0]), e.args[0]->type, t), b = convert(expr(*e.args[1]), e.args[1]->type, t);
    return std::string(t == ScalarType::Float32 ? "fmaf(" : "fma(") + a + ", " + b + ", " + acc + ")";
  }

  // Statement s's right-hand side as a value of its tensor's type, after (where something is
  // checked: its reads, or `checks_write`) the statement's variables as an array for the fault
  // record, printed `depth` levels in.
  std::string begin_statement(const ir::Stmt& st, size_t s, bool checks_write, std::string& out, int depth) {
    begin_statement_variables(st, s, checks_write, out, depth);
    return convert(expr(*st.rhs), st.rhs->type, b_.def().tensors[static_cast<size_t>(st.lhs_tensor)].type);
  }

  void begin_statement_variables(const ir::Stmt& st, size_t s, bool checks_write, std::string& out, int depth) {
    stmt_ = &st;
    stmt_index_ = s;
    if (checked_ && (checks_write || b_.has_unproven_read(st))) {
      std::string at;
      for (size_t k = 0; k < st.vars.size(); ++k) at += (k ? ", " : "") + std::string("i") + std::to_string(k);
      out += pad(depth) + "const long long tc_at[] = {" + (at.empty() ? "0" : at) + "};\n";
    }
  }

  // A scatter's update: the written subscripts, each not proven in bounds checked (checked=1:
  // the first bad one recorded) and the update skipped where one is outside; then the value
  // added atomically.
  void scatter(const ir::Stmt& st, size_t s, std::string& out, int depth) {
    size_t tensor = static_cast<size_t>(st.lhs_tensor);
    const ir::Tensor& t = b_.def().tensors[tensor];
    const auto& shape = b_.tensors[tensor].shape;
    bool checks_write = false;
    for (const ir::Subscript& sub : st.write.subscripts) checks_write = checks_write || !b_.proven(sub);
    std::string value = begin_statement(st, s, checks_write, out, depth);
    std::vector<std::string> written;
    out += pad(depth) + "bool tc_inside = true;\n";
    for (size_t d = 0; d < st.write.subscripts.size(); ++d) {
      const ir::Subscript& sub = st.write.subscripts[d];
      std::string w = "w" + std::to_string(d);
      written.push_back(w);
      out += pad(depth) + "const long long " + w + " = (long long)" + expr(*sub.index) + ";\n";
      if (b_.proven(sub)) continue;
      out += pad(depth) + "if (tc_inside && !(" + w + " >= 0 && " + w + " < " + std::to_string(shape[d]) + "ll)) {\n" +
             pad(depth + 1) + "tc_inside = false;\n";
      if (checked_) {
        out += pad(depth + 1) + "tc_record(tc_fault, " + std::to_string(out_.checks.size()) + "ull, " + w + ", tc_at, " +
               std::to_string(st.vars.size()) + ");\n";
        out_.checks.push_back({s, 0, d, true});
      }
      out += pad(depth) + "}\n";
    }
    std::string element = "&" + param(t) + "[" + offset(tensor, written) + "]";
    std::string update;
    if (t.type == ScalarType::Bool) update = "tc_atomic_or(" + element + ", (bool)(" + value + "))";
    else if (t.type == ScalarType::Float16) update = "tc_atomic_add_half(" + element + ", (float)(" + value + "))";
    else if (t.type == ScalarType::BFloat16) update = "tc_atomic_add_bf16(" + element + ", (float)(" + value + "))";
    else update = "tc_atomic_add(" + element + ", (" + c_type(t.type) + ")(" + value + "))";
    out += pad(depth) + "if (tc_inside) " + update + ";\n";
  }

  // `value` (of type t) as t is stored: bool as one byte, float16 and bfloat16 as their bits.
  static std::string stored(const std::string& value, ScalarType t) {
    if (t == ScalarType::Bool) return "(unsigned char)(" + value + ")";
    if (t == ScalarType::BFloat16) return "tc_f2b(" + value + ")";
    return t == ScalarType::Float16 ? "tc_f2h(" + value + ")" : value;
  }

  static std::string zero_of(ScalarType t) { return is_float(t) ? float_literal(0, t) : int_literal(0, t); }

  static std::string load_as(const std::string& element, ScalarType t) {
    if (t == ScalarType::Float16) return "tc_h2f(" + element + ")";
    if (t == ScalarType::BFloat16) return "tc_b2f(" + element + ")";
    return t == ScalarType::Bool ? "(" + element + " != 0)" : element;
  }

  std::string identity(ir::ReduceOp op, ScalarType t) const {
    bool f = is_float(t);
    switch (op) {
      case ir::ReduceOp::Sum: return zero_of(t);
      case ir::ReduceOp::Product: return f ? float_literal(1, t) : int_literal(1, t);
      case ir::ReduceOp::Min:
        if (f) return float_literal(INFINITY, t);
        if (t == ScalarType::Bool) return "true";
        return kind(t) == ScalarKind::Unsigned ? "((" + c_type(t) + ")~0ull)"
                                               : int_literal(static_cast<int64_t>((uint64_t{1} << (bits(t) - 1)) - 1), t);
      case ir::ReduceOp::Max:
        if (f) return float_literal(-INFINITY, t);
        if (kind(t) == ScalarKind::Unsigned || t == ScalarType::Bool) return int_literal(0, t);
        return int_literal(static_cast<int64_t>(uint64_t{1} << (bits(t) - 1)), t);
      case ir::ReduceOp::None: break;
    }
    return int_literal(0, t);
  }

  // The element offset of tensor t at these subscripts (index expressions), row-major.
  std::string offset(size_t t, const std::vector<std::string>& subs) const {
    const auto& shape = b_.tensors[t].shape;
    if (subs.empty()) return "0";
    std::string out;
    int64_t stride = 1;
    for (size_t d = subs.size(); d-- > 0;) {
      std::string term = stride == 1 ? "(" + subs[d] + ")" : "(" + subs[d] + ") * " + index_literal(stride);
      out = out.empty() ? term : term + " + " + out;
      stride *= shape[d];
    }
    return out;
  }

  std::string expr(const ir::Node& e) {
    auto arg = [&](size_t i, ScalarType to) { return convert(expr(*e.args[i]), e.args[i]->type, to); };
    switch (e.op) {
      case ir::ExprOp::Const:
        if (e.is_float && !is_float(e.type))  // a float literal settled into an integer or bool type: converted as a cast
          return convert(float_literal(e.float_value, ScalarType::Float64), ScalarType::Float64, e.type);
        // An integer literal settled into a float type: converted as a cast too (to float16: to
        // float, then to half — 2147483647 is inf there; printed as a float it was finite:
        // differential fuzzer, seed 111071554, program 132).
        if (!e.is_float && is_float(e.type))
          return convert(int_literal(e.int_value, ScalarType::Int64), ScalarType::Int64, e.type);
        return e.is_float ? float_literal(e.float_value, e.type) : int_literal(e.int_value, e.type);
      case ir::ExprOp::Var: return "((int)i" + std::to_string(e.index) + ")";
      case ir::ExprOp::Size: return int_literal(b_.size_values[static_cast<size_t>(e.index)], e.type);
      case ir::ExprOp::Dim: return int_literal(b_.tensors[static_cast<size_t>(e.index)].shape[static_cast<size_t>(e.dim)], e.type);
      case ir::ExprOp::Load: return load(e);
      case ir::ExprOp::Neg: return "tc_neg(" + arg(0, e.type) + ")";
      case ir::ExprOp::Not: return "(!" + arg(0, ScalarType::Bool) + ")";
      case ir::ExprOp::And: return "(" + arg(0, ScalarType::Bool) + " && " + arg(1, ScalarType::Bool) + ")";
      case ir::ExprOp::Or: return "(" + arg(0, ScalarType::Bool) + " || " + arg(1, ScalarType::Bool) + ")";
      case ir::ExprOp::Select:
        return "(" + arg(0, ScalarType::Bool) + " ? " + arg(1, e.type) + " : " + arg(2, e.type) + ")";
      case ir::ExprOp::Cast: return arg(0, e.type);
      case ir::ExprOp::Binary: {
        std::string a = arg(0, e.operand_type), b = arg(1, e.operand_type);
        if (is_comparison(e.binop)) return "(" + a + " " + spelling(e.binop) + " " + b + ")";
        const char* f = e.binop == ir::BinOp::Add ? "tc_add" : e.binop == ir::BinOp::Sub ? "tc_sub"
                      : e.binop == ir::BinOp::Mul ? "tc_mul" : e.binop == ir::BinOp::Div ? "tc_div" : "tc_mod";
        return convert(rounded(std::string(f) + "(" + a + ", " + b + ")", e.operand_type), e.operand_type, e.type);
      }
      case ir::ExprOp::Builtin: return builtin(e);
    }
    return "0";
  }

  std::string builtin(const ir::Node& e) {
    using B = lang::BuiltinId;
    std::string args;
    for (size_t i = 0; i < e.args.size(); ++i)
      args += (i ? ", " : "") + convert(expr(*e.args[i]), e.args[i]->type, e.type);
    switch (e.builtin) {
      case B::Min: return "tc_min(" + args + ")";
      case B::Max: return "tc_max(" + args + ")";
      case B::Abs: return "tc_abs(" + args + ")";
      case B::Rsqrt: return rounded("tc_rsqrt(" + args + ")", e.type);
      case B::Copysign: return rounded("tc_copysign(" + args + ")", e.type);
      case B::Exp:
        if (e.type != ScalarType::Float64) return rounded("tc_expf(" + args + ")", e.type);
        break;
      default: break;
    }
    std::string name = e.builtin == B::Round ? "nearbyint" : lang::builtin(e.builtin).name;
    bool single = e.type == ScalarType::Float32 || is_float16_like(e.type);
    return rounded(name + (single ? "f" : "") + "(" + args + ")", e.type);
  }

  std::string load(const ir::Node& e) {
    const ir::Read& r = stmt_->reads[static_cast<size_t>(e.index)];
    const auto& shape = b_.tensors[static_cast<size_t>(r.tensor)].shape;
    const ir::Tensor& t = b_.def().tensors[static_cast<size_t>(r.tensor)];
    bool empty = false;  // an empty tensor: nothing to load; checked subscripts still report
    for (int64_t extent : shape) empty = empty || extent == 0;
    std::vector<std::string> subs;
    for (size_t d = 0; d < e.args.size(); ++d) {
      // Unproven subscripts are checked or clamped in 64 bits (an int64 gather's index may not fit
      // 32), their results (inside the tensor) and proven ones are index-typed.
      std::string s = (b_.proven(r.subscripts[d]) ? "(" + idx_ + ")" : std::string("(long long)")) + expr(*e.args[d]);
      std::string extent = std::to_string(shape[d]) + "ll";
      if (!b_.proven(r.subscripts[d])) {  // checked and clamped, or clamped
        if (checked_) {
          s = "(" + idx_ + ")tc_checked(" + s + ", " + extent + ", tc_fault, " + std::to_string(out_.checks.size()) +
              "ull, tc_at, " + std::to_string(stmt_->vars.size()) + ")";
          out_.checks.push_back({stmt_index_, static_cast<size_t>(e.index), d, false});
        } else {
          s = "(" + idx_ + ")tc_clamp(" + s + ", " + extent + ")";
        }
      }
      subs.push_back(s);
    }
    if (empty) {  // the checks for their record (every index of an empty dimension is out of bounds), then 0
      std::string checks;
      for (size_t d = 0; d < subs.size(); ++d)
        if (!b_.proven(r.subscripts[d]) && checked_) checks += "(void)" + subs[d] + ", ";
      return checks.empty() ? zero_of(t.type) : "(" + checks + zero_of(t.type) + ")";
    }
    if (const SharedArray* a = shared_copy(static_cast<size_t>(r.tensor))) {  // its proven subscripts, in the box
      std::string at;
      for (size_t k = 0; k < subs.size(); ++k) {
        int64_t stride = a->stride(k);
        std::string term = "(" + subs[k] + " - " + offset_name(*a, k) + ")";
        at += (at.empty() ? "" : " + ") + (stride == 1 ? term : term + " * " + index_literal(stride));
      }
      return load_as(a->name + "[" + (at.empty() ? "0" : at) + "]", t.type);
    }
    return load_as(param(t) + "[" + offset(static_cast<size_t>(r.tensor), subs) + "]", t.type);
  }

  const ir::BoundDef& b_;
  const PolyModel& m_;
  bool checked_;
  bool private_;  // register promotion of accumulators (cuda.private)
  bool atomic_lanes_;  // reductions across lanes combined with atomics (cuda.reduction=atomic), else shuffles
  bool fma_;                  // cuda.fma
  std::string acc_name_ = "tc_acc";  // the accumulator statements update (a register tile's copy: tc_acc_<r>...)
  bool unguarded_copies_ = false;
  int not_hoisting_ = 0;             // printing a loop as it is, in hoisted()'s other branch    // copies printed without their in-bounds flags (all are inside)
  int tiles_printed_ = 0;            // register tiles so far: unique names for their flags
  std::string idx_;           // the C type of iterators, variables and offsets: "int" or "long long"
  std::string index_suffix_;  // of their integer literals: "" or "ll"
  std::vector<OpenMark> open_marks_;  // while isl builds the AST
  std::vector<std::string> member_loops_;  // while isl builds the AST: the open mapping marks' loop iterators
  std::vector<std::vector<std::pair<std::string, std::string>>> statement_values_;  // per annotation: (mark, value)
  std::vector<std::string> owned_;  // while printing: the marks of the enclosing mapped loops
  std::vector<std::vector<SharedArray>> promotions_;  // per shared mark (its annotation "shared<k>")
  std::vector<size_t> open_shared_;                   // while isl builds the AST
  std::vector<const std::vector<SharedArray>*> active_shared_;  // while printing
  size_t shared_arrays_ = 0;
  std::map<std::string, std::string> shared_declarations_;  // while printing a kernel: its shared arrays
  int64_t shared_budget_ = 0;  // while isl builds the AST: the bytes the current kernel's shared marks have left
  std::exception_ptr callback_error_;  // thrown in a callback from isl, rethrown after it returns
  const Element* accumulating_ = nullptr;  // while printing in_register's or across_lanes' body
  int lanes_ = 0;                          // inside a "lanes" mark
  bool warp_totals_ = false;               // a tree across threads printed: the text needs kWarpTotals
  const ir::Stmt* stmt_ = nullptr;
  size_t stmt_index_ = 0;
  Launch* axes_ = nullptr;
  std::string kernels_;
  CudaSource out_;
};

}  // namespace

const std::string& cuda_prelude() {
  static const std::string prelude = std::string(kPrelude) + exp_f32_text() + "\n";
  return prelude;
}

LaunchDims launch_dims(const Launch& launch, const std::vector<int64_t>& grid, const std::vector<int64_t>& block) {
  LaunchDims d;
  for (size_t a = 0; a < static_cast<size_t>(launch.grid_axes); ++a) {
    int64_t limit = a == 0 ? 2147483647 : 65535;
    int64_t n = a < grid.size() ? grid[a] : grid.empty() ? launch.tiles[a] : 1;
    d.grid[a] = static_cast<unsigned>(std::clamp<int64_t>(n, 1, limit));
  }
  bool tiled = launch.threads[0] > 0 || launch.threads[1] > 0 || launch.threads[2] > 0;
  for (size_t a = 0; a < static_cast<size_t>(launch.block_axes); ++a) {
    int64_t n = !block.empty() ? (a < block.size() ? block[a] : 1) : tiled ? launch.threads[a] : kDefaultBlock[a];
    d.block[a] = static_cast<unsigned>(std::max<int64_t>(n, 1));
  }
  return d;
}

bool index32_fits(const ir::BoundDef& bound, const std::vector<int64_t>& grid, int64_t max_tile) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  int64_t largest = 0;
  for (const auto& t : bound.tensors) {
    int64_t n = 1;
    for (int64_t extent : t.shape) n = extent > 0 && n > kLimit / extent ? kLimit + 1 : n * extent;
    largest = std::max(largest, n);
  }
  for (const auto& stmt : bound.ranges)
    for (const auto& [lo, hi] : stmt) largest = std::max({largest, lo < 0 ? -lo : lo, hi < 0 ? -hi : hi});
  // A mapped loop steps by its tile times the grid: with one block per tile it ends within a
  // tile past twice its extent; with an explicit grid, within that many tiles past its extent.
  int64_t past = 2 * std::max<int64_t>(max_tile, 1);
  for (int64_t n : grid) past = std::max(past, n > kLimit / std::max<int64_t>(max_tile, 1) ? kLimit : n * max_tile);
  return largest <= kLimit / 2 && past < kLimit;
}

CudaSource print_cuda(const ir::BoundDef& bound, const PolyModel& model, const isl_schedule* mapped,
                      const PrintOptions& options) {
  return Printer(bound, model, options).run(mapped);
}

}  // namespace tc::backends::cuda
