// gemm_text.cpp — the contraction route's CUDA C (gemm.h): per contraction, one kernel of a
// block tile, its shared-memory pipeline, its register tile and its epilogue.
#include <algorithm>
#include <functional>

#include "backends/cuda/contraction/gemm.h"
#include "backends/cuda/print/printer.h"
#include "runtime/tensor_view.h"
#include "support/error.h"

namespace tc::backends::cuda {

using print::c_type;
using print::float_literal;
using print::param;

namespace {

// What the route's kernels use besides the prelude: the copies into shared memory (cp.async
// on sm_80 and later, where the copy runs while the block computes; a plain copy elsewhere,
// the emulation included, where the waits have nothing to wait for), unrolling for NVRTC only.
constexpr const char* kGemmHelpers = R"(// the contraction route's helpers (libtc: src/backends/cuda/contraction/gemm_text.cpp)
#ifdef __CUDA_ARCH__
#define TC_UNROLL _Pragma("unroll")
#else
#define TC_UNROLL
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// One element (4 or 8 bytes), or zeros where !in (nothing is read then).
template <typename T> TC_DEVICE void tc_copy_1(T* dst, const T* base, long long at, bool in) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(in ? base + at : base), "n"(sizeof(T)),
               "r"(in ? (int)sizeof(T) : 0));
}
// 16 bytes from a 16-byte aligned address, or zeros where !in.
template <typename T> TC_DEVICE void tc_copy_16(T* dst, const T* base, long long at, bool in) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(in ? base + at : base), "r"(in ? 16 : 0));
}
#define tc_copy_commit() asm volatile("cp.async.commit_group;\n" ::)
// cp.async copies 4 bytes or more: 2-byte elements one by one, by plain loads and stores
#define tc_copy_plain(dst, base, at, in) (*(dst) = (in) ? (base)[at] : 0)
#define tc_copy_wait(n) asm volatile("cp.async.wait_group %0;\n" ::"n"(n))
#else
// Macros, so that each copy is an access of its own call site (the profile groups a warp's
// accesses by site), and 16 bytes one access.
struct alignas(16) tc_bytes16 { unsigned long long low, high; };
#define tc_copy_1(dst, base, at, in) (*(dst) = (in) ? (base)[at] : 0)
#define tc_copy_16(dst, base, at, in) \
  (*(tc_bytes16*)(dst) = (in) ? *(const tc_bytes16*)((base) + (at)) : tc_bytes16{0, 0})
#define tc_copy_plain(dst, base, at, in) tc_copy_1(dst, base, at, in)
#define tc_copy_commit()
#define tc_copy_wait(n)
#endif
)";

// Tensor cores for float16 and bfloat16 (sm_80 and later): mma.sync's m16n8k16 shape, a warp's
// fragments of A (16 x 16, row-major), B (16 x 8, column-major) and its float sums (16 x 8)
// spread over its lanes as the PTX ISA lays them out; for float32 as TF32 (cuda.tf32), the
// m16n8k8 shape, each value rounded to TF32 (cvt.rna: 10 bits of mantissa, ties away from
// zero) on its way to a fragment. Elsewhere (the emulation) the same instruction lane by lane:
// each lane puts its fragments in the warp's exchange area in shared memory, then computes its
// own sums from the whole, so the emulation checks the fragments' layout the GPU relies on.
constexpr const char* kMmaHelpers = R"(// the contraction route's tensor cores (libtc: src/backends/cuda/contraction/gemm_text.cpp)
// A fragment register's two halves from an operand tile laid out [step][row] (steps k, k + 1)
TC_DEVICE unsigned tc_pair(unsigned short low, unsigned short high) { return (unsigned)low | ((unsigned)high << 16); }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TC_MMA_SHAPE "mma.sync.aligned.m16n8k16.row.col.f32."
#define TC_MMA_ARGS "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n" \
  : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])
TC_DEVICE void tc_mma_f16(float& c0, float& c1, float& c2, float& c3, const unsigned* a, const unsigned* b) {
  asm volatile(TC_MMA_SHAPE "f16.f16.f32 " TC_MMA_ARGS);
}
TC_DEVICE void tc_mma_bf16(float& c0, float& c1, float& c2, float& c3, const unsigned* a, const unsigned* b) {
  asm volatile(TC_MMA_SHAPE "bf16.bf16.f32 " TC_MMA_ARGS);
}
TC_DEVICE void tc_mma_tf32(float& c0, float& c1, float& c2, float& c3, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 " TC_MMA_ARGS);
}
TC_DEVICE unsigned tc_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
#define TC_MMA(kind, c0, c1, c2, c3, a, b) tc_mma_##kind(c0, c1, c2, c3, a, b)
#else
#define TC_MMA_EXCHANGE
TC_DEVICE unsigned tc_tf32(float x) {  // to nearest, ties away from zero; inf and NaN as they are
  union { float f; unsigned u; } v;
  v.f = x;
  return (v.u & 0x7f800000u) == 0x7f800000u ? v.u : (v.u + 0x1000u) & 0xffffe000u;
}
TC_DEVICE float tc_tf32_value(unsigned bits) {
  union { unsigned u; float f; } v;
  v.u = bits;
  return v.f;
}
TC_DEVICE void tc_mma_lanes_tf32(float& c0, float& c1, float& c2, float& c3, const unsigned* a, const unsigned* b,
                                 float* x) {
  const unsigned lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  float* A = x;        // 16 x 8, (m, k)
  float* B = x + 128;  // 8 x 8, (n, k)
  A[g * 8 + t] = tc_tf32_value(a[0]);
  A[(g + 8) * 8 + t] = tc_tf32_value(a[1]);
  A[g * 8 + t + 4] = tc_tf32_value(a[2]);
  A[(g + 8) * 8 + t + 4] = tc_tf32_value(a[3]);
  B[g * 8 + t] = tc_tf32_value(b[0]);
  B[g * 8 + t + 4] = tc_tf32_value(b[1]);
  __syncwarp();
  float* c[4] = {&c0, &c1, &c2, &c3};
  for (int e = 0; e < 4; ++e) {
    const unsigned row = g + (e >= 2 ? 8 : 0), col = 2 * t + (e & 1);
    float sum = *c[e];
    for (int k = 0; k < 8; ++k) sum = fmaf(A[row * 8 + k], B[col * 8 + k], sum);
    *c[e] = sum;
  }
  __syncwarp();
}
TC_DEVICE float tc_mma_value(int bf, unsigned pair, int high) {
  unsigned short h = (unsigned short)(high ? pair >> 16 : pair & 0xffffu);
  return bf ? tc_b2f(h) : tc_h2f(h);
}
TC_DEVICE void tc_mma_lanes(int bf, float& c0, float& c1, float& c2, float& c3, const unsigned* a, const unsigned* b,
                            float* x) {
  const unsigned lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  float* A = x;        // 16 x 16, (m, k)
  float* B = x + 256;  // 8 x 16, (n, k)
  for (int h = 0; h < 2; ++h) {
    A[g * 16 + 2 * t + h] = tc_mma_value(bf, a[0], h);
    A[(g + 8) * 16 + 2 * t + h] = tc_mma_value(bf, a[1], h);
    A[g * 16 + 2 * t + 8 + h] = tc_mma_value(bf, a[2], h);
    A[(g + 8) * 16 + 2 * t + 8 + h] = tc_mma_value(bf, a[3], h);
    B[g * 16 + 2 * t + h] = tc_mma_value(bf, b[0], h);
    B[g * 16 + 2 * t + 8 + h] = tc_mma_value(bf, b[1], h);
  }
  __syncwarp();
  float* c[4] = {&c0, &c1, &c2, &c3};
  for (int e = 0; e < 4; ++e) {
    const unsigned row = g + (e >= 2 ? 8 : 0), col = 2 * t + (e & 1);
    float sum = *c[e];
    for (int k = 0; k < 16; ++k) sum = fmaf(A[row * 16 + k], B[col * 16 + k], sum);
    *c[e] = sum;
  }
  __syncwarp();
}
#define tc_mma_lanes_f16(c0, c1, c2, c3, a, b, x) tc_mma_lanes(0, c0, c1, c2, c3, a, b, x)
#define tc_mma_lanes_bf16(c0, c1, c2, c3, a, b, x) tc_mma_lanes(1, c0, c1, c2, c3, a, b, x)
#define TC_MMA(kind, c0, c1, c2, c3, a, b) \
  tc_mma_lanes_##kind(c0, c1, c2, c3, a, b, tc_mma_exchange[threadIdx.x / 32])
