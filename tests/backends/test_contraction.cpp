// test_contraction.cpp — the cpu backend's contraction route (src/backends/cpu/contraction),
// white-box: which defs are contractions and how their indices are grouped and oriented (with
// the reason for those that are not); and the GETT code against a plain loop in double
// precision on random contractions — every grouping of 0 to 2 indices per group, odd extents,
// operands in random dimension orders with padded, broadcast (stride 0) and negative strides,
// `+=` and `+=!`, an empty sum, long sums into small results (cut along K) — on every
// micro-kernel this CPU runs, one to three threads, and
// blocks small enough that every loop takes several trips. Its results through the C API (the
// corpus, cpu against reference) are in tests/e2e.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "backends/contraction/contraction.h"
#include "backends/cpu/contraction/gett.h"
#include "backends/cpu/contraction/microkernel.h"
#include "infer_test_util.h"

using tc::ScalarType;
using tc::backends::Contraction;
using tc::backends::ContractionPlan;
using tc::backends::ContractionIndex;
using tc::backends::cpu::GettOptions;
using tc::runtime::TensorView;
using namespace tc_test;

namespace {

std::optional<ContractionPlan> plan_of(const std::string& src, const std::vector<Shape>& shapes,
                                       std::string* why = nullptr, ScalarType type = ScalarType::Float32,
                                       bool affine = false) {
  ProgramPtr p = build(src);
  Inputs in;
  for (const auto& s : shapes) in.add(type, s);
  tc::backends::ContractionRules rules;
  rules.affine = affine;
  return tc::backends::plan_contraction(bind_def(p, in), why, rules);
}

// The def's describe() of each stage, for the def in `src`.
std::string described(const std::string& src, const ContractionPlan& plan, size_t stage) {
  return plan.stages[stage].describe(*build(src)->ir[0]);
}

std::string names(const std::vector<ContractionIndex>& g) {
  std::string out;
  for (const auto& x : g) out += x.name;
  return out;
}

}  // namespace

// Affine subscripts (the cuda backend's plans): a convolution is an implicit GEMM, each index
// with its coefficient, each subscript's constant term kept; the cpu backend's plans refuse it.
TEST(Contraction, AffineSubscriptsMakeAConvolutionAnImplicitGemm) {
  const char* conv = "def c(float(N,C,H,W) I, float(M,C,KH,KW) W1) -> (O) { O(n,m,h,w) +=! I(n,c,2*h + kh + 1,w + kw) * "
                     "W1(m,c,kh,kw) where h in 0:3, w in 0:6 }";
  std::string why;
  EXPECT_FALSE(plan_of(conv, {{2, 3, 9, 8}, {4, 3, 2, 3}}, &why));
  EXPECT_EQ(why, "an operand's subscripts are not distinct index variables");
  auto plan = plan_of(conv, {{2, 3, 9, 8}, {4, 3, 2, 3}}, &why, ScalarType::Float32, true);
  ASSERT_TRUE(plan) << why;
  const Contraction& c = plan->stages[0];
  EXPECT_EQ(c.a, 1);  // W1: O's innermost index w is I's, so I is B
  EXPECT_EQ(c.b, 0);
  EXPECT_EQ(names(c.m), "m");
  EXPECT_EQ(names(c.n), "nhw");
  EXPECT_EQ(names(c.k), "ckhkw");
  EXPECT_EQ(c.n[1].b, 2);
  EXPECT_EQ(c.n[1].b_scale, 2);  // h in 2*h + kh + 1
  EXPECT_EQ(c.k[1].b, 2);
  EXPECT_EQ(c.k[1].b_scale, 1);
  EXPECT_EQ(c.b_shift, (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(c.a_shift, (std::vector<int64_t>{0, 0, 0, 0}));
  // A variable in two subscripts of one operand is no contraction.
  EXPECT_FALSE(plan_of("def d(float(N,N) A, float(N) B) -> (C) { C(i) +=! A(i + k, k) * B(k) where i in 0:1 }",
                       {{4, 4}, {4}}, &why, ScalarType::Float32, true));
  EXPECT_EQ(why, "an operand's subscripts are not affine in distinct index variables");
}

TEST(Contraction, GroupsTheIndicesAndWritesAlongN) {
  // A coupled-cluster term: no index in its place, O written along a, which B (X) has.
  const char* cc = "def f(float(F,B,E,A) X, float(E,C,F,D) Y) -> (Z) { Z(d,c,b,a) +=! X(f,b,e,a) * Y(e,c,f,d) }";
  auto plan = plan_of(cc, {{2, 3, 4, 5}, {4, 6, 2, 7}});
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->stages.size(), 1u);
  const Contraction* c = &plan->stages[0];
  EXPECT_EQ(c->a, 1);  // Y: the operand without O's innermost index (tensors: X, Y, Z)
  EXPECT_EQ(c->b, 0);
  EXPECT_EQ(c->o, 2);
  EXPECT_EQ(names(c->m), "dc");
  EXPECT_EQ(names(c->n), "ba");
  EXPECT_EQ(names(c->k), "fe");
  EXPECT_TRUE(c->batch.empty());
  EXPECT_FALSE(c->accumulate);
  EXPECT_EQ(described(cc, *plan, 0), "float32; batch -; M d=7 c=6; N b=3 a=5; K f=2 e=4");
  EXPECT_EQ(c->flops(), 2.0 * 7 * 6 * 3 * 5 * 2 * 4);
  EXPECT_TRUE(c->epilogue.empty());

  // Batched, `+=`, double, one tensor read twice.
  auto bp = plan_of("def g(double(B,N,N) X) -> (Y) { Y(b,i,j) += X(b,i,k) * X(b,k,j) }", {{3, 4, 4}}, nullptr,
                    ScalarType::Float64);
  ASSERT_TRUE(bp);
  const Contraction* b = &bp->stages[0];
  EXPECT_EQ(names(b->batch), "b");
  EXPECT_EQ(names(b->m), "i");
  EXPECT_EQ(names(b->n), "j");
  EXPECT_EQ(names(b->k), "k");
  EXPECT_TRUE(b->accumulate);
  EXPECT_EQ(b->type, ScalarType::Float64);
}

TEST(Contraction, RefusesWhatIsNotOneAndSaysWhy) {
  struct Case {
    const char* src;
    std::vector<Shape> in;
    const char* why;
  };
  const Case cases[] = {
      {"def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) + 1 }", {{4, 5}, {5, 6}},
       "not a product of two tensor reads"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) max=! A(i,k) * B(k,j) }", {{4, 5}, {5, 6}},
       "not a += reduction"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) {\n  T(i,j) +=! A(i,k) * B(k,j)\n  C(i,j) = T(i,j)\n}",
       {{4, 5}, {5, 6}}, "statement 2: the statement is not a += reduction"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) {\n  C(i,j) +=! A(i,k) * B(k,j)\n  C(i,j) = exp(C(i,j))\n}",
       {{4, 5}, {5, 6}}, "statement 2: after the product, the statement has the function exp"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) {\n  C(i,j) +=! A(i,k) * B(k,j)\n  C(i,j) = C(i,j) * A(i,0)\n}",
       {{4, 5}, {5, 6}}, "a read whose subscripts are not distinct indices: A(i, 0)"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) {\n  C(i,j) +=! A(i,k) * B(k,j)\n  C(i,j) = C(i,j) > 0 ? C(i,j) : 0\n}",
       {{4, 5}, {5, 6}}, "a comparison or a condition"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) {\n  T(i,j) += A(i,k) * B(k,j)\n  C(i,j) +=! T(i,k) * B(k,j)\n}",
       {{4, 5}, {5, 5}}, "it adds to a temporary nothing wrote before"},
      {"def f(float(M,K) A, float(N) B) -> (C) { C(i,j) +=! A(i,k) * B(j) }", {{4, 5}, {6}},
       "index 'k' is summed over one operand alone"},
      {"def f(float(M) A, float(N) B) -> (C) { C(i,j,l) +=! A(i) * B(j) where l in 0:3 }", {{4}, {6}},
       "index 'l' of the output is in neither operand"},
      {"def f(float(M,M) A, float(M) B) -> (C) { C(i) +=! A(i,i) * B(i) }", {{4, 4}, {4}},
       "not distinct index variables"},
      {"def f(float(M,K) A, float(K) B) -> (C) { C(i) +=! A(i,k) * B(k + 1) where k in 0:K-1 }", {{4, 5}, {5}},
       "not distinct index variables"},
  };
  for (const Case& c : cases) {
    std::string why;
    auto plan = plan_of(c.src, c.in, &why);
    EXPECT_FALSE(plan) << c.src;
    EXPECT_TRUE(has(why, c.why)) << c.src << ": " << why;
  }
}

