// gemm_tiles.cpp — the contraction route's block tiles (gemm.h): the ones cuda.gemm_tile names,
// and the one auto takes for a contraction.
#include <algorithm>

#include "backends/cuda/contraction/gemm.h"

namespace tc::backends::cuda {

std::string GemmTile::text() const { return std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk); }

// Every tile 256 threads (8 warps): each thread's values along M and N in runs of 128 bits
// (4 floats, 2 doubles) where it has that many. float64 stops at 8 x 4 values a thread (64
// registers of sums). The last two are for products with few rows (a grouped convolution's 4
// filters a group: 8% of a 32 x 32 tile used, 100% of a 4 x 256 one).
const std::vector<GemmTile>& gemm_tiles(GemmMath math) {
  static const std::vector<GemmTile> kFloat = {{128, 128, 8, 8, 8}, {128, 64, 8, 8, 4}, {64, 128, 8, 4, 8},
                                               {64, 64, 8, 4, 4},    {32, 32, 8, 2, 2},  {8, 256, 8, 1, 8},
                                               {4, 256, 8, 1, 4}};
  static const std::vector<GemmTile> kDouble = {{128, 64, 8, 8, 4}, {64, 128, 8, 4, 8}, {64, 64, 8, 4, 4},
                                                {32, 32, 8, 2, 2},  {8, 256, 8, 1, 8},  {4, 256, 8, 1, 4}};
  // Tensor cores: warps of 64 x 32 outputs (tm x tn = 8 x 8 sums a thread: 4 x 4 mma tiles of
  // 16 x 8) in 128 x 128 tiles of 8 warps, or of 32 x 32 (4 x 8: 2 x 4 mma tiles) in 64 x 64
  // tiles of 4; 16 or 32 steps a stage for float16 and bfloat16 (m16n8k16), 8 or 16 for TF32
  // (m16n8k8).
  static const std::vector<GemmTile> kHalf = {{128, 128, 32, 8, 8}, {128, 128, 16, 8, 8}, {64, 64, 16, 4, 8}};
  static const std::vector<GemmTile> kTf32 = {{128, 128, 16, 8, 8}, {64, 64, 8, 4, 8}};
  if (math.tf32) return kTf32;
  if (is_float16_like(math.type)) return kHalf;
  return math.type == ScalarType::Float64 ? kDouble : kFloat;
}

std::optional<GemmTile> gemm_tile_named(const std::string& text, GemmMath math) {
  for (const GemmTile& t : gemm_tiles(math))
    if (t.text() == text) return t;
  return std::nullopt;
}


int64_t stages_that_fit(const GemmTile& t, GemmMath math, int64_t wanted) {
  int64_t bytes = math.type == ScalarType::Float64 ? 8 : is_float16_like(math.type) ? 2 : 4, pad = 16 / bytes;
  // A stage's rows padded by 16 bytes: [step][row], or on tensor cores [row][step] where an
  // operand's K is contiguous (the larger of the two: rows >= bk).
  int64_t stage = math.tensor_cores() ? (t.bm + t.bn) * (t.bk + pad) * bytes
                                      : (t.bk * (t.bm + pad) + t.bk * (t.bn + pad)) * bytes;
  return std::max<int64_t>(2, std::min(wanted, kGemmSharedBytes / stage));
}

int64_t auto_split(const Contraction& c, GemmMath math, const GemmTile& t) {
  int64_t batch = extent(c.batch), m = extent(c.m), n = extent(c.n), k = extent(c.k);
  int64_t blocks = batch * ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn);
  if (blocks == 0 || blocks >= kBlocksWanted || math.tensor_cores()) return 1;
  int64_t wanted = (kBlocksWanted + blocks - 1) / blocks;
  return std::max<int64_t>(1, std::min({wanted, k / kSplitSteps, kMaxSplit}));
}

GemmShape auto_gemm_shape(const Contraction& c, GemmMath math, bool may_split) {
  int64_t batch = extent(c.batch), m = extent(c.m), n = extent(c.n);
  const std::vector<GemmTile>& tiles = gemm_tiles(math);
  auto split = [&](const GemmTile& t) { return may_split ? auto_split(c, math, t) : 1; };
  auto blocks = [&](const GemmTile& t) { return batch * ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn) * split(t); };
  // The share of a tile's outputs inside O (tbmm's 26 x 26 fills 66% of 32 x 32, 4% of 128 x 128).
  auto used = [&](const GemmTile& t) {
    double covered = static_cast<double>((m + t.bm - 1) / t.bm * t.bm) * static_cast<double>((n + t.bn - 1) / t.bn * t.bn);
    return covered > 0 ? static_cast<double>(m) * static_cast<double>(n) / covered : 1.0;
  };
  double best = 0;
  for (const GemmTile& t : tiles)
    if (blocks(t) >= kBlocksWanted) best = std::max(best, used(t));
  for (const GemmTile& t : tiles)  // the largest within 5% of the best fill (conv2d's 64 x 128: 99.6%)
    if (blocks(t) >= kBlocksWanted && used(t) >= 0.95 * best) return {t, split(t)};
  // Too few blocks for the GPU whatever the tile: the time is the waves of blocks times a
  // thread's outputs (every tile has 256 threads); the fewest, then the best filled.
  auto cost = [&](const GemmTile& t) {
    return static_cast<double>((blocks(t) + kBlocksWanted - 1) / kBlocksWanted * t.tm * t.tn) /
           static_cast<double>(split(t));
  };
  const GemmTile* pick = &tiles.front();
  for (const GemmTile& t : tiles)
    if (cost(t) < cost(*pick) || (cost(t) == cost(*pick) && used(t) > used(*pick))) pick = &t;
  return {*pick, split(*pick)};
}

}  // namespace tc::backends::cuda
