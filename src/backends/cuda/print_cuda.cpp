// print_cuda.cpp — see print_cuda.h. Walks isl's AST of the mapped schedule; loop bounds and
// statement arguments are isl's expressions in C, statement bodies the IR printed with the
// prelude's helpers.
#include "backends/cuda/print_cuda.h"

#include <cmath>
#include <cstdio>
#include <string>

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/id.h>
#include <isl/schedule.h>

#include "backends/cuda/isl_util.h"
#include "support/error.h"

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
TC_DEVICE float tc_rsqrt(float a) { return 1.0f / sqrtf(a); }
TC_DEVICE double tc_rsqrt(double a) { return 1.0 / sqrt(a); }
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
    case ScalarType::Float16: break;
  }
  fail(TC_ERROR_UNSUPPORTED, "the cuda backend does not print float16 yet");
}

// Tensors are stored as their C type, bool as one byte.
std::string storage_type(ScalarType t) { return t == ScalarType::Bool ? "unsigned char" : c_type(t); }

std::string param(const ir::Tensor& t) { return "p_" + t.name; }

// `x` (of type `from`) as a value of type `to`, with TC's conversions.
std::string convert(const std::string& x, ScalarType from, ScalarType to) {
  if (from == to) return x;
  if (to == ScalarType::Bool) return "((" + x + ") != 0)";
  std::string T = c_type(to);
  if (is_float(from) && is_integer(to)) {
    const char* f = kind(to) == ScalarKind::Signed ? "tc_f2s" : "tc_f2u";
    return "((" + T + ")" + f + "((double)(" + x + "), " + std::to_string(bits(to)) + "))";
  }
  return "((" + T + ")(" + x + "))";
}

std::string float_literal(double v, ScalarType t) {
  bool f32 = t == ScalarType::Float32;
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

// isl's expressions in C, with its min/max/floord spelled as the prelude's functions.
std::string isl_c(isl_ast_expr* e) {
  std::string s = owned_text(isl_ast_expr_to_C_str(e));
  isl_ast_expr_free(e);
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      if (at == 0 || !(std::isalnum(static_cast<unsigned char>(s[at - 1])) || s[at - 1] == '_')) s.replace(at, from.size(), to);
  };
  replace("min(", "tc_imin(");
  replace("max(", "tc_imax(");
  replace("floord(", "tc_floord(");
  return s;
}

class Printer {
 public:
  Printer(const ir::BoundDef& b, const PolyModel& m) : b_(b), m_(m) {}