TEST(Contraction, PointwiseStatementsAfterAProductAreItsEpilogue) {
  // fcrelu: a bias and a ReLU after the product, in one statement or two.
  const char* fc = "def fc(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n  O(b,n) +=! I(b,k) * W(n,k)\n"
                   "  O(b,n) = O(b,n) + bias(n)\n  O(b,n) = fmax(O(b,n), 0)\n}";
  auto plan = plan_of(fc, {{3, 5}, {4, 5}, {4}});
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->stages.size(), 1u);
  const Contraction& c = plan->stages[0];
  ASSERT_EQ(c.epilogue.size(), 2u);
  EXPECT_EQ(c.epilogue_reads, std::vector<int>{2});  // bias
  EXPECT_EQ(described(fc, *plan, 0), "float32; batch -; M b=3; N n=4; K k=5; then 2 pointwise statements reading bias");
  EXPECT_EQ(c.n[0].e, std::vector<int>{0});  // n walks bias's dimension 0
  EXPECT_EQ(c.m[0].e, std::vector<int>{-1});

  // MLP3: three layers through two temporaries.
  const char* mlp = "def mlp3(float(B,M) I, float(O,M) W1, float(O) B1, float(P,O) W2, float(P) B2,\n"
                    "         float(Q,P) W3, float(Q) B3) -> (Y) {\n"
                    "  H1(b,o) +=! I(b,m) * W1(o,m)\n  H1(b,o) = fmax(H1(b,o) + B1(o), 0)\n"
                    "  H2(b,p) +=! H1(b,o) * W2(p,o)\n  H2(b,p) = fmax(H2(b,p) + B2(p), 0)\n"
                    "  Y(b,q) +=! H2(b,p) * W3(q,p)\n  Y(b,q) = fmax(Y(b,q) + B3(q), 0)\n}";
  auto m = plan_of(mlp, {{4, 6}, {5, 6}, {5}, {3, 5}, {3}, {2, 3}, {2}});
  ASSERT_TRUE(m);
  ASSERT_EQ(m->stages.size(), 3u);
  for (const Contraction& s : m->stages) EXPECT_EQ(s.epilogue.size(), 1u);
  EXPECT_EQ(m->flops(), 2.0 * 4 * (6 * 5 + 5 * 3 + 3 * 2));
}

namespace {

// A tensor of doubles or floats in memory of its own, its dimensions laid out in a random
// order with random padding, some strides negative, a dimension of extent 1 with stride 0;
// dimension `unit` (if any) innermost, stride 1.
template <typename T>
struct Operand {
  std::vector<T> memory;
  TensorView v;

