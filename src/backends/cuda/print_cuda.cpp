// print_cuda.cpp — see print_cuda.h. The printer itself is print/printer.h's class; here the
// entry point and the launch geometry.
#include "backends/cuda/print_cuda.h"

#include <algorithm>

#include "backends/cuda/print/printer.h"

namespace tc::backends::cuda {

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

std::string dims_text(const std::array<unsigned, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
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
  return print::Printer(bound, &model, options).run(mapped);
}

CudaSource print_rows(const ir::BoundDef& bound, const RowPlan& plan, const PrintOptions& options) {
  return print::Printer(bound, nullptr, options).run_rows(plan);
}

}  // namespace tc::backends::cuda
