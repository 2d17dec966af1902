// gemm_route.cpp — see gemm_route.h.
#include "backends/cpu/gemm_route.h"

#include <algorithm>
#include <climits>

namespace tc::backends::cpu {

using runtime::TensorView;

std::string GemmPlan::describe() const {
  std::string text = std::string("C = ") + (accumulate ? "C + " : "") + "A" + (a_trans ? "^T" : "") + " * B" +
                     (b_trans ? "^T" : "") + " (cblas_" + (type == ScalarType::Float64 ? "dgemm" : "sgemm") + ")";
  if (batch > 0) text += ", " + std::to_string(batch) + " batch dimension" + (batch > 1 ? "s" : "");
  return text;
}

namespace {

bool not_plain(std::string* why, const std::string& what) {
  if (why) *why = what;
  return false;
}

// Whether read `r` of statement `s` reads tensor `t` at the batch variables, in order, then
// at (first, second); every subscript exactly a variable.
bool reads_at(const ir::Read& r, int batch, int first, int second) {
  if (static_cast<int>(r.subscripts.size()) != batch + 2 || r.guarded) return false;
  for (int d = 0; d < batch; ++d)
    if (r.subscripts[d].var != d) return false;
  return r.subscripts[batch].var == first && r.subscripts[batch + 1].var == second;
}

bool plan_into(const ir::BoundDef& bound, GemmPlan& p, std::string* why) {
  const ir::Def& def = bound.def();
  if (def.stmts.size() != 1) return not_plain(why, "the def has " + std::to_string(def.stmts.size()) + " statements");
  const ir::Stmt& s = def.stmts[0];
  const ir::Tensor& out = def.tensors[s.lhs_tensor];
  if (s.scatter || s.reduce != ir::ReduceOp::Sum || out.role != ir::TensorRole::Output)
    return not_plain(why, "the statement is not a += reduction into an output");
  int rank = static_cast<int>(s.num_lhs);
  if (rank < 2 || s.vars.size() != s.num_lhs + 1) return not_plain(why, "not two output dimensions and one reduction variable");
  p.type = out.type;
  if (p.type != ScalarType::Float32 && p.type != ScalarType::Float64) return not_plain(why, "not float or double");
  const ir::Node& rhs = *s.rhs;
  bool product = rhs.op == ir::ExprOp::Binary && rhs.binop == ir::BinOp::Mul && rhs.operand_type == p.type &&
                 rhs.type == p.type && rhs.args.size() == 2 && rhs.args[0]->op == ir::ExprOp::Load &&
                 rhs.args[1]->op == ir::ExprOp::Load && s.reads.size() == 2;
  if (!product) return not_plain(why, "the right-hand side is not a product of two tensor reads");
  p.batch = rank - 2;
  int i = rank - 2, j = rank - 1, k = rank;
  const ir::Read* left = &s.reads[rhs.args[0]->index];
  const ir::Read* right = &s.reads[rhs.args[1]->index];
  auto is_a = [&](const ir::Read& r) { return reads_at(r, p.batch, i, k) || reads_at(r, p.batch, k, i); };
  auto is_b = [&](const ir::Read& r) { return reads_at(r, p.batch, k, j) || reads_at(r, p.batch, j, k); };
  if (!(is_a(*left) && is_b(*right))) std::swap(left, right);
  if (!(is_a(*left) && is_b(*right))) return not_plain(why, "the reads are not A(..., i, k) and B(..., k, j) in some order");
  for (const ir::Read* r : {left, right}) {
    const ir::Tensor& t = def.tensors[r->tensor];
    if (t.role != ir::TensorRole::Input || t.type != p.type) return not_plain(why, "an operand is not an input of C's type");
  }
  p.a_trans = left->subscripts[p.batch].var == k;
  p.b_trans = right->subscripts[p.batch].var == j;
  p.a = def.tensors[left->tensor].param_index;
  p.b = def.tensors[right->tensor].param_index;
  p.c = out.param_index;
  p.accumulate = !s.init;
  // Every variable over the whole extent it indexes: C's dimensions, and the reduction over
  // all of A's (and so B's) K.
  const auto& ranges = bound.ranges[0];
  const auto& c_shape = bound.tensors[s.lhs_tensor].shape;
  for (int v = 0; v < rank; ++v)
    if (ranges[v].first != 0 || ranges[v].second != c_shape[v]) return not_plain(why, "C is not written whole");
  int64_t a_k = bound.tensors[left->tensor].shape[p.a_trans ? p.batch : p.batch + 1];
  int64_t b_k = bound.tensors[right->tensor].shape[p.b_trans ? p.batch + 1 : p.batch];
  if (ranges[k].first != 0 || ranges[k].second != a_k || a_k != b_k)
    return not_plain(why, "the reduction does not run over the whole of A's and B's shared dimension");
  return true;
}

// The leading dimension of v's last two dimensions as a row-major matrix, or -1 where BLAS
// cannot take it. A dimension of extent 1 may have any stride.
int64_t leading_dimension(const TensorView& v) {
  int64_t rows = v.shape[v.ndim - 2], cols = v.shape[v.ndim - 1];
  if (cols > 1 && v.strides[v.ndim - 1] != 1) return -1;
  int64_t ld = rows > 1 ? v.strides[v.ndim - 2] : std::max<int64_t>(1, cols);
  return ld >= std::max<int64_t>(1, cols) && ld <= INT_MAX ? ld : -1;
}

template <typename T, typename Gemm>
void gemm_batches(Gemm gemm, const GemmPlan& p, const TensorView& a, const TensorView& b, const TensorView& c, int m,
                  int n, int k, int64_t lda, int64_t ldb, int64_t ldc) {
  int64_t batches = 1;
  for (int d = 0; d < p.batch; ++d) batches *= c.shape[d];
  int trans_a = p.a_trans ? Cblas::kTrans : Cblas::kNoTrans, trans_b = p.b_trans ? Cblas::kTrans : Cblas::kNoTrans;
  T beta = p.accumulate ? T(1) : T(0);
  for (int64_t flat = 0; flat < batches; ++flat) {
    int64_t oa = 0, ob = 0, oc = 0, rest = flat;
    for (int d = p.batch - 1; d >= 0; --d) {
      int64_t idx = rest % c.shape[d];
      rest /= c.shape[d];
      oa += idx * a.strides[d], ob += idx * b.strides[d], oc += idx * c.strides[d];
    }
    gemm(Cblas::kRowMajor, trans_a, trans_b, m, n, k, T(1), reinterpret_cast<const T*>(a.data) + oa,
         static_cast<int>(lda), reinterpret_cast<const T*>(b.data) + ob, static_cast<int>(ldb), beta,
         reinterpret_cast<T*>(c.data) + oc, static_cast<int>(ldc));
  }
}

}  // namespace

std::optional<GemmPlan> plan_gemm(const ir::BoundDef& bound, std::string* why) {
  GemmPlan p;
  if (!plan_into(bound, p, why)) return std::nullopt;
  return p;
}

bool run_gemm(const GemmPlan& p, const Cblas& blas, const std::vector<TensorView>& inputs,
              const std::vector<TensorView>& outputs, int threads) {
  const TensorView &a = inputs[p.a], &b = inputs[p.b], &c = outputs[p.c];
  int r = c.ndim;
  int64_t m = c.shape[r - 2], n = c.shape[r - 1], k = a.shape[p.a_trans ? r - 2 : r - 1];
  if (m == 0 || n == 0) return true;  // nothing to write
  int64_t lda = leading_dimension(a), ldb = leading_dimension(b), ldc = leading_dimension(c);
  if (lda < 0 || ldb < 0 || ldc < 0 || m > INT_MAX || n > INT_MAX || k > INT_MAX) return false;
  if (blas.set_threads) blas.set_threads(std::max(1, threads));
  if (p.type == ScalarType::Float64)
    gemm_batches<double>(blas.dgemm, p, a, b, c, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), lda, ldb, ldc);
  else
    gemm_batches<float>(blas.sgemm, p, a, b, c, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), lda, ldb, ldc);
  return true;
}

}  // namespace tc::backends::cpu