  Operand(const std::vector<int64_t>& shape, std::mt19937& rng, ScalarType type, int unit = -1) {
    v.type = type;
    v.ndim = static_cast<int>(shape.size());
    std::vector<int> order(shape.size());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int>(d);
    std::shuffle(order.begin(), order.end(), rng);
    if (unit >= 0) std::iter_swap(order.begin(), std::find(order.begin(), order.end(), unit));
    int64_t stride = 1;
    for (int d : order) {  // innermost first
      v.shape[d] = shape[static_cast<size_t>(d)];
      v.strides[d] = shape[static_cast<size_t>(d)] == 1 && rng() % 2 ? 0 : stride;
      stride *= shape[static_cast<size_t>(d)] + static_cast<int64_t>(rng() % 3 == 0 ? rng() % 3 : 0);
    }
    memory.resize(static_cast<size_t>(stride) + 1);
    int64_t base = 0;
    for (int d = 0; d < v.ndim; ++d)
      if (rng() % 4 == 0 && v.shape[d] > 1 && d != unit) {  // walk this dimension backwards
        base += (v.shape[d] - 1) * v.strides[d];
        v.strides[d] = -v.strides[d];
      }
    std::uniform_real_distribution<double> value(-1, 1);
    for (T& x : memory) x = static_cast<T>(value(rng));
    v.data = reinterpret_cast<char*>(memory.data() + base);
  }
  T& at(const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (int d = 0; d < v.ndim; ++d) off += idx[static_cast<size_t>(d)] * v.strides[d];
    return reinterpret_cast<T*>(v.data)[off];
  }
};

// One of a few epilogues (a bias, a ReLU, a scale, max/min/fmin, a negation), one or two
// statements, each reading O and (some) E.
std::vector<std::vector<tc::backends::EpilogueOp>> random_epilogue(std::mt19937& rng) {
  using K = tc::backends::EpilogueOp::Kind;
  using Op = tc::backends::EpilogueOp;
  const std::vector<std::vector<Op>> kinds = {
      {{K::Out}, {K::Read, 0, 0}, {K::Add}},                                  // O + E
      {{K::Out}, {K::Const, 0}, {K::Fmax}},                                   // fmax(O, 0)
      {{K::Out}, {K::Const, -0.25}, {K::Max}},                                // max(O, -0.25)
      {{K::Const, 0.5}, {K::Out}, {K::Neg}, {K::Min}},                        // min(0.5, -O)
      {{K::Out}, {K::Const, 2}, {K::Div}, {K::Read, 0, 0}, {K::Mul}},        // O / 2 * E
      {{K::Read, 0, 0}, {K::Out}, {K::Sub}, {K::Const, 0.1}, {K::Fmin}},     // fmin(E - O, 0.1)
  };
  std::vector<std::vector<Op>> out{kinds[rng() % kinds.size()]};
  if (rng() % 2) out.push_back(kinds[rng() % kinds.size()]);
  return out;
}

// The epilogue in double: o the sum, e E's value at the element.
double epilogue_value(const std::vector<std::vector<tc::backends::EpilogueOp>>& epilogue, double o, double e) {
  using K = tc::backends::EpilogueOp::Kind;
  for (const auto& stmt : epilogue) {
    std::vector<double> st;
    for (const auto& op : stmt) {
      if (op.kind == K::Const) st.push_back(op.value);
      else if (op.kind == K::Out) st.push_back(o);
      else if (op.kind == K::Read) st.push_back(e);
      else if (op.kind == K::Neg) st.back() = -st.back();
      else {
        double x = st.back();
        st.pop_back();
        double y = st.back();
        st.back() = op.kind == K::Add ? y + x : op.kind == K::Sub ? y - x : op.kind == K::Mul ? y * x
                  : op.kind == K::Div ? y / x : op.kind == K::Fmax || op.kind == K::Max ? std::max(y, x) : std::min(y, x);
      }
    }
    o = st.back();
  }
  return o;
}

// Every index of the contraction runs over all its values: the plain loop, in double.
// `n_in_tiles` counts the contractions whose N was ordered in tiles.
template <typename T>
void expect_gett(std::mt19937& rng, ScalarType type, const std::string& isa, double tolerance, int& n_in_tiles) {
  Contraction c;
  c.type = type;
  c.a = 0, c.b = 1, c.o = 2;
  c.accumulate = rng() % 3 == 0;
  // One in six a long sum into a small result (no batch, up to 4 x 4 values per index of M
  // and N), which threads split along K: partial sums, then a reduction and the epilogue. Half
  // of those crossed: two indices of K, A's values along the second in memory, B's along the
  // first (8 or 16 of them): K is packed in tiles.
  // One in five of the others crossed along N: two indices of N, O's values along the first in
  // memory, B's along the second (16 to 55 of them: a micro-panel or more), few of M and K, so
  // that N is ordered in tiles where the panel fits.
  const bool long_sum = rng() % 6 == 0, crossed = long_sum && rng() % 2, crossed_n = !long_sum && rng() % 5 == 0;
  std::uniform_int_distribution<int> count(0, 2), extent(1, 13), short_extent(1, 4), long_extent(20, 70);
  int na = 0, nb = 0, no = 0;
  std::vector<int64_t> sa, sb, so;
  auto add = [&](std::vector<ContractionIndex>& g, bool o, bool a, bool b, const char* name) {
    ContractionIndex x;
    x.name = name + std::to_string(g.size());
    int64_t e = !long_sum ? extent(rng) : &g == &c.k ? long_extent(rng) : short_extent(rng);
    if (rng() % 8 == 0) e = 1;
    x.lo = rng() % 4 == 0 ? 1 : 0;  // a box that starts inside the tensor
    x.hi = x.lo + e;
    if (o) x.o = no++, so.push_back(x.hi + (rng() % 2));
    if (a) x.a = na++, sa.push_back(x.hi + (rng() % 2));
    if (b) x.b = nb++, sb.push_back(x.hi);
    g.push_back(x);
  };
  for (int i = long_sum || crossed_n ? 0 : count(rng); i > 0; --i) add(c.batch, true, true, true, "b");
  for (int i = crossed_n ? count(rng) % 2 : count(rng); i > 0; --i) add(c.m, true, true, false, "m");
  for (int i = crossed_n ? 2 : count(rng) + (rng() % 2); i > 0; --i) add(c.n, true, false, true, "n");
  for (int i = crossed ? 2 : long_sum || crossed_n ? 1 + count(rng) % 2 : count(rng); i > 0; --i) add(c.k, false, true, true, "k");
  if (crossed) {
    c.k[0].hi = c.k[0].lo + 8 * (1 + rng() % 2);
    sa[static_cast<size_t>(c.k[0].a)] = c.k[0].hi + (rng() % 2);
    sb[static_cast<size_t>(c.k[0].b)] = c.k[0].hi;
  }
  if (crossed_n) {
    c.n[0].hi = c.n[0].lo + 2 + rng() % 8;
    c.n[1].hi = c.n[1].lo + 16 + rng() % 40;
    so[static_cast<size_t>(c.n[0].o)] = c.n[0].hi + (rng() % 2);
    so[static_cast<size_t>(c.n[1].o)] = c.n[1].hi + (rng() % 2);
    sb[static_cast<size_t>(c.n[0].b)] = c.n[0].hi + (rng() % 2);
    sb[static_cast<size_t>(c.n[1].b)] = c.n[1].hi;
  }
  // The plain loop below takes every point of the whole box: keep it under 300k points (100k
  // for a long sum).
  for (;;) {
    ContractionIndex* widest = nullptr;
    double points = 1;
    for (auto* g : {&c.batch, &c.m, &c.n, &c.k})
      for (auto& x : *g) {
        points *= static_cast<double>(x.hi - x.lo);
        if (!widest || x.hi - x.lo > widest->hi - widest->lo) widest = &x;
      }
    if (points <= (long_sum ? 100000 : 300000)) break;
    widest->hi = widest->lo + (widest->hi - widest->lo + 1) / 2;  // its tensors' extents stay larger: padding
  }
  if (rng() % 20 == 0 && !c.k.empty()) c.k[0].hi = c.k[0].lo;  // an empty sum
  // Half of them with an epilogue reading E, a tensor over a random choice of O's indices.
  std::vector<int64_t> se;
  int ne = 0;
  if (rng() % 2) {
    c.epilogue = random_epilogue(rng);
    c.epilogue_reads = {3};
    for (auto* g : {&c.batch, &c.m, &c.n, &c.k})
      for (auto& x : *g) {
        bool in_e = g != &c.k && rng() % 2;
        x.e = {in_e ? ne++ : -1};
        if (in_e) se.push_back(x.hi + (rng() % 2));
      }
  }
  Operand<T> A(sa, rng, type, crossed ? c.k[1].a : -1), B(sb, rng, type, crossed ? c.k[0].b : crossed_n ? c.n[1].b : -1);
  Operand<T> O(so, rng, type, crossed_n ? c.n[0].o : -1), E(se, rng, type);
  for (auto& x : O.memory) x = T(7);  // outside the box: must stay 7
  std::vector<T> entry(O.memory);
  std::vector<ContractionIndex> all;
  for (auto* g : {&c.batch, &c.m, &c.n, &c.k}) all.insert(all.end(), g->begin(), g->end());
  // Random dimension orders: each tensor's dimensions are permuted by Operand; the indices
  // name dimensions positionally, so permute which index takes which dimension too.
  GettOptions options;
  options.isa = isa;
  options.mc = 2 * (1 + rng() % 3) * 16, options.kc = 1 + rng() % 9, options.nc = 32 * (1 + rng() % 2);
  int threads = 1 + static_cast<int>(rng() % 3);
  options.flops_per_thread = 1;  // contractions this small would otherwise run on one thread
  std::string what = std::string(crossed ? "crossed " : crossed_n ? "crossed along N, " : "") + (long_sum ? "long sum, " : "") + std::to_string(c.batch.size()) + "/" + std::to_string(c.m.size()) + "/" +
                     std::to_string(c.n.size()) + "/" + std::to_string(c.k.size()) + " indices, isa " + isa + " threads " + std::to_string(threads) + " blocks " +
                     std::to_string(options.mc) + "/" + std::to_string(options.kc) + "/" + std::to_string(options.nc);
  n_in_tiles += has(tc::backends::cpu::describe_layout(c, {A.v, B.v, O.v, E.v}, options), "%");
  tc::backends::cpu::run_gett(c, {A.v, B.v, O.v, E.v}, threads, options);
  // The plain loop over the box of O, each point summed over K.
  std::vector<int64_t> io(so.size()), ia(sa.size()), ib(sb.size()), ie(se.size());
  std::vector<int64_t> cur(all.size());
  size_t outer = c.batch.size() + c.m.size() + c.n.size();
  std::function<void(size_t)> over = [&](size_t q) {
    if (q == outer) {
      double sum = 0;
      std::function<void(size_t)> inner = [&](size_t r) {
        if (r == all.size()) {
          for (size_t i = 0; i < all.size(); ++i) {
            if (all[i].a >= 0) ia[static_cast<size_t>(all[i].a)] = cur[i];
            if (all[i].b >= 0) ib[static_cast<size_t>(all[i].b)] = cur[i];
          }
          sum += static_cast<double>(A.at(ia)) * static_cast<double>(B.at(ib));
          return;
        }
        for (cur[r] = all[r].lo; cur[r] < all[r].hi; ++cur[r]) inner(r + 1);
      };
      inner(outer);
      for (size_t i = 0; i < outer; ++i) io[static_cast<size_t>(all[i].o)] = cur[i];
      T& got = O.at(io);
      int64_t off = &got - O.memory.data();
      double want = sum + (c.accumulate ? static_cast<double>(entry[static_cast<size_t>(off)]) : 0.0);
      if (!c.epilogue.empty()) {
        for (size_t i = 0; i < outer; ++i)
          if (all[i].e[0] >= 0) ie[static_cast<size_t>(all[i].e[0])] = cur[i];
        want = epilogue_value(c.epilogue, want, static_cast<double>(E.at(ie)));
      }
      ASSERT_NEAR(static_cast<double>(got), want, tolerance * (1 + std::fabs(want))) << what;
      got = T(7);  // checked: back to the untouched value
      return;
    }
    for (cur[q] = all[q].lo; cur[q] < all[q].hi; ++cur[q]) over(q + 1);
  };
  over(0);
  for (size_t i = 0; i < O.memory.size(); ++i) ASSERT_EQ(O.memory[i], T(7)) << what << ": written outside the box";
}

std::vector<std::string> isas() {
  std::vector<std::string> out;
  for (const char* isa : {"avx512", "avx2", "scalar"})
    if (tc::backends::cpu::microkernel_for<float>(isa).run) out.push_back(isa);
  return out;
}

}  // namespace

