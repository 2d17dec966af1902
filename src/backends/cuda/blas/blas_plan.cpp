// blas_plan.cpp — see blas_plan.h.
#include "backends/cuda/blas/blas_plan.h"

#include <climits>

#include "backends/contraction/contraction.h"
#include "runtime/tensor_view.h"

namespace tc::backends::cuda {
namespace {

std::optional<BlasCall> refuse(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return std::nullopt;
}

// A matrix as cuBLAS takes it: a column-major r x c operand `op(M)` stored as M, transposed or
// not, with its leading dimension; from the row stride `along_r` and column stride `along_c`
// of the logical operand (its element (r, c) at r * along_r + c * along_c). nullopt where
// neither index is contiguous.
struct Operand {
  bool trans = false;
  int64_t ld = 0;
};
std::optional<Operand> operand(int64_t rows, int64_t cols, int64_t along_r, int64_t along_c) {
  // Column-major as it is: (r, c) at r + c * ld. A dimension of one value may have any stride.
  if (along_r == 1 || rows == 1) return Operand{false, std::max<int64_t>({cols == 1 ? rows : along_c, rows, 1})};
  if (along_c == 1 || cols == 1) return Operand{true, std::max<int64_t>({rows == 1 ? cols : along_r, cols, 1})};
  return std::nullopt;
}

// What an epilogue computes, followed symbolically: its statements' values in terms of the sum
// (x), the bias read (b) and 0, where each is cuBLASLt's x + b, max(x, 0) or max(x + b, 0).
struct Symbol {
  enum Kind { Sum, Bias, Zero, Other } kind = Other;
  bool biased = false, relu = false;  // a Sum's: what is applied to it so far
};

// The bias and ReLU of `p`'s epilogue where it is one cuBLASLt computes (bias: a vector of O's
// type along the N index, which is O's contiguous one), else a reason. `bias` -1 where none.
std::string lt_epilogue(const Contraction& p, const ir::BoundDef& bound, int& bias, bool& relu) {
  using K = EpilogueOp::Kind;
  Symbol value{Symbol::Sum};
  bias = -1;
  for (const std::vector<EpilogueOp>& ops : p.epilogue) {
    std::vector<Symbol> stack;
    for (const EpilogueOp& op : ops) {
      if (op.kind == K::Out) {
        stack.push_back(value);
      } else if (op.kind == K::Const) {
        stack.push_back({op.value == 0 ? Symbol::Zero : Symbol::Other});
      } else if (op.kind == K::Read) {
        int t = p.epilogue_reads[static_cast<size_t>(op.read)];
        bool along_n = bound.tensors[static_cast<size_t>(t)].shape.size() == 1 && p.n[0].e[static_cast<size_t>(op.read)] == 0;
        if (!along_n || (bias >= 0 && bias != t)) return "the epilogue reads something else than one bias along O's last index";
        bias = t;
        stack.push_back({Symbol::Bias});
      } else if ((op.kind == K::Add || op.kind == K::Fmax) && stack.size() >= 2) {
        Symbol b = stack.back();
        stack.pop_back();
        Symbol a = stack.back();
        stack.pop_back();
        if (b.kind == Symbol::Sum) std::swap(a, b);
        if (a.kind != Symbol::Sum || a.relu) return "the epilogue is not x + bias, then max(x, 0)";
        if (op.kind == K::Add && b.kind == Symbol::Bias && !a.biased) a.biased = true;
        else if (op.kind == K::Fmax && b.kind == Symbol::Zero) a.relu = true;
        else return "the epilogue is not x + bias, then max(x, 0) (fmax)";
        stack.push_back(a);
      } else {
        return "the epilogue is not x + bias, then max(x, 0) (fmax)";
      }
    }
    if (stack.size() != 1 || stack[0].kind != Symbol::Sum) return "the epilogue is not x + bias, then max(x, 0)";
    value = stack[0];
  }
  relu = value.relu;
  if (value.biased != (bias >= 0)) return "the epilogue is not x + bias, then max(x, 0)";
  return "";
}

}  // namespace

std::string BlasCall::describe(const ir::Def& def) const {
  auto name = [&](int t) { return def.tensors[static_cast<size_t>(t)].name; };
  auto num = [](int64_t v) { return std::to_string(v); };
  std::string out = std::string(lt() ? "cublasLtMatmul" : "cublasGemmStridedBatchedEx") + ", " + std::string(tc::name(type)) +
                    ", column-major: " + name(c) + " (" +
                    num(m) + " x " + num(n) + ", ld " + num(ldc) + ") " + (accumulate ? "+= " : "= ") + name(x) +
                    (x_trans ? "^T" : "") + " (ld " + num(ldx) + ") * " + name(y) + (y_trans ? "^T" : "") + " (ld " +
                    num(ldy) + "), k " + num(k);
  if (batch > 1)
    out += ", " + num(batch) + " batches " + num(stride_c) + ", " + num(stride_x) + ", " + num(stride_y) + " elements apart";
  if (bias >= 0) out += ", then + " + name(bias) + " along the rows";
  if (relu) out += ", then max(x, 0)";
  return out;
}

std::optional<BlasCall> plan_blas(const ir::BoundDef& bound, std::string* why) {
  ContractionRules rules;
  rules.half = true;
  std::string reason;
  std::optional<ContractionPlan> plan = plan_contraction(bound, &reason, rules);
  if (!plan) return refuse(why, "not a product of two tensors: " + reason);
  if (plan->stages.size() != 1) return refuse(why, "more than one product");
  const Contraction& p = plan->stages[0];
  int bias = -1;
  bool relu = false;
  if (!p.epilogue.empty()) {
    std::string no = lt_epilogue(p, bound, bias, relu);
    if (!no.empty()) return refuse(why, no);
  }
  if (p.batch.size() > 1 || p.m.size() != 1 || p.n.size() != 1 || p.k.size() != 1)
    return refuse(why, "not a plain matrix product (more than one index in a group)");
  const ir::Def& def = bound.def();
  if (def.tensors[static_cast<size_t>(p.o)].role != ir::TensorRole::Output) return refuse(why, "the product is a temporary");
  const auto& shapes = bound.tensors;
  auto rank = [&](int t) { return shapes[static_cast<size_t>(t)].shape.size(); };
  size_t groups_a = p.batch.size() + 2, groups_o = p.batch.size() + 2;
  if (rank(p.a) != groups_a || rank(p.b) != groups_a || rank(p.o) != groups_o)
    return refuse(why, "a tensor has dimensions besides the product's indices");
  // Every index over whole dimensions.
  for (const auto* g : {&p.batch, &p.m, &p.n, &p.k})
    for (const ContractionIndex& x : *g) {
      for (auto [t, d] : {std::pair{p.a, x.a}, std::pair{p.b, x.b}, std::pair{p.o, x.o}})
        if (d >= 0 && (x.lo != 0 || x.hi != shapes[static_cast<size_t>(t)].shape[static_cast<size_t>(d)]))
          return refuse(why, "index '" + x.name + "' runs over part of a tensor's dimension");
      if (x.hi > INT_MAX) return refuse(why, "index '" + x.name + "' has more values than cuBLAS's int takes");
    }
  const std::vector<int64_t> sa = runtime::dense_strides(shapes[static_cast<size_t>(p.a)].shape),
                             sb = runtime::dense_strides(shapes[static_cast<size_t>(p.b)].shape),
                             so = runtime::dense_strides(shapes[static_cast<size_t>(p.o)].shape);
  const ContractionIndex &m = p.m[0], &n = p.n[0], &k = p.k[0];
  const int64_t M = m.hi, N = n.hi, K = k.hi;
  if (M == 0 || N == 0 || K == 0) return refuse(why, "an empty product");
  BlasCall call;
  call.type = p.type;
  call.c = p.o;
  call.k = K;
  call.accumulate = p.accumulate;
  // C = O as it is (O's M index contiguous: C = A·B) or its transpose (N contiguous: Cᵀ = Bᵀ·Aᵀ).
  bool o_by_n = so[static_cast<size_t>(n.o)] == 1 || N == 1;
  std::optional<Operand> ox, oy;
  if (o_by_n) {  // C (N x M) = B^T (N x K) * A^T (K x M)
    call.x = p.b, call.y = p.a, call.m = N, call.n = M;
    call.ldc = std::max<int64_t>({so[static_cast<size_t>(m.o)], N, 1});
    ox = operand(N, K, sb[static_cast<size_t>(n.b)], sb[static_cast<size_t>(k.b)]);
    oy = operand(K, M, sa[static_cast<size_t>(k.a)], sa[static_cast<size_t>(m.a)]);
  } else {  // C (M x N) = A (M x K) * B (K x N)
    if (so[static_cast<size_t>(m.o)] != 1 && M != 1)
      return refuse(why, "the result is not contiguous along either of its matrix's indices");
    call.x = p.a, call.y = p.b, call.m = M, call.n = N;
    call.ldc = std::max<int64_t>({so[static_cast<size_t>(n.o)], M, 1});
    ox = operand(M, K, sa[static_cast<size_t>(m.a)], sa[static_cast<size_t>(k.a)]);
    oy = operand(K, N, sb[static_cast<size_t>(k.b)], sb[static_cast<size_t>(n.b)]);
  }
  if (!ox || !oy) return refuse(why, "an operand is not contiguous along either of its matrix's indices");
  if (bias >= 0 && !o_by_n) return refuse(why, "a bias along O's index that is not its contiguous one");
  call.bias = bias;
  call.relu = relu;
  call.x_trans = ox->trans, call.ldx = ox->ld;
  call.y_trans = oy->trans, call.ldy = oy->ld;
  if (!p.batch.empty()) {
    const ContractionIndex& b = p.batch[0];
    call.batch = b.hi;
    auto along = [&](const std::vector<int64_t>& s, int d) { return d < 0 ? int64_t{0} : s[static_cast<size_t>(d)]; };
    int64_t stride_a = along(sa, b.a), stride_b = along(sb, b.b);
    call.stride_x = call.x == p.a ? stride_a : stride_b;
    call.stride_y = call.y == p.a ? stride_a : stride_b;
    call.stride_c = along(so, b.o);
  }
  for (int64_t v : {call.m, call.n, call.k, call.ldx, call.ldy, call.ldc, call.batch})
    if (v > INT_MAX) return refuse(why, "a dimension past cuBLAS's int");
  return call;
}

}  // namespace tc::backends::cuda