#endif
)";

constexpr int64_t kVectorBytes = 16;
constexpr int64_t kSumThreads = 256;  // a split sum's second launch: threads a block

std::string pad(int depth) { return std::string(2 * static_cast<size_t>(depth), ' '); }
std::string num(int64_t v) { return std::to_string(v); }

// The distance between consecutive entries of dimension d of a dense row-major tensor.
int64_t stride(const std::vector<int64_t>& shape, int d) { return runtime::dense_strides(shape)[static_cast<size_t>(d)]; }

// The distance in a tensor between consecutive values of an index (0: the index is not in it).
using StepOf = std::function<int64_t(const ContractionIndex&)>;

// The steps in a tensor of shape `shape` whose dimension for an index is `dim`'s, the index's
// coefficient there `scale`'s (1 where null).
StepOf steps_in(const std::vector<int64_t>& shape, int ContractionIndex::*dim, int64_t ContractionIndex::*scale = nullptr) {
  return [&shape, dim, scale](const ContractionIndex& x) -> int64_t {
    if (x.*dim < 0) return 0;
    return (scale ? x.*scale : 1) * stride(shape, x.*dim);
  };
}

// The offset in a tensor of the entry group `g`'s flat index `flat` stands for (flat = the
// group's indices as one number, the first outermost), as C: each index's value (its range's
// start plus its digit) times its step in the tensor.
std::string group_offset(const std::vector<ContractionIndex>& g, const StepOf& step, const std::string& flat) {
  std::string out;
  int64_t inner = 1;
  for (size_t i = g.size(); i-- > 0;) {
    const ContractionIndex& x = g[i];
    int64_t s = step(x);
    int64_t n = std::max<int64_t>(x.extent(), 1);
    if (s != 0) {
      std::string digit = inner == 1 ? flat : "(" + flat + ") / " + num(inner);
      if (i > 0) digit = "(" + digit + ") % " + num(n);
      std::string value = x.lo == 0 ? "(" + digit + ")" : "(" + digit + " + " + num(x.lo) + ")";
      out += (out.empty() ? "" : " + ") + (s == 1 ? value : value + " * " + num(s));
    }
    inner *= n;
  }
  return out.empty() ? "0" : out;
}

// The offset of an operand's subscripts' constant terms (a convolution's padding-free h + kh
// has none; h + kh + 1 would).
int64_t shift_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& shift) {
  int64_t out = 0;
  for (size_t d = 0; d < shift.size(); ++d) out += shift[d] * stride(shape, static_cast<int>(d));
  return out;
}

// How a block's threads copy one operand's tile (rows of its M or N group by bk steps of K)
// into shared memory, laid out [step][row]: the thread-to-element map follows the operand's
// contiguous index, so that a warp reads adjacent addresses.
struct TileCopy {
  enum class Order { RowsFast, StepsFast } order = Order::StepsFast;
  // The tile in shared memory: [step][row], or on tensor cores where steps are copied fast
  // [row][step] (a fragment register's two halves side by side).
  bool k_major = false;
  // Elements per copy: 16 bytes' worth where the copied-fast index is contiguous in the operand
  // and whole runs stay inside it, aligned (along the rows; on tensor cores along K too).
  int64_t run = 1;
  int64_t units = 0, per_thread = 0;
};

// The operand's tile copy: rows fast where the group's innermost index is its contiguous one,
// else steps fast (K's innermost index contiguous, or the smaller stride of the two); runs of
// 16 bytes along the index copied fast where it is contiguous, alone in its dimension (not a
// convolution's kw beside w), and its runs stay whole and 16-byte aligned, tile and tensor.
// Without `mma` (the SIMT kernel's [step][row] tiles) only along the rows.
TileCopy plan_copy(const Contraction& c, const std::vector<ContractionIndex>& rows, const std::vector<int64_t>& shape,
                   int ContractionIndex::*dim, const StepOf& step, const std::vector<int64_t>& shift, int64_t tile_rows,
                   const GemmTile& tile, int64_t element_bytes, bool mma) {
  auto inner_step = [&](const std::vector<ContractionIndex>& g) -> int64_t {
    int64_t s = g.empty() ? 0 : step(g.back());
    return s == 0 ? INT64_MAX : s;
  };
  int64_t rs = inner_step(rows), ks = inner_step(c.k);
  TileCopy copy;
  copy.order = ks != 1 && (rs == 1 || rs < ks) ? TileCopy::Order::RowsFast : TileCopy::Order::StepsFast;
  copy.k_major = mma && copy.order == TileCopy::Order::StepsFast;
  const int64_t v = kVectorBytes / element_bytes;
  auto runs_fit = [&](const ContractionIndex& x, int64_t tile_extent) {
    int d = x.*dim;
    bool alone = true;
    for (const auto* g : {&c.batch, &c.m, &c.n, &c.k})
      for (const ContractionIndex& y : *g) alone = alone && (&y == &x || y.*dim != d);
    int64_t at = static_cast<size_t>(d) < shift.size() ? shift[static_cast<size_t>(d)] : 0;
    return alone && tile_extent % v == 0 && x.extent() % v == 0 && (x.lo + at) % v == 0 &&
           shape[static_cast<size_t>(d)] % v == 0;
  };
  if (copy.order == TileCopy::Order::RowsFast && rs == 1 && runs_fit(rows.back(), tile_rows))
    copy.run = v;
  if (copy.k_major && ks == 1 && runs_fit(c.k.back(), tile.bk)) copy.run = v;
  copy.units = tile_rows * tile.bk / copy.run;
  copy.per_thread = (copy.units + tile.threads() - 1) / tile.threads();
  return copy;
}