#ifndef TC_RANDOM_CONTRACTIONS
#define TC_RANDOM_CONTRACTIONS 150  // per micro-kernel and type (tests/backends/CMakeLists.txt)
#endif

TEST(Contraction, GettEqualsThePlainLoopOnRandomContractions) {
  std::mt19937 rng(20261128);
  for (const std::string& isa : isas()) {
    int n_in_tiles = 0;
    for (int trial = 0; trial < TC_RANDOM_CONTRACTIONS; ++trial) {
      expect_gett<float>(rng, ScalarType::Float32, isa, 1e-4, n_in_tiles);
      expect_gett<double>(rng, ScalarType::Float64, isa, 1e-12, n_in_tiles);
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GE(n_in_tiles, TC_RANDOM_CONTRACTIONS / 30) << isa << ": too few contractions had N in tiles to test them";
  }
}

// Dense row-major views of `shapes` (no data: the layout reads strides only).
std::vector<TensorView> dense_views(const std::vector<Shape>& shapes) {
  std::vector<TensorView> views;
  for (const Shape& shape : shapes) views.push_back(tc::runtime::row_major_view(nullptr, {ScalarType::Float32, shape}));
  return views;
}

// The default blocks for 2 threads of a machine with a 32 KiB L1, a 512 KiB 8-way L2 and a 32 MiB
// L3, for the micro-kernel of `isa`.
GettOptions small_cache_blocks(const std::string& isa) {
  GettOptions blocks = tc::backends::cpu::default_blocking(ScalarType::Float32, {32 << 10, 512 << 10, 32 << 20, 8}, 2);
  blocks.isa = isa;
  return blocks;
}

// Runs `c` on 2 threads from x and y, filled here with small integers (every sum exact in
// float), into z: views 0, 1 and 2.
void run_on_small_integers(const Contraction& c, std::vector<TensorView>& views, std::vector<float>& x,
                           std::vector<float>& y, std::vector<float>& z, const GettOptions& blocks) {
  for (size_t q = 0; q < x.size(); ++q) x[q] = static_cast<float>(q % 7) - 3;
  for (size_t q = 0; q < y.size(); ++q) y[q] = static_cast<float>(q % 5) - 2;
  views[0].data = reinterpret_cast<char*>(x.data());
  views[1].data = reinterpret_cast<char*>(y.data());
  views[2].data = reinterpret_cast<char*>(z.data());
  tc::backends::cpu::run_gett(c, views, 2, blocks);
}

// N flattened along O where O's runs are shorter than a micro-panel: TCCG's ccsd_t0 term at its
// sizes but a (12 values, contiguous in O, under every ISA's panel: AVX2 16, AVX-512 32 columns)
// and i contiguous in X. Counted as gathers, such panels sent N to X's order, whose tiles store
// every value of O apart, on lines gone from cache before their next values come (18x slower);
// counted by the runs they cross, N follows O. A plain product keeps its natural orders.
TEST(Contraction, TheLayoutFollowsOsRunsShorterThanAPanel) {
  const char* t0 = "def t0(float(A,M,J,I) X, float(C,B,K,M) Y) -> (Z) { Z(k,j,i,c,b,a) +=! X(a,m,j,i) * Y(c,b,k,m) }";
  const std::vector<Shape> shapes = {{12, 24, 16, 24}, {16, 16, 16, 24}, {16, 16, 24, 16, 16, 12}};
  auto plan = plan_of(t0, {shapes[0], shapes[1]});
  ASSERT_TRUE(plan);
  GettOptions blocks = tc::backends::cpu::default_blocking(ScalarType::Float32, {32 << 10, 1 << 20, 32 << 20}, 2);
  EXPECT_EQ(tc::backends::cpu::describe_layout(plan->stages[0], dense_views(shapes), blocks), "M c b k; N j i a; K m");
  auto mm = plan_of("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {{8, 9}, {9, 10}});
  ASSERT_TRUE(mm);
  EXPECT_EQ(tc::backends::cpu::describe_layout(mm->stages[0], dense_views({{8, 9}, {9, 10}, {8, 10}}), blocks),
            "M i; N j; K k");
}

// N in tiles where B's and O's rows run along different indices of N: TCCG's intensli2 term
// (O's a contiguous, B's c), whose O was written a value per cache line along B's order, each
// line gone from cache before its next value came (1.09-1.13x NumPy's time). The tiles are a
// micro-panel wide.
TEST(Contraction, NIsOrderedInTilesWhereBsAndOsRowsCross) {
  const char* t = "def t(float(A,K,B,C) X, float(J,K) Y) -> (Z) { Z(c,j,b,a) +=! X(a,k,b,c) * Y(j,k) }";
  const std::vector<Shape> shapes = {{72, 72, 72, 72}, {24, 72}, {72, 24, 72, 72}};
  auto plan = plan_of(t, {shapes[0], shapes[1]});
  ASSERT_TRUE(plan);
  GettOptions blocks = tc::backends::cpu::default_blocking(ScalarType::Float32, {32 << 10, 1 << 20, 32 << 20}, 2);
  const std::string nr = std::to_string(tc::backends::cpu::host_microkernel<float>().nr);
  EXPECT_EQ(tc::backends::cpu::describe_layout(plan->stages[0], dense_views(shapes), blocks),
            "M j; N b c/" + nr + " a c%" + nr + "; K k");
  // intensli0: along B's rows, the lines of O written between two values of one (24 x 312 of
  // them) stay in L2: N follows B.
  auto i0 = plan_of("def t(float(A,K,B) X, float(J,K) Y) -> (Z) { Z(j,b,a) +=! X(a,k,b) * Y(j,k) }",
                    {{312, 312, 312}, {24, 312}});
  ASSERT_TRUE(i0);
  EXPECT_EQ(tc::backends::cpu::describe_layout(i0->stages[0], dense_views({{312, 312, 312}, {24, 312}, {24, 312, 312}}), blocks),
            "M j; N a b; K k");
}

// Calls f(isa, nr) for each float micro-kernel this CPU runs ("avx2", "avx512"): a layout's
// panels are as wide as the kernel's NR.
template <typename F>
void for_each_float_kernel(F f) {
  for (const char* isa : {"avx2", "avx512"}) {
    const tc::backends::cpu::MicroKernel<float> uk = tc::backends::cpu::microkernel_for<float>(isa);
    if (uk.run) f(std::string(isa), std::to_string(uk.nr));
  }
}

// intensli5: O's index a is B's rows 192 KiB apart, a multiple of the span of an L2 set. On 2
// MiB pages a panel gathered along a puts its rows into one or two sets: in a 512 KiB L2 of 8 or
// 4 ways (sets spanning 64 or 128 KiB) more lines than a set has ways, gone before the panels
// after it (B's d next) read them: N in tiles instead. In a 2 MiB L2 of 16 ways AVX-512's 32 rows
// put 16 into each of two sets, which hold them, and the gathered order stays, as it does where
// a d of 47 moves the rows apart. O's tiles of d (23 x 32 x 47 x 32 values apart) spread.
TEST(Contraction, NIsOrderedInTilesWhereAGatheredPanelsRowsShareL2Sets) {
  const char* t = "def t(float(C,A,B,K,D) X, float(K,J) Y) -> (Z) { Z(d,c,j,b,a) +=! X(c,a,b,k,d) * Y(k,j) }";
  for_each_float_kernel([&](const std::string& isa, const std::string& nr) {
    for (int64_t d : {48, 47}) {
      const std::vector<Shape> shapes = {{32, 47, 32, 32, d}, {32, 23}, {d, 32, 23, 32, 47}};
      auto plan = plan_of(t, {shapes[0], shapes[1]});
      ASSERT_TRUE(plan);
      for (auto [l2, ways] : {std::pair<int64_t, int64_t>{512 << 10, 8}, {512 << 10, 4}, {2 << 20, 16}}) {
        if (ways == 16 && isa != "avx512") continue;  // Sapphire Rapids' L2, with AVX-512
        GettOptions blocks = tc::backends::cpu::default_blocking(ScalarType::Float32, {32 << 10, l2, 32 << 20, ways}, 2);
        blocks.isa = isa;
        EXPECT_EQ(blocks.l2_set_span, l2 / ways);
        const bool crowded = d == 48 && ways < 16;
        EXPECT_EQ(tc::backends::cpu::describe_layout(plan->stages[0], dense_views(shapes), blocks),
                  crowded ? "M j; N c b d/" + nr + " a d%" + nr + "; K k" : "M j; N c b d a; K k")
            << isa << ", d " << d << ", L2 " << l2 << ", " << ways << " ways";
      }
    }
  });
}

// O written a value at a time in tiles of c (B's rows), whose values lie 64 KiB apart in O: the
// lines a block of M writes between two values of one line fit in L2 but crowd into one of its
// sets (64 KiB span), so N is not tiled; with a = 31 they spread and it is. With a = 32, B's
// rows (a) crowd one set too, so a panel gathered along O's order reads a line per value: N
// follows O with B's c second, and B's blocks are packed by lines (each line read once).
TEST(Contraction, NIsNotTiledWhereTheLinesOfOBetweenTwoValuesShareL2Sets) {
  const char* t = "def t(float(A,K,D,B,C) X, float(J,K) Y) -> (Z) { Z(c,j,b,d,a) +=! X(a,k,d,b,c) * Y(j,k) }";
  for_each_float_kernel([&](const std::string& isa, const std::string& nr) {
    for (int64_t a : {32, 31}) {
      const std::vector<Shape> shapes = {{a, 8, 8, 8, 32}, {8, 8}, {32, 8, 8, 8, a}};
      auto plan = plan_of(t, {shapes[0], shapes[1]});
      ASSERT_TRUE(plan);
      GettOptions blocks = small_cache_blocks(isa);
      EXPECT_EQ(tc::backends::cpu::describe_layout(plan->stages[0], dense_views(shapes), blocks),
                a == 32 ? "M j; N b d c a by lines; K k" : "M j; N b d c/" + nr + " a c%" + nr + "; K k")
          << isa << ", a " << a;
    }
  });
}

// B's blocks packed by lines give the product: the layout above (B's rows crowding an L2 set),
// blocks of a few panels, so each thread packs several; exact sums of small integers.
TEST(Contraction, BlocksPackedByLinesGiveTheProduct) {
  const char* t = "def t(float(A,K,D,B,C) X, float(J,K) Y) -> (Z) { Z(c,j,b,d,a) +=! X(a,k,d,b,c) * Y(j,k) }";
  const int64_t A = 32, K = 8, D = 8, B = 8, C = 32, J = 8;
  const std::vector<Shape> shapes = {{A, K, D, B, C}, {J, K}, {C, J, B, D, A}};
  for_each_float_kernel([&](const std::string& isa, const std::string&) {
    auto plan = plan_of(t, {shapes[0], shapes[1]});
    ASSERT_TRUE(plan);
    GettOptions blocks = small_cache_blocks(isa);
    blocks.nc = 3 * tc::backends::cpu::microkernel_for<float>(isa).nr;
    std::vector<TensorView> views = dense_views(shapes);
    ASSERT_EQ(tc::backends::cpu::describe_layout(plan->stages[0], views, blocks), "M j; N b d c a by lines; K k") << isa;
    std::vector<float> x(static_cast<size_t>(A * K * D * B * C)), y(static_cast<size_t>(J * K));
    std::vector<float> z(static_cast<size_t>(C * J * B * D * A), -1.f);
    run_on_small_integers(plan->stages[0], views, x, y, z, blocks);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < J; ++j)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t d = 0; d < D; ++d)
            for (int64_t a = 0; a < A; ++a) {
              float want = 0;
              for (int64_t k = 0; k < K; ++k)
                want += x[static_cast<size_t>((((a * K + k) * D + d) * B + b) * C + c)] * y[static_cast<size_t>(j * K + k)];
              ASSERT_EQ(z[static_cast<size_t>((((c * J + j) * B + b) * D + d) * A + a)], want)
                  << isa << ": Z(" << c << "," << j << "," << b << "," << d << "," << a << ")";
            }
  });
}