  CudaSource run(const isl_schedule* mapped) {
    isl_ast_build* build = isl_ast_build_alloc(m_.ctx());
    isl_ast_node* tree = isl_ast_build_node_from_schedule(build, isl_schedule_copy(const_cast<isl_schedule*>(mapped)));
    isl_ast_build_free(build);
    checked(tree, m_.ctx(), "generating the loop nest");
    try {
      top(tree);
    } catch (...) {
      isl_ast_node_free(tree);
      throw;
    }
    isl_ast_node_free(tree);
    out_.text = std::string(kPrelude) + "\n" + kernels_;
    for (const auto& t : b_.def().tensors) out_.param_types.push_back(storage_type(t.type) + "*");
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

  void kernel(isl_ast_node* node) {
    Launch launch;
    launch.kernel = b_.def().name + "_k" + std::to_string(out_.launches.size());
    axes_ = &launch;
    std::string body;
    walk(node, body, 1);
    std::string params;
    for (const auto& t : b_.def().tensors)
      params += (params.empty() ? "" : ", ") + storage_type(t.type) + "* __restrict__ " + param(t);
    kernels_ += "extern \"C\" __global__ void " + launch.kernel + "(" + params + ") {\n" + body + "}\n\n";
    out_.launches.push_back(launch);
  }

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
      case isl_ast_node_block: {
        isl_ast_node_list* children = isl_ast_node_block_get_children(node);
        for (int i = 0; i < isl_ast_node_list_n_ast_node(children); ++i)
          child(isl_ast_node_list_get_ast_node(children, i), out, depth);
        isl_ast_node_list_free(children);
        return;
      }
      case isl_ast_node_mark: {
        isl_id* id = isl_ast_node_mark_get_id(node);
        std::string name = isl_id_get_name(id);
        isl_id_free(id);
        isl_ast_node* inner = isl_ast_node_mark_get_node(node);
        if (name.rfind("block.", 0) == 0 || name.rfind("thread.", 0) == 0) {
          try {
            mapped(inner, name, out, depth);
          } catch (...) {
            isl_ast_node_free(inner);
            throw;
          }
          isl_ast_node_free(inner);
        } else {
          child(inner, out, depth);
        }
        return;
      }
      case isl_ast_node_user: return statement(node, out, depth);
      default: fail(TC_ERROR_INTERNAL, "the cuda printer met an isl AST node it does not know");
    }
  }

  // Walks and frees `node`.
  void child(isl_ast_node* node, std::string& out, int depth) {
    try {
      walk(node, out, depth);
    } catch (...) {
      isl_ast_node_free(node);
      throw;
    }
    isl_ast_node_free(node);
  }

  // A loop mapped to the grid or a block: a stride over blockIdx/threadIdx, or a guard where
  // isl left no loop (one iteration).
  void mapped(isl_ast_node* inner, const std::string& mark, std::string& out, int depth) {
    bool block = mark[0] == 'b';
    char axis = mark.back();
    int used = axis - 'x' + 1;
    int& axes = block ? axes_->grid_axes : axes_->block_axes;
    axes = std::max(axes, used);
    std::string index = std::string(block ? "blockIdx." : "threadIdx.") + axis;
    std::string count = std::string(block ? "gridDim." : "blockDim.") + axis;
    if (isl_ast_node_get_type(inner) == isl_ast_node_for) return loop(inner, out, depth, index + "|" + count);
    out += pad(depth) + "if (" + index + " == 0) {\n";
    walk(inner, out, depth + 1);
    out += pad(depth) + "}\n";
  }

  // `stride`: "blockIdx.x|gridDim.x" for a mapped loop, "" for a plain one.
  void loop(isl_ast_node* node, std::string& out, int depth, const std::string& stride) {
    std::string it = isl_c(isl_ast_node_for_get_iterator(node));
    std::string init = isl_c(isl_ast_node_for_get_init(node));
    std::string cond = isl_c(isl_ast_node_for_get_cond(node));
    std::string inc = isl_c(isl_ast_node_for_get_inc(node));
    if (!stride.empty()) {
      size_t bar = stride.find('|');
      init = "(" + init + ") + (" + inc + ") * (long long)" + stride.substr(0, bar);
      inc = "(" + inc + ") * (long long)" + stride.substr(bar + 1);
    }
    out += pad(depth) + "for (long long " + it + " = " + init + "; " + cond + "; " + it + " += " + inc + ") {\n";
    child(isl_ast_node_for_get_body(node), out, depth + 1);
    out += pad(depth) + "}\n";
  }

  // ---- statements ----

  void statement(isl_ast_node* node, std::string& out, int depth) {
    isl_ast_expr* call = isl_ast_node_user_get_expr(node);
    isl_ast_expr* callee = isl_ast_expr_get_op_arg(call, 0);
    isl_id* name_id = isl_ast_expr_get_id(callee);
    isl_ast_expr_free(callee);
    std::string name = isl_id_get_name(name_id);
    isl_id_free(name_id);
    std::vector<std::string> args;
    for (int i = 1; i < isl_ast_expr_get_op_n_arg(call); ++i) args.push_back(isl_c(isl_ast_expr_get_op_arg(call, i)));
    isl_ast_expr_free(call);
    size_t s = std::stoul(name.substr(1));
    const ir::Stmt& st = b_.def().stmts[s];
    out += pad(depth) + "{\n";
    for (size_t k = 0; k < args.size(); ++k)
      out += pad(depth + 1) + "const long long i" + std::to_string(k) + " = " + args[k] + ";\n";
    const ir::Tensor& t = b_.def().tensors[static_cast<size_t>(st.lhs_tensor)];
    std::vector<std::string> lhs;
    for (size_t k = 0; k < st.num_lhs; ++k) lhs.push_back("i" + std::to_string(k));
    std::string element = param(t) + "[" + offset(static_cast<size_t>(st.lhs_tensor), lhs) + "]";
    std::string value;
    ScalarType tt = t.type;
    if (name[0] == 'I') {
      value = identity(st.reduce, tt);
    } else {
      stmt_ = &st;
      std::string rhs = convert(expr(*st.rhs), st.rhs->type, tt);
      std::string acc = load_as(element, tt);
      switch (st.reduce) {
        case ir::ReduceOp::None: value = rhs; break;
        case ir::ReduceOp::Sum: value = "tc_add(" + acc + ", " + rhs + ")"; break;
        case ir::ReduceOp::Product: value = "tc_mul(" + acc + ", " + rhs + ")"; break;
        case ir::ReduceOp::Min: value = "tc_min(" + acc + ", " + rhs + ")"; break;
        case ir::ReduceOp::Max: value = "tc_max(" + acc + ", " + rhs + ")"; break;
      }
    }
    if (tt == ScalarType::Bool) value = "(unsigned char)(" + value + ")";
    out += pad(depth + 1) + element + " = " + value + ";\n" + pad(depth) + "}\n";
  }

  static std::string load_as(const std::string& element, ScalarType t) {
    return t == ScalarType::Bool ? "(" + element + " != 0)" : element;
  }

  std::string identity(ir::ReduceOp op, ScalarType t) const {
    bool f = is_float(t);
    switch (op) {
      case ir::ReduceOp::Sum: return f ? float_literal(0, t) : int_literal(0, t);
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

  // The element offset of tensor t at these subscripts (long long expressions), row-major.
  std::string offset(size_t t, const std::vector<std::string>& subs) const {
    const auto& shape = b_.tensors[t].shape;
    if (subs.empty()) return "0";
    std::string out;
    int64_t stride = 1;
    for (size_t d = subs.size(); d-- > 0;) {
      std::string term = stride == 1 ? "(" + subs[d] + ")" : "(" + subs[d] + ") * " + std::to_string(stride) + "ll";
      out = out.empty() ? term : term + " + " + out;
      stride *= shape[d];
    }
    return out;
  }

  std::string expr(const ir::Node& e) {
    auto arg = [&](size_t i, ScalarType to) { return convert(expr(*e.args[i]), e.args[i]->type, to); };
    switch (e.op) {
      case ir::ExprOp::Const: return e.is_float ? float_literal(e.float_value, e.type) : int_literal(e.int_value, e.type);
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
        return convert(std::string(f) + "(" + a + ", " + b + ")", e.operand_type, e.type);
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
      case B::Rsqrt: return "tc_rsqrt(" + args + ")";
      default: break;
    }
    std::string name = e.builtin == B::Round ? "nearbyint" : lang::builtin(e.builtin).name;
    return name + (e.type == ScalarType::Float32 ? "f" : "") + "(" + args + ")";
  }

  std::string load(const ir::Node& e) {
    const ir::Read& r = stmt_->reads[static_cast<size_t>(e.index)];
    const auto& shape = b_.tensors[static_cast<size_t>(r.tensor)].shape;
    std::vector<std::string> subs;
    for (size_t d = 0; d < e.args.size(); ++d) {
      std::string s = "(long long)" + expr(*e.args[d]);
      // Not proven in bounds: clamped into the tensor (checked reporting is a later step).
      if (!b_.proven(r.subscripts[d])) s = "tc_clamp(" + s + ", " + std::to_string(shape[d]) + "ll)";
      subs.push_back(s);
    }
    const ir::Tensor& t = b_.def().tensors[static_cast<size_t>(r.tensor)];
    return load_as(param(t) + "[" + offset(static_cast<size_t>(r.tensor), subs) + "]", t.type);
  }

  const ir::BoundDef& b_;
  const PolyModel& m_;
  const ir::Stmt* stmt_ = nullptr;
  Launch* axes_ = nullptr;
  std::string kernels_;
  CudaSource out_;
};

}  // namespace

CudaSource print_cuda(const ir::BoundDef& bound, const PolyModel& model, const isl_schedule* mapped) {
  for (const auto& t : bound.def().tensors) c_type(t.type);  // float16: unsupported, before any printing
  return Printer(bound, model).run(mapped);
}

}  // namespace tc::backends::cuda