// The text of one contraction's kernel.
class GemmKernelText {
 public:
  // `scratch`: the kernels' last parameter, the split sums' buffer ("" where no contraction of
  // the text splits).
  GemmKernelText(const ir::BoundDef& bound, const Contraction& c, const GemmShape& gemm, const GemmOptions& options,
                 std::string name, std::string scratch)
      : b_(bound), c_(c), t_(gemm.tile), o_(options), name_(std::move(name)), scratch_(std::move(scratch)),
        split_(gemm.split), stages_(gemm.stages), blocks_per_sm_(gemm.blocks_per_sm) {
    GemmMath math(c.type, options.tf32 && options.fma);
    mma_ = math.tensor_cores();
    tf32_ = math.tf32;
    type_ = c_type(c.type);  // float for float16 and bfloat16: the sums
    element_bytes_ = c.type == ScalarType::Float64 ? 8 : is_float16_like(c.type) ? 2 : 4;
    v_ = kVectorBytes / element_bytes_;
    // One 16-byte run: rows stay 16-byte aligned, and a step's rows (a fragment's rows on tensor
    // cores) shift by 4 banks: conflict-free.
    pad_ = v_;
    int64_t largest = 0;
    for (const auto& t : bound.tensors) largest = std::max(largest, t.num_elements());
    idx_ = largest <= (int64_t{1} << 30) ? "int" : "long long";
    batch_ = extent(c.batch);
    m_ = extent(c.m);
    n_ = extent(c.n);
    k_ = extent(c.k);
    tx_ = t_.bn / t_.tn;
    ty_ = t_.bm / t_.tm;
    ra_ = mma_ ? 1 : std::min(t_.tm, v_);
    rb_ = mma_ ? 1 : std::min(t_.tn, v_);
    step_a_ = steps_in(shape(c.a), &ContractionIndex::a, &ContractionIndex::a_scale);
    step_b_ = steps_in(shape(c.b), &ContractionIndex::b, &ContractionIndex::b_scale);
    step_o_ = steps_in(shape(c.o), &ContractionIndex::o);
    copy_a_ = plan_copy(c, c.m, shape(c.a), &ContractionIndex::a, step_a_, c.a_shift, t_.bm, t_, element_bytes_, mma_);
    copy_b_ = plan_copy(c, c.n, shape(c.b), &ContractionIndex::b, step_b_, c.b_shift, t_.bn, t_, element_bytes_, mma_);
  }

  // The kernels' parameters: the def's tensors, the fault record, the scratch buffer if any.
  std::string params() const {
    return print::kernel_parameters(b_.def()) + (scratch_.empty() ? "" : ", " + scratch_ + " __restrict__ tc_scratch");
  }

  std::string text() const {
    std::string out;
    const std::string params = this->params();
    out += "// " + c_.describe(b_.def()) + "; tile " + t_.text() + ", " + num(stages_) + " stages, " +
           num(t_.threads()) + " threads" + (split_ > 1 ? ", the sum in " + num(split_) + " parts" : "") + "\n";
    out += "extern \"C\" __global__ void " +
           (blocks_per_sm_ > 0 ? "__launch_bounds__(" + num(t_.threads()) + ", " + num(blocks_per_sm_) + ") " : "") +
           name_ + "(" + params + ") {\n";
    if (mma_) {
      std::string bits = print::storage_type(c_.type);
      auto layout = [](const TileCopy& copy) { return copy.k_major ? "[stage][row][step]" : "[stage][step][row]"; };
      out += pad(1) + "alignas(16) __shared__ " + bits + " tc_shared_a[" + num(stages_ * buffer_a()) + "];  // " +
             layout(copy_a_) + "\n";
      out += pad(1) + "alignas(16) __shared__ " + bits + " tc_shared_b[" + num(stages_ * buffer_b()) + "];  // " +
             layout(copy_b_) + "\n";
      out += "#ifdef TC_MMA_EXCHANGE\n" + pad(1) + "__shared__ float tc_mma_exchange[" + num(t_.threads() / 32) +
             "][384];  // the emulation's mma: a warp's fragments\n#endif\n";
      out += pad(1) + "const int tc_tid = threadIdx.x, tc_lane = tc_tid % 32, tc_g = tc_lane / 4, tc_t = tc_lane % 4;\n";
      out += pad(1) + "const int tc_wm = tc_tid / 32 / " + num(warps_n()) + ", tc_wn = tc_tid / 32 % " + num(warps_n()) +
             ";  // the warp's " + num(warp_m()) + " x " + num(warp_n()) + " of the tile\n";
    } else {
      out += pad(1) + "alignas(16) __shared__ " + type_ + " tc_shared_a[" + num(stages_ * buffer_a()) +
             "];  // [stage][step][row]\n";
      out += pad(1) + "alignas(16) __shared__ " + type_ + " tc_shared_b[" + num(stages_ * buffer_b()) + "];\n";
      out += pad(1) + "const int tc_tid = threadIdx.x, tc_tx = tc_tid % " + num(tx_) + ", tc_ty = tc_tid / " + num(tx_) + ";\n";
    }
    out += pad(1) + "const bool tc_a_16 = (unsigned long long)" + param(tensor(c_.a)) + " % 16 == 0, tc_b_16 = " +
           "(unsigned long long)" + param(tensor(c_.b)) + " % 16 == 0, tc_o_16 = (unsigned long long)" +
           param(tensor(c_.o)) + " % 16 == 0;\n";
    // Along z: the batch entries, each split into its parts of the sum.
    out += pad(1) + "for (" + idx_ + " tc_zs = blockIdx.z; tc_zs < " + num(batch_ * split_) + "; tc_zs += gridDim.z)\n";
    out += pad(1) + "for (" + idx_ + " tc_tile_m = blockIdx.y; tc_tile_m < " + num(tiles_m()) + "; tc_tile_m += gridDim.y)\n";
    out += pad(1) + "for (" + idx_ + " tc_tile_n = blockIdx.x; tc_tile_n < " + num(tiles_n()) +
           "; tc_tile_n += gridDim.x) {\n";
    out += pad(2) + "const " + idx_ + " tc_z = tc_zs / " + num(split_) + ";\n";
    out += pad(2) + "const int tc_part = tc_zs % " + num(split_) + ";  // of the sum: its steps tc_kt0 to tc_kt1\n";
    const int64_t ktiles = (k_ + t_.bk - 1) / t_.bk, per = (ktiles + split_ - 1) / split_;
    out += pad(2) + "const int tc_kt0 = tc_part * " + num(per) + ", tc_kt1 = tc_kt0 + " + num(per) + " < " + num(ktiles) +
           " ? tc_kt0 + " + num(per) + " : " + num(ktiles) + ";\n";
    body(out, 2);
    out += pad(1) + "}\n}\n\n";
    return out;
  }