// Whole-row panels packed a step at a time (pack_rows_by_steps): Z(r,j,k) from X(i,j,k), whose
// N values (j,k) follow one another in memory, N of three panels and a short one (AVX-512's 32
// columns: 105 = 3 x 32 + 9; AVX2's 16: 6 x 16 + 9), K past the steps fetched ahead, in two
// blocks of K and of N: every value of the product, exact on small integers.
TEST(Contraction, WholeRowPanelsPackedStepByStepGiveTheProduct) {
  const char* t = "def t(float(I,J,K) X, float(I,R) Y) -> (Z) { Z(r,j,k) +=! X(i,j,k) * Y(i,r) }";
  const int64_t I = 300, J = 5, K = 21, R = 13;
  const std::vector<Shape> shapes = {{I, J, K}, {I, R}, {R, J, K}};
  for_each_float_kernel([&](const std::string& isa, const std::string&) {
    auto plan = plan_of(t, {shapes[0], shapes[1]});
    ASSERT_TRUE(plan);
    GettOptions blocks = small_cache_blocks(isa);
    blocks.kc = 160;
    blocks.nc = 2 * tc::backends::cpu::microkernel_for<float>(isa).nr;
    std::vector<TensorView> views = dense_views(shapes);
    ASSERT_EQ(tc::backends::cpu::describe_layout(plan->stages[0], views, blocks), "M r; N j k; K i") << isa;
    std::vector<float> x(static_cast<size_t>(I * J * K)), y(static_cast<size_t>(I * R));
    std::vector<float> z(static_cast<size_t>(R * J * K), -1.f);
    run_on_small_integers(plan->stages[0], views, x, y, z, blocks);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t n = 0; n < J * K; ++n) {
        float want = 0;
        for (int64_t i = 0; i < I; ++i) want += x[static_cast<size_t>(i * J * K + n)] * y[static_cast<size_t>(i * R + r)];
        ASSERT_EQ(z[static_cast<size_t>(r * J * K + n)], want) << isa << ": Z(" << r << ", " << n / K << ", " << n % K << ")";
      }
  });
}

// Panels that cross from one of B's runs into the next, K not along them (pack_panel copies each
// stretch of a panel's rows a step at a time): Z(r,j,i) from X(j,k,i), N = (j,i) with 40 values of
// i, so that AVX-512's panels of 32 take i's last 8 of one j and the first 24 of the next (AVX2's
// of 16: 8 and 8), X's rows of j 37 x 40 values apart: every value of the product, exact on small
// integers.
TEST(Contraction, PanelsAcrossRunsCopyTheirStretchesOfRows) {
  const char* t = "def t(float(J,K,I) X, float(K,R) Y) -> (Z) { Z(r,j,i) +=! X(j,k,i) * Y(k,r) }";
  const int64_t J = 5, K = 37, I = 40, R = 13;
  const std::vector<Shape> shapes = {{J, K, I}, {K, R}, {R, J, I}};
  for_each_float_kernel([&](const std::string& isa, const std::string&) {
    auto plan = plan_of(t, {shapes[0], shapes[1]});
    ASSERT_TRUE(plan);
    GettOptions blocks = small_cache_blocks(isa);
    std::vector<TensorView> views = dense_views(shapes);
    ASSERT_EQ(tc::backends::cpu::describe_layout(plan->stages[0], views, blocks), "M r; N j i; K k") << isa;
    std::vector<float> x(static_cast<size_t>(J * K * I)), y(static_cast<size_t>(K * R));
    std::vector<float> z(static_cast<size_t>(R * J * I), -1.f);
    run_on_small_integers(plan->stages[0], views, x, y, z, blocks);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0; j < J; ++j)
        for (int64_t i = 0; i < I; ++i) {
          float want = 0;
          for (int64_t k = 0; k < K; ++k)
            want += x[static_cast<size_t>((j * K + k) * I + i)] * y[static_cast<size_t>(k * R + r)];
          ASSERT_EQ(z[static_cast<size_t>((r * J + j) * I + i)], want) << isa << ": Z(" << r << "," << j << "," << i << ")";
        }
  });
}