  LaunchDims dims() const {
    LaunchDims d;
    d.grid = {static_cast<unsigned>(std::clamp<int64_t>(tiles_n(), 1, 2147483647)),
              static_cast<unsigned>(std::clamp<int64_t>(tiles_m(), 1, 65535)),
              static_cast<unsigned>(std::clamp<int64_t>(batch_ * split_, 1, 65535))};
    d.block = {static_cast<unsigned>(t_.threads()), 1, 1};
    return d;
  }

  // The split sum's second launch: one thread an entry of O, grid-strided.
  std::string sum_text(const std::string& name) const {
    const int64_t total = batch_ * m_ * n_, mn = std::max<int64_t>(m_ * n_, 1), n = std::max<int64_t>(n_, 1);
    std::string out = "// the " + num(split_) + " parts of " + name_ + "'s sums added in order, then its epilogue\n";
    out += "extern \"C\" __global__ void " + name + "(" + params() + ") {\n";
    const std::string f = scratch_index();
    out += pad(1) + "for (" + f + " tc_f = (" + f + ")blockIdx.x * blockDim.x + threadIdx.x; tc_f < " + num(total) +
           "; tc_f += (" + f + ")gridDim.x * blockDim.x) {\n";
    out += pad(2) + "const " + idx_ + " tc_z = tc_f / " + num(mn) + ", tc_row = tc_f / " + num(n) + " % " +
           num(std::max<int64_t>(m_, 1)) + ", tc_col = tc_f % " + num(n) + ";\n";
    std::string at = entry_offset(step_o_, "tc_row", "tc_col");
    out += pad(2) + type_ + " tc_v = " +
           (c_.accumulate ? loaded(param(tensor(c_.o)) + "[" + at + "]") : float_literal(0, sum_type())) + ";\n";
    out += pad(2) + "const " + type_ + "* tc_p = tc_scratch + tc_f;\n";
    out += pad(2) + "for (int tc_part = 0; tc_part < " + num(split_) + "; ++tc_part, tc_p += " + num(total) +
           ") tc_v = tc_v + *tc_p;\n";
    out += pad(2) + param(tensor(c_.o)) + "[" + at + "] = " + stored(finished("tc_v", "tc_row", "tc_col")) + ";\n";
    out += pad(1) + "}\n}\n\n";
    return out;
  }