// The packing by lines against its definition: rows in no order (some twice: a broadcast), a
// short last panel padded with zeros over stale values.
TEST(Contraction, PackingByLinesEqualsTheDefinition) {
  std::mt19937 rng(7);
  std::vector<double> src(4096);
  for (size_t q = 0; q < src.size(); ++q) src[q] = static_cast<double>(q) + 1;
  for (int width : {16, 32})
    for (int64_t count : {int64_t{45}, int64_t{64}, int64_t{3}}) {
      const int64_t kb = 7;
      std::vector<int64_t> lines(static_cast<size_t>(count)), ko(static_cast<size_t>(kb));
      for (auto& l : lines) l = static_cast<int64_t>(rng() % 3000);
      if (count > 2) lines[2] = lines[0];
      for (int64_t k = 0; k < kb; ++k) ko[static_cast<size_t>(k)] = k * 131;
      const int64_t panels = (count + width - 1) / width;
      std::vector<double> dst(static_cast<size_t>(panels * width * kb), -7.0);
      tc::backends::cpu::pack_block_by_lines(src.data(), lines.data(), ko.data(), dst.data(), count, kb, width);
      for (int64_t r = 0; r < panels * width; ++r)
        for (int64_t k = 0; k < kb; ++k) {
          const double want = r < count ? src[static_cast<size_t>(ko[static_cast<size_t>(k)] + lines[static_cast<size_t>(r)])] : 0.0;
          ASSERT_EQ(dst[static_cast<size_t>(r / width * width * kb + k * width + r % width)], want)
              << "width " << width << ", count " << count << ", row " << r << ", step " << k;
        }
    }
}

TEST(Contraction, DefaultBlocksFitTheCaches) {
  for (ScalarType t : {ScalarType::Float32, ScalarType::Float64}) {
    GettOptions b = tc::backends::cpu::default_blocking(t, {32 << 10, 512 << 10, 32 << 20}, 2);
    int64_t sz = t == ScalarType::Float64 ? 8 : 4;
    auto uk_nr = t == ScalarType::Float64 ? tc::backends::cpu::host_microkernel<double>().nr
                                          : tc::backends::cpu::host_microkernel<float>().nr;
    auto lanes = t == ScalarType::Float64 ? tc::backends::cpu::host_microkernel<double>().lanes
                                          : tc::backends::cpu::host_microkernel<float>().lanes;
    // K blocks: a B micro-panel in half of L1, or 32 steps per lane where that is longer
    EXPECT_EQ(b.kc, std::min<int64_t>(std::max<int64_t>((16 << 10) / (uk_nr * sz), 32 * lanes) / 8 * 8, 1024));
    EXPECT_LE(b.kc * b.nc * sz, 256 << 10);  // the B block in half of L2
    EXPECT_GT(b.kc * b.nc * sz, 128 << 10);
    // each thread's A block in half its share of L3, the share at most 8 MiB: a VM lists its
    // host's whole L3 (260 MiB), and a small L3 is shared out between the threads
    for (int64_t l3 : {int64_t{32} << 20, int64_t{260} << 20}) {
      GettOptions c = tc::backends::cpu::default_blocking(t, {32 << 10, 512 << 10, l3}, 2);
      EXPECT_LE(c.mc * c.kc * sz, 4 << 20) << l3;
      EXPECT_GT(c.mc * c.kc * sz, 3 << 20) << l3;
    }
    GettOptions small = tc::backends::cpu::default_blocking(t, {32 << 10, 512 << 10, 4 << 20}, 2);
    EXPECT_LE(small.mc * small.kc * sz, 1 << 20);
    EXPECT_GT(small.mc * small.kc * sz, (1 << 20) - 16 * small.kc * sz);
    EXPECT_GE(b.kc, 64);
    EXPECT_TRUE(has(tc::backends::cpu::describe_gett(t, b), "micro-kernel ")) << tc::backends::cpu::describe_gett(t, b);
  }
}

// The transposing packs (a row of an operand per panel column, K along the rows) against the
// definition, for every panel width the kernels use and widths whose last group of runs fills
// less or more than half a register (3, 11: a group of half a register or less is transposed
// two steps to a register), K steps below, at and past the 8 (4) a transpose takes, runs at any
// alignment, and runs spread every step-th row of the panel (the rows between untouched).
template <typename T>
void expect_transposing_pack(const tc::backends::cpu::MicroKernel<T>& uk) {
  for (int width : {uk.mr, uk.nr, 3, 11})
    for (int64_t kc : {1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 32, 33, 64})
      for (int step : {1, 3, 8}) {
        std::vector<T> memory(static_cast<size_t>(width * (kc + 5) + 3));
        for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<T>(i) + T(0.5);
        std::vector<const T*> src(static_cast<size_t>(width));
        for (int c = 0; c < width; ++c) src[static_cast<size_t>(c)] = memory.data() + 1 + ((c * 7) % width) * (kc + 5);
        const int64_t rows = (kc - 1) * step + 1;
        std::vector<T> dst(static_cast<size_t>(width * rows + 8), T(-1));
        uk.pack_transposed(dst.data(), src.data(), width, kc, step);
        std::string what = std::string(uk.isa) + " width " + std::to_string(width) + " kc " + std::to_string(kc) +
                           " step " + std::to_string(step);
        for (int64_t r = 0; r < rows; ++r)
          for (int c = 0; c < width; ++c) {
            T want = r % step == 0 ? src[static_cast<size_t>(c)][r / step] : T(-1);
            ASSERT_EQ(dst[static_cast<size_t>(r * width + c)], want) << what << " row " << r << " c " << c;
          }
        for (size_t i = static_cast<size_t>(width * rows); i < dst.size(); ++i)
          ASSERT_EQ(dst[i], T(-1)) << what << ": written past the panel";
      }
}