  LaunchDims sum_dims() const {
    LaunchDims d;
    int64_t blocks = (batch_ * m_ * n_ + kSumThreads - 1) / kSumThreads;
    d.grid = {static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 2147483647)), 1, 1};
    d.block = {static_cast<unsigned>(kSumThreads), 1, 1};
    return d;
  }

  Launch sum_launch(const std::string& name) const {
    Launch l;
    l.kernel = name;
    l.grid_axes = 1;
    l.block_axes = 1;
    l.tiles = {static_cast<int64_t>(sum_dims().grid[0]), 0, 0};
    l.threads = {kSumThreads, 0, 0};
    return l;
  }

  int64_t split() const { return split_; }
  // The type of an index into the scratch buffer: 32 bits where every one fits (and a grid-strided
  // loop's last step past the end too).
  std::string scratch_index() const { return split_ * batch_ * m_ * n_ <= (int64_t{1} << 30) ? "int" : "long long"; }
  // The scratch buffer's bytes: each part's sums of every entry of O.
  int64_t scratch_bytes() const { return split_ > 1 ? split_ * batch_ * m_ * n_ * (element_bytes_ == 8 ? 8 : 4) : 0; }

  Launch launch() const {
    Launch l;
    l.kernel = name_;
    l.grid_axes = 3;
    l.block_axes = 1;
    l.tiles = {tiles_n(), tiles_m(), batch_ * split_};
    l.synchronises = true;
    l.threads = {t_.threads(), 0, 0};
    return l;
  }

 private:
  const ir::Tensor& tensor(int t) const { return b_.def().tensors[static_cast<size_t>(t)]; }
  const std::vector<int64_t>& shape(int t) const { return b_.tensors[static_cast<size_t>(t)].shape; }
  // A stage's buffer: bk steps of a tile's rows, [step][row] with each step's rows padded by 16
  // bytes, or [row][step] with each row's steps padded so.
  int64_t buffer(const TileCopy& copy, int64_t rows) const {
    return copy.k_major ? rows * (t_.bk + pad_) : t_.bk * (rows + pad_);
  }
  int64_t buffer_a() const { return buffer(copy_a_, t_.bm); }
  int64_t buffer_b() const { return buffer(copy_b_, t_.bn); }
  // Tensor cores: a warp's outputs (tm / 2 x tn / 2 mma tiles of 16 x 8), and the warps along N.
  int64_t warp_m() const { return 8 * t_.tm; }
  int64_t warp_n() const { return 4 * t_.tn; }
  int64_t warps_n() const { return t_.bn / warp_n(); }
  int64_t tiles_m() const { return (m_ + t_.bm - 1) / t_.bm; }
  int64_t tiles_n() const { return (n_ + t_.bn - 1) / t_.bn; }

  // The block's tile: the operands' rows each thread copies, the accumulators, the pipeline,
  // then the epilogue and the stores.
  void body(std::string& out, int d) const {
    out += pad(d) + "const " + idx_ + " tc_m0 = tc_tile_m * " + num(t_.bm) + ", tc_n0 = tc_tile_n * " + num(t_.bn) + ";\n";
    auto shifted = [](int64_t at) { return at == 0 ? std::string() : " + " + num(at); };
    out += pad(d) + "const " + idx_ + " tc_a_z = " + group_offset(c_.batch, step_a_, "tc_z") +
           shifted(shift_offset(shape(c_.a), c_.a_shift)) + ", tc_b_z = " + group_offset(c_.batch, step_b_, "tc_z") +
           shifted(shift_offset(shape(c_.b), c_.b_shift)) + ";\n";
    copy_rows('a', copy_a_, c_.m, step_a_, t_.bm, m_, out, d);
    copy_rows('b', copy_b_, c_.n, step_b_, t_.bn, n_, out, d);
    out += pad(d) + type_ + " tc_acc[" + num(t_.tm) + "][" + num(t_.tn) + "];\n";
    initial_values(out, d);
    out += pad(d) + "// the pipeline: " + num(stages_ - 1) + " steps in flight while the block computes one\n";
    out += pad(d) + "for (int tc_s = 0; tc_s < " + num(stages_ - 1) + "; ++tc_s) {\n";
    out += pad(d + 1) + "if (tc_kt0 + tc_s < tc_kt1) {\n";
    copy_step("tc_s", "tc_kt0 + tc_s", out, d + 2);
    out += pad(d + 1) + "}\n";
    out += pad(d + 1) + "tc_copy_commit();\n";
    out += pad(d) + "}\n";
    out += pad(d) + "int tc_read = 0, tc_write = " + num(stages_ - 1) + ";  // the stages computed on and copied into\n";
    out += pad(d) + "for (int tc_kt = tc_kt0; tc_kt < tc_kt1; ++tc_kt) {\n";
    out += pad(d + 1) + "tc_copy_wait(" + num(stages_ - 2) + ");\n";
    out += pad(d + 1) + "__syncthreads();  // step tc_kt is in shared memory; step tc_kt - 1's buffer is free\n";
    out += pad(d + 1) + "if (tc_kt + " + num(stages_ - 1) + " < tc_kt1) {\n";
    copy_step("tc_write", "tc_kt + " + num(stages_ - 1), out, d + 2);
    out += pad(d + 1) + "}\n";
    out += pad(d + 1) + "tc_copy_commit();\n";
    if (mma_) mma_step(out, d + 1);
    else multiply_step(out, d + 1);
    std::string last = num(stages_ - 1);
    out += pad(d + 1) + "tc_read = tc_read == " + last + " ? 0 : tc_read + 1;\n";
    out += pad(d + 1) + "tc_write = tc_write == " + last + " ? 0 : tc_write + 1;\n";
    out += pad(d) + "}\n";
    out += pad(d) + "tc_copy_wait(0);\n";
    out += pad(d) + "__syncthreads();  // the buffers are free for the next tile\n";
    epilogue(out, d);
  }

  // Per copy unit of this thread: its row of the tile (and whether it is inside the operand), its
  // step, its row's offset in the operand.
  void copy_rows(char x, const TileCopy& copy, const std::vector<ContractionIndex>& rows, const StepOf& step,
                 int64_t tile_rows, int64_t total_rows, std::string& out, int d) const {
    std::string p = std::string("tc_") + x + "_";
    std::string start = x == 'a' ? "tc_m0" : "tc_n0";
    for (int64_t l = 0; l < copy.per_thread; ++l) {
      std::string u = "(tc_tid + " + num(l * t_.threads()) + ")", row, k;
      int64_t row_units = tile_rows / copy.run;
      if (copy.order == TileCopy::Order::RowsFast) {
        row = num(copy.run) + " * (" + u + " % " + num(row_units) + ")";
        k = u + " / " + num(row_units);
      } else {
        int64_t step_units = t_.bk / copy.run;  // runs along K (tensor cores' [row][step] tiles)
        row = u + " / " + num(step_units);
        k = copy.run == 1 ? u + " % " + num(t_.bk) : num(copy.run) + " * (" + u + " % " + num(step_units) + ")";
      }
      std::string L = num(l);
      std::string dst = copy.k_major ? p + "row" + L + " * " + num(t_.bk + pad_) + " + " + p + "step" + L
                                     : p + "step" + L + " * " + num(tile_rows + pad_) + " + " + p + "row" + L;
      out += pad(d) + "const int " + p + "row" + L + " = " + row + ", " + p + "step" + L + " = " + k + ", " + p + "dst" +
             L + " = " + dst + ";\n";
      std::string has = copy.units % t_.threads() == 0 ? "true" : u + " < " + num(copy.units);
      out += pad(d) + "const bool " + p + "has" + L + " = " + has + ";\n";
      // Where the tiles divide the operand's rows, every row of every tile is inside: no test
      // (nor its predicate register, nor its select in each copy's address).
      const std::string in = total_rows % tile_rows == 0 ? "true" : start + " + " + p + "row" + L + " < " + num(total_rows);
      out += pad(d) + "const bool " + p + "in" + L + " = " + in + ";\n";
      out += pad(d) + "const " + idx_ + " " + p + "at" + L + " = " + p + "z + (" + p + "in" + L + " ? " +
             group_offset(rows, step, start + " + " + p + "row" + L) + " : 0);\n";
    }
  }

  // The copies of K's step `kt` (bk values) of both operands into buffer `slot`.
  void copy_step(const std::string& slot, const std::string& kt, std::string& out, int d) const {
    out += pad(d) + "const int tc_slot_copy = " + slot + ";\n";
    copy_operand('a', copy_a_, step_a_, tensor(c_.a), kt, out, d);
    copy_operand('b', copy_b_, step_b_, tensor(c_.b), kt, out, d);
  }

  void copy_operand(char x, const TileCopy& copy, const StepOf& step, const ir::Tensor& t, const std::string& kt,
                    std::string& out, int d) const {
    std::string p = std::string("tc_") + x + "_";
    for (int64_t l = 0; l < copy.per_thread; ++l) {
      std::string L = num(l);
      std::string k = "(" + kt + ") * " + num(t_.bk) + " + " + p + "step" + L;
      out += pad(d) + "if (" + p + "has" + L + ") {\n";
      out += pad(d + 1) + "const " + idx_ + " tc_k = " + k + ";\n";
      // K a multiple of bk: every step of every stage is inside
      out += pad(d + 1) + "const bool tc_in = " + p + "in" + L + (k_ % t_.bk == 0 ? "" : " && tc_k < " + num(k_)) + ";\n";
      out += pad(d + 1) + "const " + idx_ + " tc_at = " + p + "at" + L + " + (tc_in ? " +
             group_offset(c_.k, step, "tc_k") + " : 0);\n";
      std::string dst = "tc_shared_" + std::string(1, x) + " + (tc_slot_copy * " +
                        num(x == 'a' ? buffer_a() : buffer_b()) + " + " + p + "dst" + L + ")";
      const std::string one = element_bytes_ == 2 ? "tc_copy_plain(" : "tc_copy_1(";
      if (copy.run > 1) {
        out += pad(d + 1) + "if (" + p + "16) {\n";
        out += pad(d + 2) + "tc_copy_16(" + dst + ", " + param(t) + ", tc_at, tc_in);\n";
        out += pad(d + 1) + "} else {\n";
        out += pad(d + 2) + "for (int tc_e = 0; tc_e < " + num(copy.run) + "; ++tc_e) " + one + dst + " + tc_e, " +
               param(t) + ", tc_at + tc_e, tc_in);\n";
        out += pad(d + 1) + "}\n";
      } else {
        out += pad(d + 1) + one + dst + ", " + param(t) + ", tc_at, tc_in);\n";
      }
      out += pad(d) + "}\n";
    }
  }

  // The row (column) of the tile a thread's i-th value along M (N) is at: runs of up to 16
  // bytes, a run per thread, the threads' runs side by side.
  std::string tile_row(int64_t i) const {
    return num((i / ra_) * (ty_ * ra_) + i % ra_) + " + tc_ty * " + num(ra_);
  }
  std::string tile_col(int64_t j) const {
    return num((j / rb_) * (tx_ * rb_) + j % rb_) + " + tc_tx * " + num(rb_);
  }

  std::string vector_type(int64_t run) const {
    if (run == 1) return type_;
    return (element_bytes_ == 8 ? "double" : "float") + num(run);
  }

  // A run of `run` values of buffer `array` (rows of `rows` values) at [tc_read][tc_kk][at]
  // into `dst`[first...].
  std::string shared_run(const std::string& array, int64_t rows, const std::string& at, int64_t run,
                         const std::string& dst, int64_t first) const {
    std::string src = array + "[tc_read * " + num(t_.bk * (rows + pad_)) + " + tc_kk * " + num(rows + pad_) + " + " + at + "]";
    if (run == 1) return dst + "[" + num(first) + "] = " + src + ";";
    static const char* kLanes[] = {"x", "y", "z", "w"};
    std::string out = "{ const " + vector_type(run) + " tc_v = *(const " + vector_type(run) + "*)&" + src + ";";
    for (int64_t e = 0; e < run; ++e) out += " " + dst + "[" + num(first + e) + "] = tc_v." + kLanes[e] + ";";
    return out + " }";
  }

  // bk steps of the sum on the buffer of step tc_kt: each a row of A's tile and a column of B's
  // read into registers (128-bit shared loads), then tm x tn multiply-adds.
  void multiply_step(std::string& out, int d) const {
    out += pad(d) + "TC_UNROLL\n";
    out += pad(d) + "for (int tc_kk = 0; tc_kk < " + num(t_.bk) + "; ++tc_kk) {\n";
    out += pad(d + 1) + type_ + " tc_a[" + num(t_.tm) + "], tc_b[" + num(t_.tn) + "];\n";
    for (int64_t i = 0; i < t_.tm; i += ra_) out += pad(d + 1) + shared_run("tc_shared_a", t_.bm, tile_row(i), ra_, "tc_a", i) + "\n";
    for (int64_t j = 0; j < t_.tn; j += rb_) out += pad(d + 1) + shared_run("tc_shared_b", t_.bn, tile_col(j), rb_, "tc_b", j) + "\n";
    out += pad(d + 1) + "TC_UNROLL\n";
    out += pad(d + 1) + "for (int tc_i = 0; tc_i < " + num(t_.tm) + "; ++tc_i) {\n";
    out += pad(d + 2) + "TC_UNROLL\n";
    out += pad(d + 2) + "for (int tc_j = 0; tc_j < " + num(t_.tn) + "; ++tc_j) {\n";
    if (o_.statement_marks) out += pad(d + 3) + "TC_STATEMENT();\n";
    std::string acc = "tc_acc[tc_i][tc_j]";
    std::string update = o_.fma ? std::string(c_.type == ScalarType::Float32 ? "fmaf(" : "fma(") + "tc_a[tc_i], tc_b[tc_j], " + acc + ")"
                                : "tc_add(" + acc + ", tc_mul(tc_a[tc_i], tc_b[tc_j]))";
    out += pad(d + 3) + acc + " = " + update + ";\n";
    out += pad(d + 2) + "}\n" + pad(d + 1) + "}\n" + pad(d) + "}\n";
  }

  // The thread's M row (N column) of the output for its i-th (j-th) value; with tensor cores,
  // where the mma's sums lie: tc_acc[2 mi + e / 2][2 ni + e % 2] is sum e of the warp's mma tile
  // (mi, ni), at row g (+ 8 for e >= 2), column 2 t + e % 2 of it.
  std::string out_row(int64_t i) const {
    if (mma_) return "tc_m0 + " + num((i / 2) * 16 + (i % 2) * 8) + " + tc_wm * " + num(warp_m()) + " + tc_g";
    return "tc_m0 + " + tile_row(i);
  }
  std::string out_col(int64_t j) const {
    if (mma_) return "tc_n0 + " + num((j / 2) * 8 + j % 2) + " + tc_wn * " + num(warp_n()) + " + 2 * tc_t";
    return "tc_n0 + " + tile_col(j);
  }

  // The steps of stage tc_read on tensor cores, 16 (float16, bfloat16) or 8 (TF32) at a time: the
  // warp's fragments of A (tm / 2 of 16 rows) and B (tn / 2 of 8 columns), read as pairs of
  // halves or as TF32 values, then tm / 2 x tn / 2 mma.
  void mma_step(std::string& out, int d) const {
    const std::string kind = tf32_ ? "tf32" : c_.type == ScalarType::BFloat16 ? "bf16" : "f16";
    const int64_t kstep = tf32_ ? 8 : 16, mi = t_.tm / 2, ni = t_.tn / 2;
    // Fragment register e's value at (row r, step k): a pair of halves (k, k + 1), or one float.
    auto value = [&](const std::string& array, const TileCopy& copy, int64_t rows, int64_t buf, const std::string& r,
                     const std::string& k) {
      auto at = [&](const std::string& step) {
        std::string offset = copy.k_major ? "(" + r + ") * " + num(t_.bk + pad_) + " + " + step
                                          : "(" + step + ") * " + num(rows + pad_) + " + " + r;
        return array + "[tc_read * " + num(buf) + " + " + offset + "]";
      };
      if (tf32_) return "tc_tf32(" + at(k) + ")";
      if (copy.k_major) return "*(const unsigned*)&" + at(k);
      return "tc_pair(" + at(k) + ", " + at(k + " + 1") + ")";
    };
    auto a = [&](const std::string& r, const std::string& k) { return value("tc_shared_a", copy_a_, t_.bm, buffer_a(), r, k); };
    auto b = [&](const std::string& r, const std::string& k) { return value("tc_shared_b", copy_b_, t_.bn, buffer_b(), r, k); };
    const std::string t = tf32_ ? "tc_kk + tc_t" : "tc_kk + 2 * tc_t", far = tf32_ ? " + 4" : " + 8";
    out += pad(d) + "TC_UNROLL\n";
    out += pad(d) + "for (int tc_kk = 0; tc_kk < " + num(t_.bk) + "; tc_kk += " + num(kstep) + ") {\n";
    out += pad(d + 1) + "unsigned tc_fa[" + num(mi) + "][4], tc_fb[" + num(ni) + "][2];\n";
    out += pad(d + 1) + "TC_UNROLL\n" + pad(d + 1) + "for (int tc_i = 0; tc_i < " + num(mi) + "; ++tc_i) {\n";
    out += pad(d + 2) + "const int tc_r = tc_wm * " + num(warp_m()) + " + tc_i * 16 + tc_g;\n";
    out += pad(d + 2) + "tc_fa[tc_i][0] = " + a("tc_r", t) + ";\n";
    out += pad(d + 2) + "tc_fa[tc_i][1] = " + a("tc_r + 8", t) + ";\n";
    out += pad(d + 2) + "tc_fa[tc_i][2] = " + a("tc_r", t + far) + ";\n";
    out += pad(d + 2) + "tc_fa[tc_i][3] = " + a("tc_r + 8", t + far) + ";\n";
    out += pad(d + 1) + "}\n";
    out += pad(d + 1) + "TC_UNROLL\n" + pad(d + 1) + "for (int tc_j = 0; tc_j < " + num(ni) + "; ++tc_j) {\n";
    out += pad(d + 2) + "const int tc_c = tc_wn * " + num(warp_n()) + " + tc_j * 8 + tc_g;\n";
    out += pad(d + 2) + "tc_fb[tc_j][0] = " + b("tc_c", t) + ";\n";
    out += pad(d + 2) + "tc_fb[tc_j][1] = " + b("tc_c", t + far) + ";\n";
    out += pad(d + 1) + "}\n";
    out += pad(d + 1) + "TC_UNROLL\n" + pad(d + 1) + "for (int tc_i = 0; tc_i < " + num(mi) + "; ++tc_i)\n";
    out += pad(d + 2) + "TC_UNROLL\n" + pad(d + 2) + "for (int tc_j = 0; tc_j < " + num(ni) + "; ++tc_j) {\n";
    if (o_.statement_marks) out += pad(d + 3) + "TC_STATEMENT();\n";
    out += pad(d + 3) + "TC_MMA(" + kind + ", tc_acc[2 * tc_i][2 * tc_j], tc_acc[2 * tc_i][2 * tc_j + 1], " +
           "tc_acc[2 * tc_i + 1][2 * tc_j], tc_acc[2 * tc_i + 1][2 * tc_j + 1], tc_fa[tc_i], tc_fb[tc_j]);\n";
    out += pad(d + 2) + "}\n";
    out += pad(d) + "}\n";
  }

  // An entry's stored form (float16 and bfloat16 as their bits), and a stored entry's value.
  std::string stored(const std::string& value) const { return print::stored(value, c_.type); }
  std::string loaded(const std::string& element) const { return print::load_as(element, c_.type); }

  // The offset, in a tensor whose steps are `step`, of the output entry (tc_z, m, n).
  std::string entry_offset(const StepOf& step, const std::string& m, const std::string& n) const {
    return group_offset(c_.batch, step, "tc_z") + " + " + group_offset(c_.m, step, m) + " + " + group_offset(c_.n, step, n);
  }

  // The sums start at 0, or at O's entries where the contraction adds to them (`+=`).
  void initial_values(std::string& out, int d) const {
    if (!c_.accumulate || split_ > 1) {  // split: the second launch starts from O's entries
      out += pad(d) + "for (int tc_i = 0; tc_i < " + num(t_.tm) + "; ++tc_i)\n";
      out += pad(d + 1) + "for (int tc_j = 0; tc_j < " + num(t_.tn) + "; ++tc_j) tc_acc[tc_i][tc_j] = " +
             float_literal(0, sum_type()) + ";\n";
      return;
    }
    for (int64_t i = 0; i < t_.tm; ++i)
      for (int64_t j = 0; j < t_.tn; ++j) {
        std::string m = "(" + out_row(i) + ")", n = "(" + out_col(j) + ")";
        out += pad(d) + "tc_acc[" + num(i) + "][" + num(j) + "] = " + m + " < " + num(m_) + " && " + n + " < " + num(n_) +
               " ? " + loaded(param(tensor(c_.o)) + "[" + entry_offset(step_o_, m, n) + "]") + " : " +
               float_literal(0, sum_type()) + ";\n";
      }
  }

  // Entry (m, n)'s final value: its sum through the epilogue's statements, as C.
  std::string finished(const std::string& sum, const std::string& m, const std::string& n) const {
    std::string value = sum;
    const bool single = c_.type == ScalarType::Float32;
    for (const std::vector<EpilogueOp>& ops : c_.epilogue) {
      std::vector<std::string> stack;
      auto pop = [&] {
        std::string top = stack.back();
        stack.pop_back();
        return top;
      };
      for (const EpilogueOp& op : ops) {
        using K = EpilogueOp::Kind;
        if (op.kind == K::Const) {
          stack.push_back(float_literal(op.value, c_.type));
        } else if (op.kind == K::Out) {
          stack.push_back(value);
        } else if (op.kind == K::Read) {
          int t = c_.epilogue_reads[static_cast<size_t>(op.read)];
          size_t entry = static_cast<size_t>(op.read);
          const std::vector<int64_t>& shp = shape(t);
          StepOf step = [entry, &shp](const ContractionIndex& x) -> int64_t {
            return x.e[entry] < 0 ? 0 : stride(shp, x.e[entry]);
          };
          stack.push_back(param(tensor(t)) + "[" + entry_offset(step, m, n) + "]");
        } else if (op.kind == K::Neg) {
          stack.push_back("tc_neg(" + pop() + ")");
        } else {
          std::string rhs = pop(), lhs = pop();
          const char* f = op.kind == K::Add   ? "tc_add"
                          : op.kind == K::Sub ? "tc_sub"
                          : op.kind == K::Mul ? "tc_mul"
                          : op.kind == K::Div ? "tc_div"
                          : op.kind == K::Max ? "tc_max"
                          : op.kind == K::Min ? "tc_min"
                          : op.kind == K::Fmax ? (single ? "fmaxf" : "fmax")
                                               : (single ? "fminf" : "fmin");
          stack.push_back(std::string(f) + "(" + lhs + ", " + rhs + ")");
        }
      }
      value = stack.back();
    }
    return value;
  }

  // Each of the thread's entries inside O, through the epilogue, stored: a run of 16 bytes
  // along O's contiguous N index at once where the run is whole and aligned.
  void epilogue(std::string& out, int d) const {
    if (split_ > 1) return partial_sums(out, d);
    const ir::Tensor& o = tensor(c_.o);
    bool runs = rb_ == v_ && vector_runs_of_o();
    for (int64_t i = 0; i < t_.tm; ++i) {
      std::string m = "tc_row" + num(i);
      out += pad(d) + "const " + idx_ + " " + m + " = " + out_row(i) + ";\n";
      out += pad(d) + "if (" + m + " < " + num(m_) + ") {\n";
      for (int64_t j = 0; j < t_.tn; j += rb_) {
        out += pad(d + 1) + "{\n";
        for (int64_t e = 0; e < rb_; ++e)
          out += pad(d + 2) + "const " + idx_ + " tc_col" + num(e) + " = " + out_col(j + e) + ";\n";
        if (runs) {
          out += pad(d + 2) + "if (tc_o_16 && tc_col0 < " + num(n_) + ") {  // a whole run (N's extent is a multiple of it)\n";
          out += pad(d + 3) + vector_type(rb_) + " tc_v;\n";
          static const char* kLanes[] = {"x", "y", "z", "w"};
          for (int64_t e = 0; e < rb_; ++e)
            out += pad(d + 3) + "tc_v." + kLanes[e] + " = " +
                   finished("tc_acc[" + num(i) + "][" + num(j + e) + "]", m, "tc_col" + num(e)) + ";\n";
          out += pad(d + 3) + "*(" + vector_type(rb_) + "*)&" + param(o) + "[" + entry_offset(step_o_, m, "tc_col0") +
                 "] = tc_v;\n";
          out += pad(d + 2) + "} else {\n";
          scalar_stores(i, j, m, out, d + 3);
          out += pad(d + 2) + "}\n";
        } else {
          scalar_stores(i, j, m, out, d + 2);
        }
        out += pad(d + 1) + "}\n";
      }
      out += pad(d) + "}\n";
    }
  }

  // A part of a split sum: the thread's sums inside O into the scratch buffer (part, batch entry,
  // row, column: dense), for the second launch.
  void partial_sums(std::string& out, int d) const {
    const std::string f = scratch_index();
    out += pad(d) + type_ + "* tc_part_sums = tc_scratch + ((" + f + ")tc_part * " + num(batch_) + " + tc_z) * " +
           num(m_ * n_) + ";\n";
    for (int64_t i = 0; i < t_.tm; ++i) {
      std::string m = "tc_row" + num(i);
      out += pad(d) + "const " + idx_ + " " + m + " = " + out_row(i) + ";\n";
      out += pad(d) + "if (" + m + " < " + num(m_) + ") {\n";
      for (int64_t j = 0; j < t_.tn; ++j) {
        std::string n = "(" + out_col(j) + ")";
        out += pad(d + 1) + "if (" + n + " < " + num(n_) + ") tc_part_sums[" + m + " * " + num(n_) + " + " + n +
               "] = tc_acc[" + num(i) + "][" + num(j) + "];\n";
      }
      out += pad(d) + "}\n";
    }
  }

  void scalar_stores(int64_t i, int64_t j, const std::string& m, std::string& out, int d) const {
    const ir::Tensor& o = tensor(c_.o);
    for (int64_t e = 0; e < rb_; ++e) {
      std::string n = "tc_col" + num(e);
      out += pad(d) + "if (" + n + " < " + num(n_) + ") " + param(o) + "[" + entry_offset(step_o_, m, n) +
             "] = " + stored(finished("tc_acc[" + num(i) + "][" + num(j + e) + "]", m, n)) + ";\n";
    }
  }

  // Whether the thread's runs along N are whole runs of O's contiguous dimension, 16-byte
  // aligned where O is.
  bool vector_runs_of_o() const {
    if (c_.n.empty()) return false;
    const ContractionIndex& x = c_.n.back();
    const std::vector<int64_t>& shp = shape(c_.o);
    if (x.o < 0 || stride(shp, x.o) != 1) return false;
    return x.extent() % v_ == 0 && x.lo % v_ == 0 && shp[static_cast<size_t>(x.o)] % v_ == 0;
  }

  const ir::BoundDef& b_;
  const Contraction& c_;
  GemmTile t_;
  GemmOptions o_;
  std::string name_, scratch_;
  int64_t split_, stages_, blocks_per_sm_;
  std::string type_, idx_;
  int64_t element_bytes_, v_, pad_;
  int64_t batch_, m_, n_, k_, tx_, ty_, ra_, rb_;
  // The sums' type: float for float16 and bfloat16 (tensor cores accumulate in float32).
  ScalarType sum_type() const { return mma_ ? ScalarType::Float32 : c_.type; }
  bool mma_ = false;   // tensor cores: float16, bfloat16, or float32 as TF32 (cuda.tf32)
  bool tf32_ = false;
  StepOf step_a_, step_b_, step_o_;
  TileCopy copy_a_, copy_b_;
};

}  // namespace

GemmKernels print_gemm(const ir::BoundDef& bound, const ContractionPlan& plan, const GemmOptions& options) {
  GemmKernels g;
  bool mmas = false;
  for (const Contraction& c : plan.stages) {
    // tensor cores and cuda.fma=0 (the reference's order) never split; with cuda.split_k=1 the
    // tile is chosen as for a sum that cannot split
    GemmMath math(c.type, options.tf32 && options.fma);
    bool may_split = options.fma && !math.tensor_cores() && options.split != 1;
    GemmShape shape = auto_gemm_shape(c, math, may_split, options.blocks_per_sm);
    if (options.tile) shape = {*options.tile, may_split ? auto_split(c, math, *options.tile, options.blocks_per_sm) : 1};
    if (options.split > 0) shape.split = may_split ? std::max<int64_t>(1, options.split) : 1;
    shape.stages = stages_that_fit(shape.tile, math, options.stages);
    shape.blocks_per_sm = options.blocks_per_sm;
    g.shapes.push_back(shape);
    mmas = mmas || math.tensor_cores();
  }
  // One scratch buffer for every split sum (the launches run in turn), typed as the sums.
  bool splits = false;
  for (const GemmShape& s : g.shapes) splits = splits || s.split > 1;
  std::string scratch = splits ? c_type(plan.stages[0].type) + "*" : "";
  std::string kernels;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    GemmKernelText k(bound, plan.stages[s], g.shapes[s], options,
                     bound.def().name + "_k" + std::to_string(g.source.launches.size()), scratch);
    kernels += k.text();
    g.source.launches.push_back(k.launch());
    g.dims.push_back(k.dims());
    g.source.scratch_bytes = std::max<size_t>(g.source.scratch_bytes, static_cast<size_t>(k.scratch_bytes()));
    if (k.split() > 1) {
      std::string name = bound.def().name + "_k" + std::to_string(g.source.launches.size());
      kernels += k.sum_text(name);
      g.source.launches.push_back(k.sum_launch(name));
      g.dims.push_back(k.sum_dims());
    }
  }
  g.source.text = cuda_prelude() + kGemmHelpers + (mmas ? kMmaHelpers : "") + "\n" + kernels;
  g.source.param_types = print::parameter_types(bound.def());
  if (splits) g.source.param_types.push_back(scratch);
  return g;
}

}  // namespace tc::backends::cuda