TEST(Contraction, TransposingPacksEqualTheDefinition) {
  int tried = 0;
  for (const std::string& isa : isas()) {
    auto f = tc::backends::cpu::microkernel_for<float>(isa);
    auto d = tc::backends::cpu::microkernel_for<double>(isa);
    if (f.pack_transposed) expect_transposing_pack(f), ++tried;
    if (d.pack_transposed) expect_transposing_pack(d), ++tried;
  }
  if (tried == 0) GTEST_SKIP() << "no micro-kernel of this CPU has a transposing pack";
}

// A sum split along K between threads covers every step of K: shares of K / threads rounded to
// the K unit (8), the last what remains. Rounded down, 2 threads over K = 129 took 64 steps
// each and left the last product out (and 3 over 2210 the last two).
// A kernel's calls keep their layouts by the operands' strides: calls with A row-major, A
// column-major (the other order of M and K), then row-major again each give the product, two
// layouts kept; a kernel called with more stride sets than kMost keeps the last kMost.
TEST(Contraction, ALayoutIsKeptByTheStridesItWasChosenFor) {
  const int64_t M = 37, K = 29, N = 41;
  ProgramPtr program = build("def mm(double(M,K) A, double(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }");
  Inputs in;
  in.add(ScalarType::Float64, {M, K});
  in.add(ScalarType::Float64, {K, N});
  tc::ir::BoundDef bound = bind_def(program, in);
  std::optional<ContractionPlan> plan = tc::backends::plan_contraction(bound);
  ASSERT_TRUE(plan);
  GettOptions options = tc::backends::cpu::default_blocking(ScalarType::Float64, {32 << 10, 1 << 20, 32 << 20}, 2);
  options.mc = 12, options.kc = 8, options.nc = 16;  // several trips of every loop
  std::vector<double> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N)), c(static_cast<size_t>(M * N));
  for (size_t q = 0; q < a.size(); ++q) a[q] = static_cast<double>(q % 7) + 1;
  for (size_t q = 0; q < b.size(); ++q) b[q] = static_cast<double>(q % 5) + 1;
  auto view = [](std::vector<double>& memory, int64_t rows, int64_t cols, bool column_major) {
    TensorView v = tc::runtime::row_major_view(reinterpret_cast<char*>(memory.data()), {ScalarType::Float64, {rows, cols}});
    if (column_major) v.strides[0] = 1, v.strides[1] = rows;
    return v;
  };
  tc::backends::cpu::GettLayouts layouts;
  for (bool column_major : {false, true, false}) {
    std::fill(c.begin(), c.end(), -1.0);
    tc::backends::cpu::run_contraction_plan(*plan, bound, {view(a, M, K, column_major), view(b, K, N, false)},
                                            {view(c, M, N, false)}, 2, options, &layouts);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double want = 0;  // small integers: exact in any order
        for (int64_t k = 0; k < K; ++k)
          want += a[static_cast<size_t>(column_major ? k * M + i : i * K + k)] * b[static_cast<size_t>(k * N + j)];
        ASSERT_EQ(c[static_cast<size_t>(i * N + j)], want) << (column_major ? "A column-major" : "A row-major")
                                                          << ", C(" << i << "," << j << ")";
      }
  }
  EXPECT_EQ(layouts.size(), 2u);
  for (int64_t pad = 1; pad <= static_cast<int64_t>(tc::backends::cpu::GettLayouts::kMost) + 4; ++pad) {
    std::vector<double> wide(static_cast<size_t>(M * (K + pad)), 1.0);
    TensorView v = view(wide, M, K, false);
    v.strides[0] = K + pad;  // rows `pad` apart: a stride set of its own
    tc::backends::cpu::run_contraction_plan(*plan, bound, {v, view(b, K, N, false)}, {view(c, M, N, false)}, 2, options,
                                            &layouts);
    double want = 0;
    for (int64_t k = 0; k < K; ++k) want += b[static_cast<size_t>(k * N)];
    ASSERT_EQ(c[0], want) << "pad " << pad;
  }
  EXPECT_EQ(layouts.size(), tc::backends::cpu::GettLayouts::kMost);
}

TEST(Contraction, ASumSplitAlongKCoversEveryStep) {
  for (int threads : {2, 3, 4})
    for (int64_t K : {int64_t{129}, int64_t{2210}, int64_t{1001}}) {
      Contraction c;
      c.type = ScalarType::Float64;
      c.a = 0, c.b = 1, c.o = 2;
      auto index = [](const char* name, int64_t hi, int o, int a, int b) {
        ContractionIndex x;
        x.name = name, x.lo = 0, x.hi = hi, x.o = o, x.a = a, x.b = b;
        return x;
      };
      c.m = {index("i", 2, 0, 0, -1)};
      c.n = {index("j", 2, 1, -1, 1)};
      c.k = {index("k", K, -1, 1, 0)};
      std::vector<double> a(static_cast<size_t>(2 * K)), b(static_cast<size_t>(K * 2)), o(4, 7.0);
      for (size_t q = 0; q < a.size(); ++q) a[q] = static_cast<double>(q % 7) + 1;
      for (size_t q = 0; q < b.size(); ++q) b[q] = static_cast<double>(q % 5) + 1;
      auto view = [](std::vector<double>& memory, int64_t rows, int64_t cols) {
        return tc::runtime::row_major_view(reinterpret_cast<char*>(memory.data()), {ScalarType::Float64, {rows, cols}});
      };
      GettOptions options = tc::backends::cpu::default_blocking(ScalarType::Float64, {32 << 10, 1 << 20, 32 << 20}, threads);
      options.flops_per_thread = 1;
      tc::backends::cpu::run_gett(c, {view(a, 2, K), view(b, K, 2), view(o, 2, 2)}, threads, options);
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          double want = 0;  // small integers: exact in any order
          for (int64_t k = 0; k < K; ++k) want += a[static_cast<size_t>(i * K + k)] * b[static_cast<size_t>(k * 2 + j)];
          EXPECT_EQ(o[static_cast<size_t>(i * 2 + j)], want) << threads << " threads, K " << K << ", O(" << i << "," << j << ")";
        }
    }
}
