// gett.cpp — see gett.h.
#include "backends/cpu/contraction/gett.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <numeric>

#include "backends/cpu/contraction/microkernel.h"
#include "runtime/thread_pool.h"
#include "support/error.h"

namespace tc::backends::cpu {

// pack_block_by_lines (gett.h) serves O's order with B's innermost index second where a panel's
// rows crowd a few sets of L2 (intensli6: O(c,j,b,d,a) from B(a,k,d,b,c), B's rows a 9 MiB apart): a
// panel at a time, each of its values cost a line from memory, as its line was gone before the
// panels after it came for the line's other values; a block at a time, each line is read once,
// its values one after another. The lines of the next step are fetched while this one is copied.
template <typename T>
void pack_block_by_lines(const T* base, const int64_t* lines, const int64_t* ko, T* dst, int64_t count, int64_t kb,
                         int width) {
  thread_local std::vector<int64_t> rows, src_at, dst_at, line_at;
  rows.resize(static_cast<size_t>(count));
  std::iota(rows.begin(), rows.end(), int64_t{0});
  std::sort(rows.begin(), rows.end(), [&](int64_t x, int64_t y) { return lines[x] < lines[y]; });
  src_at.resize(rows.size());
  dst_at.resize(rows.size());
  line_at.clear();
  const int64_t per_line = 64 / static_cast<int64_t>(sizeof(T));
  for (size_t q = 0; q < rows.size(); ++q) {
    const int64_t r = rows[q];
    src_at[q] = lines[r];
    dst_at[q] = r / width * width * kb + r % width;
    if (line_at.empty() || lines[r] - line_at.back() >= per_line) line_at.push_back(lines[r]);
  }
  for (int64_t k = 0; k < kb; ++k) {
    if (k + 1 < kb)
      for (int64_t line : line_at) __builtin_prefetch(base + ko[k + 1] + line, 0, 3);
    const T* src = base + ko[k];
    T* out = dst + k * width;
    for (size_t q = 0; q < src_at.size(); ++q) out[dst_at[q]] = src[src_at[q]];
  }
  if (const int64_t tail = count % width) {
    T* last = dst + count / width * width * kb;
    for (int64_t k = 0; k < kb; ++k) std::fill(last + k * width + tail, last + (k + 1) * width, T(0));
  }
}

template void pack_block_by_lines<float>(const float*, const int64_t*, const int64_t*, float*, int64_t, int64_t, int);
template void pack_block_by_lines<double>(const double*, const int64_t*, const int64_t*, double*, int64_t, int64_t, int);

using runtime::TensorView;

namespace {

constexpr int kMaxMR = 16, kMaxNR = 32;  // the largest micro-kernel's tile (microkernel.h)

// The epilogue's loops over a block of O are worth vectorising (with the baseline ISA), which
// GCC does at -O2 only for loops of a known trip count; Clang does at -O2.
#if defined(__GNUC__) && !defined(__clang__)
#define TC_VECTORISE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define TC_VECTORISE
#endif

// One group's indices flattened into one range: per flat index, its offset (in elements) in
// each tensor the group indexes (empty for one it does not), and in each read of the epilogue.
struct Flat {
  int64_t size = 1;
  std::vector<int64_t> o, a, b;
  std::vector<std::vector<int64_t>> e;
};

// A group ordered in tiles: its other indices (`rest`, the slowest first), then `tiled`'s values
// by tiles of `tile` (the last tile what remains), `whole`'s values, the tile's values
// innermost. Panels of `tile` flat indices then run along `tiled` (one tensor's rows) and the
// panels after one another along `whole` (another tensor's rows).
struct TileOrder {
  std::vector<size_t> rest;
  size_t whole = 0, tiled = 0;
  int tile = 0;
};

// The stride in `v` of the dimension `d` an index walks there (0 where it walks none: the
// values repeat along it).
int64_t stride_of(const TensorView& v, int d) { return d < 0 ? 0 : v.strides[d]; }

// The group's indices ordered by descending |stride| in `v`: the index with the smallest
// stride varies fastest, so consecutive flat indices are near one another in v.
std::vector<size_t> flatten_order(const std::vector<ContractionIndex>& g, const TensorView& v,
                                  int ContractionIndex::*dim) {
  std::vector<size_t> order(g.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::llabs(v.strides[g[x].*dim]) > std::llabs(v.strides[g[y].*dim]);
  });
  return order;
}

// One loop of a flattened group as one tensor sees it: its trip count and its stride there.
struct Axis {
  int64_t extent, stride;
};

// The offsets of every point of nested loops `axes` (the last innermost) from `base`.
std::vector<int64_t> offsets(int64_t base, const std::vector<Axis>& axes) {
  int64_t size = 1;
  for (const Axis& x : axes) size *= x.extent;
  std::vector<int64_t> out(static_cast<size_t>(size));
  if (size == 0) return out;
  out[0] = base;
  // Each loop in turn, innermost first: the table so far, repeated at each of its values.
  size_t filled = 1;
  for (size_t q = axes.size(); q-- > 0;) {
    for (int64_t j = 1; j < axes[q].extent; ++j)
      for (size_t i = 0; i < filled; ++i) out[j * filled + i] = out[i] + j * axes[q].stride;
    filled *= static_cast<size_t>(axes[q].extent);
  }
  return out;
}

// The offsets in `v` of every flat index of `g`, flattened in `order` (the last fastest); dim(x):
// the dimension of v that index x walks (-1: none). `count` >= 0: the first `count` only (fewer
// where g has fewer), enumerating just the innermost loops that reach it.
template <typename DimOf>
std::vector<int64_t> offsets(const std::vector<ContractionIndex>& g, const std::vector<size_t>& order,
                             const TensorView& v, DimOf dim, int64_t count = -1) {
  int64_t base = 0;
  for (const auto& x : g) base += x.lo * stride_of(v, dim(x));
  std::vector<Axis> axes;
  int64_t size = 1;
  for (size_t q = order.size(); q-- > 0 && (count < 0 || size < count);) {
    axes.insert(axes.begin(), {g[order[q]].hi - g[order[q]].lo, stride_of(v, dim(g[order[q]]))});
    size *= axes.front().extent;
  }
  std::vector<int64_t> out = offsets(base, axes);
  if (count >= 0 && static_cast<int64_t>(out.size()) > count) out.resize(static_cast<size_t>(count));
  return out;
}

// The length of the runs of consecutive elements of `v` that the flat index of `g` (in `order`)
// walks: the innermost indices' extents while each one's stride is the product of those inside
// it (1 for the innermost); 1 where the innermost index's stride is not 1.
int64_t run_length(const std::vector<ContractionIndex>& g, const std::vector<size_t>& order, const TensorView& v,
                   int ContractionIndex::*dim) {
  int64_t run = 1;
  for (size_t q = order.size(); q-- > 0;) {
    const ContractionIndex& x = g[order[q]];
    int64_t extent = x.hi - x.lo;
    if (extent > 1 && v.strides[x.*dim] != run) break;
    run *= extent;
  }
  return run;
}

// The share of panels of `width` flat indices (starting at multiples of it) that lie within one
// run of `run` (run_length), over `size` indices.
double panel_share(int64_t run, int64_t size, int width) {
  if (size < width) return 0;
  if (run >= size) return static_cast<double>(size / width * width) / static_cast<double>(size);
  int64_t period = std::lcm<int64_t>(run, width), panels = period / width, inside = 0;
  if (panels > 4096) return run >= width ? 1.0 - static_cast<double>(width) / static_cast<double>(run) : 0;
  for (int64_t p = 0; p < panels; ++p) inside += (p * width) / run == (p * width + width - 1) / run;
  return static_cast<double>(inside) / static_cast<double>(panels);
}

// The cost, per element, of moving the values of a panel of `width` flat indices whose offsets
// follow one another in runs of `run` (run_length) and that crosses from one run into the next:
// the panel is moved a run at a time, each run it crosses costing about what 2.5 elements
// gathered one by one do (a gather per element, 3.0, where the runs are single values). A panel
// within one run costs 0.3 (one vector access a step, or one copy); panel_share says how many are.
double crossing_cost(int64_t run, int width) {
  const double runs = std::clamp(1.0 + static_cast<double>(width - 1) / static_cast<double>(std::max<int64_t>(run, 1)),
                                 2.0, static_cast<double>(width));
  return 0.5 + 2.5 * runs / width;
}

// The group flattened: its size, and each tensor's offsets (offsets_of(view, dim): dim(x) the
// dimension of view that index x walks). `epilogue`: the tensor of each epilogue read, when the
// group is one of O's (else none).
template <typename OffsetsOf>
Flat flatten_with(const std::vector<ContractionIndex>& g, OffsetsOf offsets_of, const TensorView* o,
                  const TensorView* a, const TensorView* b, const std::vector<const TensorView*>& epilogue) {
  Flat f;
  for (const auto& x : g) f.size *= x.hi - x.lo;
  auto member = [](int ContractionIndex::*dim) { return [dim](const ContractionIndex& x) { return x.*dim; }; };
  if (o) f.o = offsets_of(*o, member(&ContractionIndex::o));
  if (a) f.a = offsets_of(*a, member(&ContractionIndex::a));
  if (b) f.b = offsets_of(*b, member(&ContractionIndex::b));
  for (size_t q = 0; q < epilogue.size(); ++q)
    f.e.push_back(offsets_of(*epilogue[q], [q](const ContractionIndex& x) { return x.e[q]; }));
  return f;
}

Flat flatten(const std::vector<ContractionIndex>& g, const std::vector<size_t>& order, const TensorView* o,
             const TensorView* a, const TensorView* b, const std::vector<const TensorView*>& epilogue = {}) {
  return flatten_with(g, [&](const TensorView& v, auto dim) { return offsets(g, order, v, dim); }, o, a, b, epilogue);
}

Flat flatten(const std::vector<ContractionIndex>& g, const TensorView& order_by, int ContractionIndex::*order_dim,
             const TensorView* o, const TensorView* a, const TensorView* b,
             const std::vector<const TensorView*>& epilogue = {}) {
  return flatten(g, flatten_order(g, order_by, order_dim), o, a, b, epilogue);
}

// Per panel of `width` flat indices (the last one may be short): whether their offsets follow
// one another (one memcpy or one vector access reads or writes the panel; a short one's users
// check its width).
std::vector<char> contiguous_panels(const std::vector<int64_t>& off, int width) {
  size_t n = off.size(), panels = (n + width - 1) / width;
  std::vector<char> out(panels, 0);
  for (size_t p = 0; p < panels; ++p) {
    size_t first = p * width, last = std::min(n, first + width);
    bool ok = true;
    for (size_t j = first + 1; ok && j < last; ++j) ok = off[j] == off[first] + static_cast<int64_t>(j - first);
    out[p] = ok;
  }
  return out;
}

// What one thread packs into: an A block (mc x kc) and a B block (kc x nc), 64-byte aligned,
// kept for the thread's next calls.
struct PackBuffers {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> a, b;
  size_t a_bytes = 0, b_bytes = 0;

  static void* grow(std::unique_ptr<void, Free>& p, size_t& have, size_t want) {
    if (want <= have) return p.get();
    size_t bytes = (want + 63) / 64 * 64;
    void* q = std::aligned_alloc(64, bytes);
    if (!q) throw std::bad_alloc();
    p.reset(q);
    have = bytes;
    return q;
  }
};

PackBuffers& thread_buffers() {
  thread_local PackBuffers buffers;
  return buffers;
}

// A piece of the work one task does: one batch entry, a range of M and of N (each starting at
// a multiple of MR, NR) and of K; `part` 0 sums into O, part q > 0 (a share of K when K is
// split between threads) into the q-th partial sum, which the reduction adds to O.
struct Task {
  int64_t batch = 0, m0 = 0, m1 = 0, n0 = 0, n1 = 0, k0 = 0, k1 = 0;
  int part = 0;
};

// What the tasks read besides the tensors' addresses: each group flattened, the orders, the
// tables of contiguous panels and runs, the blocks, the tasks. It depends on the tensors' shapes
// and strides only, so a call with those of an earlier call takes it from GettLayouts.
template <typename T>
struct Layout {
  Flat batch, m, n, k;
  // The orders M, N and K are flattened in (indices of the groups, the fastest last; N's and K's
  // empty where they are ordered in tiles, N's tiles in n_tiles): what describe_layout reports.
  std::vector<size_t> m_order, n_order, k_order;
  TileOrder n_tiles;
  std::vector<char> a_panels, b_panels, o_panels;  // contiguous_panels of A along M, B along N, O along N (the epilogue)
  std::vector<std::vector<char>> e_panels;         // and of each epilogue read along N
  std::vector<int32_t> ka_runs, kb_runs;             // contiguous_runs of A and B along K,
  int ka_step = 1;  // A's runs with this step (pack_panel; B's are along consecutive steps of K)
  // B's blocks packed in B's memory order (pack_block_by_lines) instead of panel by panel.
  bool b_by_lines = false;
  // What K blocks and threads' shares of K are multiples of: 8 steps (a transpose's), 8 x the
  // step where a run's values lie every step-th step (tiled_k): 8 of them per run.
  int64_t k_unit() const { return 8 * ka_step; }
  // Where K is split between threads: the tables of the partial sums of parts 1.. (each M x N,
  // rows of N): the offsets of row i and column j.
  std::vector<int64_t> partial_m, partial_n;
  MicroKernel<T> uk;
  int64_t mc = 0, kc = 0, nc = 0;
  int64_t l2 = 0;   // bytes of a core's L2 (run_task's loop order)
  int threads = 1;  // what the tasks are cut for
  std::vector<Task> tasks;
};

// One call: a layout (a kernel's, kept across calls) and the tensors it computes on.
template <typename T>
struct Problem {
  const Layout<T>& l;
  const T* a = nullptr;
  const T* b = nullptr;
  T* o = nullptr;
  const std::vector<std::vector<EpilogueOp>>* epilogue = nullptr;  // empty: none
  std::vector<const T*> e;  // each epilogue read's tensor
  T* partial = nullptr;     // where K is split between threads: the partial sums
  bool accumulate = false;
};

// `n` values from src to dst: a micro-panel's step (the micro-kernels' widths are known here, so
// the copy is a few vector moves, not a call).
template <typename T, int W>
inline void copy_fixed(T* __restrict dst, const T* __restrict src) {
  __builtin_memcpy(dst, src, sizeof(T) * W);  // a constant size: inlined as vector moves
}

template <typename T>
inline void copy_step(T* __restrict dst, const T* __restrict src, int n) {
  switch (n) {
    case 4: return copy_fixed<T, 4>(dst, src);
    case 6: return copy_fixed<T, 6>(dst, src);
    case 8: return copy_fixed<T, 8>(dst, src);
    case 12: return copy_fixed<T, 12>(dst, src);
    case 16: return copy_fixed<T, 16>(dst, src);
    case 24: return copy_fixed<T, 24>(dst, src);
    case 32: return copy_fixed<T, 32>(dst, src);
    default: std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(n));
  }
}

// What pack_panel fetches of a row's next run: all of a run of up to kFetchWholeRun bytes, the
// first kFetchRunHead of a longer one (its later lines the hardware fetches). With the first 4
// lines of every run, the fifth of a run of 72 floats (288 bytes that start within a line) was a
// miss in every row (intensli4 with the AVX-512 pack, whose last 16 rows of a panel fetch no
// group after them: 7.4 ms against 7.0 with the AVX2 pack; whole, 6.6-6.8); 6 lines of every
// run were more than the core's misses in flight (ccsd11 float64, runs of 576 bytes: 567-571 ms
// with 4, 596-609 with 6).
constexpr int64_t kFetchWholeRun = 384, kFetchRunHead = 256;

// And the first kFetchFarBytes of each row's run kFetchFarRuns runs ahead: one run ahead leaves
// a run's lines a transpose's time to come, less than memory's latency where runs are a line or
// two (ccsd2's 16 and 32 floats); with the next run fetched whole and this one's head, the misses
// in flight stay within what the core holds. ccsd2 (Zen 5, 2 threads, median of 3 processes)
// float32 48.3-49.6 -> 45.4-47.0 ms (2 runs ahead 47.0-48.5, 4 46.9-47.4, 8 47.7-48.2), float64
// 37.3-37.5 -> 34.8-35.3; runs of 72 floats or more (intensli4, ccsd1, ccsd11) unchanged.
constexpr int kFetchFarRuns = 3;
constexpr int64_t kFetchFarBytes = 128;

// The steps of the run at step k of a K block of kb steps (`runs` along every step-th step),
// cut at the block's end.
inline int64_t run_in_block(const int32_t* runs, int64_t k, int step, int64_t kb) {
  return std::min<int64_t>(runs[k], (kb - k + step - 1) / step);
}

// A run's place in the order pack_panel walks a K block (each `first` of the step in turn, its
// runs along K) and the rows it is read from (this panel's or the next's), `real` of them.
struct RunAt {
  int64_t first, k;
  const int64_t* rows;
  int real;
};

// The run `count` runs after `at` (first == step: none, past the next panel's first).
inline RunAt run_ahead(RunAt at, int count, const int32_t* runs, int step, int64_t kb, const int64_t* next_lines,
                       int width) {
  for (int q = 0; q < count && at.first < step; ++q) {
    const int64_t k = at.k + run_in_block(runs, at.k, step, kb) * step;
    if (k < kb) {
      at.k = k;
    } else if (at.first + 1 < step && at.first + 1 < kb) {
      at.first = at.k = at.first + 1;
    } else if (next_lines && at.rows != next_lines) {
      at = {0, 0, next_lines, width};
    } else {
      at.first = step;
    }
  }
  return at;
}

// Up to `most` bytes of each row's run at `at` (the lines they touch) into L1. Inlined: GCC takes
// a function whose only effect is a prefetch for one without effects, and drops its calls.
template <typename T>
inline __attribute__((always_inline)) void fetch_run(const T* base, const int64_t* ko, const int32_t* runs, int step,
                                                     int64_t kb, RunAt at, int64_t whole, int64_t most) {
  if (at.first >= step) return;
  const int64_t run = run_in_block(runs, at.k, step, kb) * static_cast<int64_t>(sizeof(T));
  const int64_t bytes = run <= whole ? run : most;
  for (int r = 0; r < at.real; ++r) {
    const uintptr_t row = reinterpret_cast<uintptr_t>(base + ko[at.k] + at.rows[r]);
    for (int64_t q = 0; q < bytes + 63; q += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(row + static_cast<uintptr_t>(q)), 0, 3);
  }
}

// A micro-panel's offsets (n[0..count): its rows in an operand, its columns in the target) as
// runs of offsets that follow one another: run q starts at start[q] and is len[q] long. Where
// a panel crosses from one run of its tensor into the next (N = (j, i) with 72 values of i:
// every third panel of 32 is i's last 8 of one j and the first 24 of the next), it is read or
// written a run at a time, not a value at a time through its table.
struct OffsetRuns {
  int start[kMaxNR], len[kMaxNR];
  int count = 0;
};

inline OffsetRuns offset_runs(const int64_t* n, int64_t count) {
  OffsetRuns runs;
  for (int c = 0; c < count; ++c) {
    if (c > 0 && n[c] == n[c - 1] + 1) {
      ++runs.len[runs.count - 1];
    } else {
      runs.start[runs.count] = c;
      runs.len[runs.count++] = 1;
    }
  }
  return runs;
}

// One micro-panel that is not whole rows (those: pack_rows_by_steps): `width` rows of an
// operand (A's M values or B's N values at offsets `lines` from `base`; the first `rows` real)
// over a K block of `kb` steps at offsets `ko`, into dst[k * width + r]. The rows past `rows` of
// a short last panel only fill the micro-kernel's registers, their sums discarded: zeros, or
// copies of the last real row, never stale memory (whose subnormals would slow the
// multiply-adds). Read the cheapest way each stretch of K allows: a transposing pack along each
// run of values that follow one another in memory (`runs`, per step of the block: how many of
// the steps k, k + step, k + 2 step, ... do; a block may cross from one run into the next), a
// copy per stretch of rows that follow one another elsewhere (offset_runs), or a
// gather per element. `next_lines`: the next panel's rows, all real, whose first runs
// are fetched ahead (null: none).
template <typename T>
void pack_panel(const MicroKernel<T>& uk, T* __restrict dst, const T* base, const int64_t* lines, int width, int64_t rows,
                const int64_t* ko, const int32_t* runs, int step, int64_t kb, const int64_t* next_lines) {
  // Stretches of the panel's rows, each step copied a stretch at a time where K does not run
  // along them: the gather a value at a time of the panels across runs took 4% of the
  // 278-GFLOP terms' time (ccsd8 float32 592-637 -> 573-575 ms, ccsd9 576-583 -> 553-563,
  // ccsd13 575-603 -> 556-564; Zen 5, 2 threads). Still a gather where they average fewer than
  // 4 rows.
  const OffsetRuns segments = offset_runs(lines, rows);
  const bool by_stretches = segments.count * 4 <= rows;
  for (int64_t first = 0; first < step && first < kb; ++first)
    for (int64_t k = first; k < kb;) {
      const int64_t run = run_in_block(runs, k, step, kb);
      T* d = dst + k * width;
      if (run > 1 && uk.pack_transposed) {
        // A short last panel's missing rows repeat its last real one: their sums are discarded,
        // and the transposing pack keeps its speed (packed a value at a time, M's last panel of 8
        // rows and N's of 24 took 8% of ccsd2's time).
        const T* src[std::max(kMaxMR, kMaxNR)];
        for (int r = 0; r < width; ++r) src[r] = base + ko[k] + lines[std::min<int64_t>(r, rows - 1)];
        // Each row's next run (after the last, the next panel's first), into L1 while this one
        // is transposed: where runs are short and far apart (K in tiles: ccsd2's 16-float runs
        // of B, 1.2 KB from row to row, 389 KB from run to run) no hardware prefetcher foresees
        // them, and the packing waited on each line (ccsd2, 2 threads: 116 -> 90-96 ms in
        // float32, 94-95 -> 74-76 in float64). How much of it: kFetchWholeRun, kFetchRunHead;
        // and a run further ahead: kFetchFarRuns.
        const RunAt here{first, k, lines, static_cast<int>(rows)};
        const RunAt next = run_ahead(here, 1, runs, step, kb, next_lines, width);
        fetch_run(base, ko, runs, step, kb, next, kFetchWholeRun, kFetchRunHead);
        const RunAt far = run_ahead(next, kFetchFarRuns - 1, runs, step, kb, next_lines, width);
        fetch_run(base, ko, runs, step, kb, far, kFetchFarBytes, kFetchFarBytes);
        uk.pack_transposed(d, src, width, run, step);
      } else if (run > 1) {
        for (int r = 0; r < width; ++r) {
          const T* row = base + ko[k] + (r < rows ? lines[r] : 0);
          for (int64_t q = 0; q < run; ++q) d[q * step * width + r] = r < rows ? row[q] : T(0);
        }
      } else if (by_stretches) {
        const T* src = base + ko[k];
        for (int q = 0; q < segments.count; ++q)
          copy_step(d + segments.start[q], src + lines[segments.start[q]], segments.len[q]);
        for (int64_t r = rows; r < width; ++r) d[r] = T(0);
      } else {
        const T* src = base + ko[k];
        for (int r = 0; r < width; ++r) d[r] = r < rows ? src[lines[r]] : T(0);
      }
      k += run * step;
    }
}

// One operand as its packing sees it: where it is, the offsets of its M (N) values and of its K
// values, which micro-panels are whole rows, and its runs along K with their step.
template <typename T>
struct Packed {
  const T* base;
  const std::vector<int64_t>& lines;
  const std::vector<char>& panels;
  const std::vector<int64_t>& ko;
  const std::vector<int32_t>& runs;
  int step, width;
};

// Whole-row micro-panels (each panel's rows follow one another in memory: rows r0.., `count`
// of them, over the K block at p0, kb steps), a step of K at a time: each step copies its piece
// of every panel, pieces that lie side by side in one row of the operand where the panels follow
// one another, and fetches the pieces of the step about kFetchAheadBytes later. Panel by panel,
// each step's piece was one or two lines of a row far from the last (ttm_mode1's B: 1 KiB of a
// 256 KiB row per step), read a line at a time: 8.9 ms a call, 7.8 step by step, 6.5-6.9 with
// the fetch (ccsd1 48.0 -> 46.0-46.6 ms; Zen 5, 2 threads).
constexpr int64_t kFetchAheadBytes = 8192;

template <typename T>
void pack_rows_by_steps(const Packed<T>& x, T* dst, int64_t r0, int64_t count, int64_t p0, int64_t kb) {
  const int w = x.width;
  const int64_t* ko = x.ko.data() + p0;
  const int64_t* lines = x.lines.data() + r0;
  const int64_t whole = count / w, rest = count % w, bytes = w * static_cast<int64_t>(sizeof(T));
  const int64_t ahead = std::max<int64_t>(2, kFetchAheadBytes / (bytes * ((count + w - 1) / w)));
  for (int64_t k = 0; k < kb; ++k) {
    if (k + ahead < kb)
      for (int64_t q = 0; q < count; q += w) {
        const char* piece = reinterpret_cast<const char*>(x.base + ko[k + ahead] + lines[q]);
        for (int64_t b = 0; b < bytes + 63; b += 64) __builtin_prefetch(piece + b, 0, 3);
      }
    const T* src = x.base + ko[k];
    T* d = dst + k * w;
    for (int64_t q = 0; q < whole; ++q, d += w * kb) copy_step(d, src + lines[q * w], w);
    if (rest > 0) {
      copy_step(d, src + lines[whole * w], static_cast<int>(rest));
      std::fill(d + rest, d + w, T(0));  // zeros, not stale memory: see pack_panel
    }
  }
}

// The block of rows r0.. (`count` of them) over the K block at p0 (kb steps): micro-panels of
// `width` rows, one after another; each stretch of whole-row panels packed together.
template <typename T>
void pack_block(const MicroKernel<T>& uk, const Packed<T>& x, T* dst, int64_t r0, int64_t count, int64_t p0, int64_t kb) {
  const int w = x.width;
  const int64_t end = r0 + count;
  auto whole = [&](int64_t r) { return x.panels[static_cast<size_t>(r / w)] != 0; };
  for (int64_t r = r0; r < end;) {
    int64_t next = r;
    while (next < end && whole(next)) next += w;
    if (next > r) {
      next = std::min(next, end);
      pack_rows_by_steps(x, dst + (r - r0) * kb, r, next - r, p0, kb);
    } else {
      next = std::min(r + w, end);
      pack_panel(uk, dst + (r - r0) * kb, x.base, x.lines.data() + r, w, next - r, x.ko.data() + p0,
                 x.runs.data() + p0, x.step, kb, r + 2 * w <= end ? x.lines.data() + r + w : nullptr);
    }
    r = next;
  }
}

// The A block of rows i0.. (mb of them) of batch entry offset ab, and the B block of columns j0..
template <typename T>
void pack_a(const Problem<T>& p, T* dst, int64_t ab, int64_t i0, int64_t mb, int64_t p0, int64_t kb) {
  const Layout<T>& l = p.l;
  pack_block(l.uk, Packed<T>{p.a + ab, l.m.a, l.a_panels, l.k.a, l.ka_runs, l.ka_step, l.uk.mr}, dst, i0, mb, p0, kb);
}

template <typename T>
void pack_b(const Problem<T>& p, T* dst, int64_t bb, int64_t j0, int64_t nb, int64_t p0, int64_t kb) {
  const Layout<T>& l = p.l;
  if (l.b_by_lines) return pack_block_by_lines(p.b + bb, l.n.b.data() + j0, l.k.b.data() + p0, dst, nb, kb, l.uk.nr);
  pack_block(l.uk, Packed<T>{p.b + bb, l.n.b, l.b_panels, l.k.b, l.kb_runs, 1, l.uk.nr}, dst, j0, nb, p0, kb);
}

// A two-operand epilogue op over `n` elements: y = y op x (y below x on the stack).
template <typename T>
TC_VECTORISE inline void binary_op(EpilogueOp::Kind kind, T* __restrict y, const T* __restrict x, int64_t n) {
  using K = EpilogueOp::Kind;
  switch (kind) {
    case K::Add: for (int64_t c = 0; c < n; ++c) y[c] = y[c] + x[c]; break;
    case K::Sub: for (int64_t c = 0; c < n; ++c) y[c] = y[c] - x[c]; break;
    case K::Mul: for (int64_t c = 0; c < n; ++c) y[c] = y[c] * x[c]; break;
    case K::Div: for (int64_t c = 0; c < n; ++c) y[c] = y[c] / x[c]; break;
    // fmax and fmin as the C library defines them (a NaN operand gives the other), spelled so
    // that they vectorise instead of calling libm per element
    case K::Fmax: for (int64_t c = 0; c < n; ++c) y[c] = y[c] < x[c] || y[c] != y[c] ? x[c] : y[c]; break;
    case K::Fmin: for (int64_t c = 0; c < n; ++c) y[c] = x[c] < y[c] || y[c] != y[c] ? x[c] : y[c]; break;
    // max and min as the language defines them: a NaN operand gives NaN
    case K::Max:
      for (int64_t c = 0; c < n; ++c) y[c] = std::isnan(y[c]) || std::isnan(x[c]) ? T(NAN) : y[c] < x[c] ? x[c] : y[c];
      break;
    case K::Min:
      for (int64_t c = 0; c < n; ++c) y[c] = std::isnan(y[c]) || std::isnan(x[c]) ? T(NAN) : y[c] < x[c] ? y[c] : x[c];
      break;
    default: break;
  }
}

// The epilogue on a finished block of O: rows i.., columns j.. of batch entry bi, gathered into
// one array (each op then runs over the whole block), through the statements in order (each
// sees the one before's result), and written back.
template <typename T>
TC_VECTORISE void apply_epilogue(const Problem<T>& p, size_t bi, int64_t i, int64_t rows, int64_t j, int64_t cols) {
  using K = EpilogueOp::Kind;
  constexpr int kBlock = kMaxMR * kMaxNR;
  alignas(64) T out[kBlock], stack[kMaxEpilogueDepth][kBlock];
  const int64_t n = rows * cols;
  const int64_t* no = p.l.n.o.data() + j;
  // A whole panel's columns may follow one another (O's, a read's): copied as rows then.
  const bool whole = cols == p.l.uk.nr, o_rows = whole && p.l.o_panels[static_cast<size_t>(j / cols)];
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = p.o + p.l.batch.o[bi] + p.l.m.o[static_cast<size_t>(i + r)];
    if (o_rows) std::memcpy(out + r * cols, row + no[0], sizeof(T) * static_cast<size_t>(cols));
    else
      for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = row[no[c]];
  }
  for (const std::vector<EpilogueOp>& stmt : *p.epilogue) {
    int top = -1;
    for (const EpilogueOp& op : stmt) {
      switch (op.kind) {
        case K::Const: {
          T v = static_cast<T>(op.value);
          T* dst = stack[++top];
          for (int64_t c = 0; c < n; ++c) dst[c] = v;
          break;
        }
        case K::Out: std::memcpy(stack[++top], out, sizeof(T) * static_cast<size_t>(n)); break;
        case K::Read: {
          size_t q = static_cast<size_t>(op.read);
          const int64_t* ne = p.l.n.e[q].data() + j;
          const bool e_rows = whole && p.l.e_panels[q][static_cast<size_t>(j / cols)];
          T* dst = stack[++top];
          for (int64_t r = 0; r < rows; ++r) {
            const T* base = p.e[q] + p.l.batch.e[q][bi] + p.l.m.e[q][static_cast<size_t>(i + r)];
            if (e_rows) std::memcpy(dst + r * cols, base + ne[0], sizeof(T) * static_cast<size_t>(cols));
            else
              for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = base[ne[c]];
          }
          break;
        }
        case K::Neg:
          for (int64_t c = 0; c < n; ++c) stack[top][c] = -stack[top][c];
          break;
        default:
          binary_op(op.kind, stack[top - 1], stack[top], n);
          --top;
      }
    }
    std::memcpy(out, stack[0], sizeof(T) * static_cast<size_t>(n));
  }
  for (int64_t r = 0; r < rows; ++r) {
    T* row = p.o + p.l.batch.o[bi] + p.l.m.o[static_cast<size_t>(i + r)];
    if (o_rows) std::memcpy(row + no[0], out + r * cols, sizeof(T) * static_cast<size_t>(cols));
    else
      for (int64_t c = 0; c < cols; ++c) row[no[c]] = out[r * cols + c];
  }
}

// Where a micro-tile's sums go: O of one batch entry, or a partial sum; row i of the tile's
// rows at base + m[i], column j at + n[j].
template <typename T>
struct Target {
  T* base;
  const int64_t *m, *n;
  bool epilogue;  // the epilogue follows the last K block (O, K not split)
};

template <typename T>
Target<T> target(const Problem<T>& p, const Task& t) {
  const Layout<T>& l = p.l;
  if (t.part > 0) return {p.partial + (t.part - 1) * l.m.size * l.n.size, l.partial_m.data(), l.partial_n.data(), false};
  return {p.o + l.batch.o[static_cast<size_t>(t.batch)], l.m.o.data(), l.n.o.data(),
          !p.epilogue->empty() && p.partial == nullptr};
}

// One row of a tile on the stack into the target, a run at a time.
template <typename T>
TC_VECTORISE inline void add_runs(T* __restrict row, const T* __restrict tile, const int64_t* n, const OffsetRuns& runs,
                                  bool add) {
  for (int q = 0; q < runs.count; ++q) {
    T* dst = row + n[runs.start[q]];
    const T* src = tile + runs.start[q];
    if (add)
      for (int c = 0; c < runs.len[q]; ++c) dst[c] += src[c];
    else
      for (int c = 0; c < runs.len[q]; ++c) dst[c] = src[c];
  }
}

// The lines of the target that rows i.. of a micro-tile cover in its column runs starting at
// column j, into `lines` (room for a line per value and two more per row); how many.
template <typename T>
int target_lines(const Target<T>& out, int64_t i, int64_t rows, int64_t j, const OffsetRuns& runs, const void** lines) {
  int count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = out.base + out.m[i + r];
    uintptr_t last_line = 0;
    for (int q = 0; q < runs.count; ++q) {
      const uintptr_t first = reinterpret_cast<uintptr_t>(row + out.n[j + runs.start[q]]);
      const uintptr_t last = first + static_cast<uintptr_t>(runs.len[q]) * sizeof(T) - 1;
      for (uintptr_t line = first & ~uintptr_t{63}; line <= last; line += 64)
        if (line != last_line) lines[count++] = reinterpret_cast<const void*>(line), last_line = line;
    }
  }
  return count;
}

// One micro-tile at (i, j), whose columns form `runs` in the target: straight into the target
// where the tile is whole and its rows contiguous there, else through a tile on the stack
// written a run at a time; `last`: its sum is finished (the epilogue follows).
template <typename T>
void micro_tile(const Problem<T>& p, const Target<T>& out, size_t bi, int64_t i, int64_t rows, int64_t j, int64_t cols,
                const OffsetRuns& runs, const T* a, const T* b, int64_t kb, bool add, bool last) {
  const int mr = p.l.uk.mr, nr = p.l.uk.nr;
  int64_t offs[kMaxMR];
  if (rows == mr && cols == nr && runs.count == 1) {
    for (int r = 0; r < mr; ++r) offs[r] = out.m[i + r];
    p.l.uk.run(kb, a, b, out.base + out.n[j], offs, add, nullptr, 0);
  } else {
    alignas(64) T tile[kMaxMR * kMaxNR];
    for (int r = 0; r < mr; ++r) offs[r] = int64_t{r} * nr;
    // The output's lines the tile goes to, fetched by the micro-kernel while it sums: the copy
    // below found them in memory (7% of a contraction whose panels cross O's runs of 72).
    const void* lines[kMaxMR * (kMaxNR + 2)];
    lines[0] = nullptr;  // GCC cannot see that target_lines writes what the kernel reads
    const int fetches = target_lines(out, i, rows, j, runs, lines);
    p.l.uk.run(kb, a, b, tile, offs, false, lines, fetches);
    for (int64_t r = 0; r < rows; ++r) add_runs(out.base + out.m[i + r], tile + r * nr, out.n + j, runs, add);
  }
  if (last && out.epilogue) apply_epilogue(p, bi, i, rows, j, cols);
}

// The block size that cuts `extent` into as few blocks of at most `most` as it can, all of one
// size (a multiple of `unit`, the last block the remainder): 312 steps of K in two blocks of
// 160 and 152 rather than 256 and 56, the short one's fixed costs (the micro-tile's loads and
// stores of O) no longer spread over a few steps.
int64_t balanced_block(int64_t extent, int64_t most, int64_t unit) {
  if (extent <= 0) return std::max<int64_t>(unit, 1);
  int64_t blocks = (extent + most - 1) / most, size = (extent + blocks - 1) / blocks;
  return std::min(most, (size + unit - 1) / unit * unit);
}

template <typename T>
void run_task(const Problem<T>& p, const Task& t) {
  const int mr = p.l.uk.mr, nr = p.l.uk.nr;
  const int64_t K = t.k1 - t.k0;
  int64_t kc = balanced_block(K, p.l.kc, p.l.k_unit());
  int64_t nc = balanced_block(t.n1 - t.n0, p.l.nc, nr);
  int64_t mc = std::min(p.l.mc, (t.m1 - t.m0 + mr - 1) / mr * mr);
  // Where the task's N is one block and K one block, each A block serves that block alone, at
  // once: sized like the B block (in L2) instead of from L3, packing it and reading it back stay
  // in cache (a skinny product, N of 64 against M of 65536, is otherwise bound by the packed
  // block's trips to memory).
  if (t.n1 - t.n0 <= nc && K <= kc) mc = std::min(mc, std::max<int64_t>(mr, p.l.nc / mr * mr));
  PackBuffers& buf = thread_buffers();
  T* ap = static_cast<T*>(PackBuffers::grow(buf.a, buf.a_bytes, sizeof(T) * static_cast<size_t>(mc * kc)));
  T* bp = static_cast<T*>(PackBuffers::grow(buf.b, buf.b_bytes, sizeof(T) * static_cast<size_t>(nc * kc)));
  size_t bi = static_cast<size_t>(t.batch);
  int64_t ab = p.l.batch.a[bi], bb = p.l.batch.b[bi];
  const Target<T> out = target(p, t);
  std::vector<OffsetRuns> runs(static_cast<size_t>((nc + nr - 1) / nr));  // per micro-panel of the B block
  int64_t packed_j0 = -1, packed_p0 = -1;  // the B block in bp (one N block, one K block: packed once)
  for (int64_t i0 = t.m0; i0 < t.m1; i0 += mc) {
    const int64_t mb = std::min(mc, t.m1 - i0);
    for (int64_t p0 = t.k0; p0 < t.k1; p0 += kc) {
      const int64_t kb = std::min(kc, t.k1 - p0);
      const bool add = (p.accumulate && t.part == 0) || p0 > t.k0, last = p0 + kb == t.k1;
      pack_a(p, ap, ab, i0, mb, p0, kb);
      for (int64_t j0 = t.n0; j0 < t.n1; j0 += nc) {
        const int64_t nb = std::min(nc, t.n1 - j0);
        if (j0 != packed_j0 || p0 != packed_p0) pack_b(p, bp, bb, j0, nb, p0, kb);
        packed_j0 = j0, packed_p0 = p0;
        for (int64_t jr = 0; jr < nb; jr += nr)
          runs[static_cast<size_t>(jr / nr)] = offset_runs(out.n + j0 + jr, std::min<int64_t>(nr, nb - jr));
        auto tile_at = [&](int64_t ir, int64_t jr) {
          micro_tile(p, out, bi, i0 + ir, std::min<int64_t>(mr, mb - ir), j0 + jr, std::min<int64_t>(nr, nb - jr),
                     runs[static_cast<size_t>(jr / nr)], ap + ir * kb, bp + jr * kb, kb, add, last);
        };
        // An A block within twice L2: each A micro-panel stays in L1 while the B block's
        // micro-panels pass from L2, and the micro-tiles of O follow one another along its rows,
        // where the prefetchers follow them. A larger one (in L3): each B micro-panel passes over
        // the whole A block, A's micro-panels streaming from L3 in order. Measured on Zen 5 (2
        // threads, pairs of processes): at 1 MiB A blocks (1024^3) the first 4-7% faster, at 2 MiB
        // even, at 3-5 MiB the second 1-11% faster (sgemm 3072^3, 5136^2, ccsd0, ccsd13 11%,
        // dgemm 5136^2 5-8%).
        if (mb * kb * static_cast<int64_t>(sizeof(T)) <= 2 * p.l.l2) {
          for (int64_t ir = 0; ir < mb; ir += mr)
            for (int64_t jr = 0; jr < nb; jr += nr) tile_at(ir, jr);
        } else {
          for (int64_t jr = 0; jr < nb; jr += nr)
            for (int64_t ir = 0; ir < mb; ir += mr) tile_at(ir, jr);
        }
      }
    }
  }
}

template <typename T>
int task_entry(void*, int index, uint8_t* closure) {
  auto& p = *reinterpret_cast<Problem<T>*>(closure);
  try {
    run_task(p, p.l.tasks[static_cast<size_t>(index)]);
    return 0;
  } catch (...) {
    return 1;  // std::bad_alloc, the only thing that throws here: reported by run_gett
  }
}

// Whether one batch entry's sum is better cut along K than along M or N between `threads`:
// cut along M (N), every thread packs all of B (A) for its share of the other, so where M x N
// is small against K (a coupled-cluster term summing 92,000 products into a 312 x 296 result)
// packing, and reading the operands from memory once per thread, outweigh the arithmetic;
// cut along K, each thread packs its share of both once, and adds its partial sum of O
// (written, then read back) at the end. Counted in elements moved, with the partial sums
// bounded to what the sum's arithmetic pays for.
bool split_along_k(int64_t M, int64_t N, int64_t K, int mr, int nr, int threads) {
  const double P = threads, m = static_cast<double>(M), n = static_cast<double>(N), k = static_cast<double>(K);
  if (threads < 2 || K < 64 * threads) return false;
  const bool along_n = (N + nr - 1) / nr >= (M + mr - 1) / mr;
  const double packed_mn = (along_n ? m + n / P : m / P + n) * k;
  const double packed_k = (m + n) * k / P + 2 * m * n * (P - 1);
  return packed_k < 0.8 * packed_mn;
}

// The tasks: every batch entry cut into `parts` pieces along N or M (whichever has more micro-
// panels), so that the number of tasks is a multiple of the threads (equal pieces, no thread
// idle at the end) where the panels allow; one batch entry whose sum is better cut along K
// (split_along_k), into `threads` shares of K (multiples of `k_unit`).
std::vector<Task> cut(int64_t batches, int64_t M, int64_t N, int64_t K, int64_t k_unit, int mr, int nr, int threads) {
  std::vector<Task> tasks;
  if (batches == 1 && split_along_k(M, N, K, mr, nr, threads)) {
    // Shares of K / threads rounded to k_unit: the last takes what remains (rounded down, the
    // shares of 2 threads over K = 129 were 64 and 64, and the 129th product was left out).
    const int64_t per = (K / threads + k_unit - 1) / k_unit * k_unit;
    const int parts = static_cast<int>(std::min<int64_t>(threads, (K + per - 1) / per));
    for (int q = 0; q < parts; ++q) tasks.push_back({0, 0, M, 0, N, q * per, q + 1 == parts ? K : (q + 1) * per, q});
    return tasks;
  }
  int64_t P = std::max(1, threads);
  int64_t parts = P / std::gcd(std::max<int64_t>(batches, 1), P);
  int64_t mp = (M + mr - 1) / mr, np = (N + nr - 1) / nr;
  bool along_n = np >= mp;
  int64_t panels = along_n ? np : mp;
  parts = std::max<int64_t>(1, std::min(parts, panels));
  int64_t per = (panels + parts - 1) / parts;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t q = 0; q * per < panels; ++q) {
      Task t{b, 0, M, 0, N, 0, K, 0};
      int64_t w = along_n ? nr : mr, extent = along_n ? N : M;
      int64_t lo = q * per * w, hi = std::min(extent, (q + 1) * per * w);
      (along_n ? t.n0 : t.m0) = lo;
      (along_n ? t.n1 : t.m1) = hi;
      tasks.push_back(t);
    }
  return tasks;
}

// The reduction after a sum cut along K: rows [i, i + MR) of O (one task's) get the partial
// sums of parts 1.. added, then the epilogue.
template <typename T>
int reduce_entry(void*, int index, uint8_t* closure) {
  auto& p = *reinterpret_cast<Problem<T>*>(closure);
  const int64_t M = p.l.m.size, N = p.l.n.size, i0 = int64_t{index} * p.l.uk.mr;
  const int64_t rows = std::min<int64_t>(p.l.uk.mr, M - i0);
  const size_t parts = p.l.tasks.size();
  T* o = p.o + p.l.batch.o[0];
  for (int64_t i = i0; i < i0 + rows; ++i) {
    T* row = o + p.l.m.o[static_cast<size_t>(i)];
    for (size_t q = 1; q < parts; ++q) {
      const T* src = p.partial + (static_cast<int64_t>(q) - 1) * M * N + i * N;
      for (int64_t j = 0; j < N; ++j) row[p.l.n.o[static_cast<size_t>(j)]] += src[j];
    }
  }
  if (!p.epilogue->empty())
    for (int64_t j = 0; j < N; j += p.l.uk.nr) apply_epilogue(p, 0, i0, rows, j, std::min<int64_t>(p.l.uk.nr, N - j));
  return 0;
}

// The share of `panels` that are contiguous.
double share(const std::vector<char>& panels) {
  if (panels.empty()) return 1;
  size_t n = 0;
  for (char x : panels) n += x != 0;
  return static_cast<double>(n) / static_cast<double>(panels.size());
}

// Per flat index i: how many of the offsets at i, i + step, i + 2 step, ... follow one another
// (off[i + j step] == off[i] + j), capped at 2^30: where a packing loop can read a stretch of a
// K block as one row.
std::vector<int32_t> contiguous_runs(const std::vector<int64_t>& off, int step = 1) {
  std::vector<int32_t> runs(off.size(), 1);
  for (size_t i = off.size(); i-- > static_cast<size_t>(step);)
    if (off[i] == off[i - step] + 1 && runs[i] < (1 << 30)) runs[i - step] = runs[i] + 1;
  return runs;
}

// The offsets in `v` of every flat index of `g` in tile order `t`; dim(x): the dimension of v that
// index x walks (-1: none). `count` >= 0: the first `count` only.
template <typename DimOf>
std::vector<int64_t> tiled_offsets(const std::vector<ContractionIndex>& g, const TileOrder& t, const TensorView& v,
                                   DimOf dim, int64_t count = -1) {
  int64_t base = 0;
  std::vector<Axis> outer;
  for (const auto& i : g) base += i.lo * stride_of(v, dim(i));
  for (size_t q : t.rest) outer.push_back({g[q].hi - g[q].lo, stride_of(v, dim(g[q]))});
  const ContractionIndex &w = g[t.whole], &x = g[t.tiled];
  const int64_t W = w.hi - w.lo, X = x.hi - x.lo, sw = stride_of(v, dim(w)), sx = stride_of(v, dim(x));
  const std::vector<int64_t> starts = offsets(base, outer);
  const size_t size = static_cast<size_t>(W * X) * starts.size();
  std::vector<int64_t> out;
  out.reserve(count >= 0 ? std::min(size, static_cast<size_t>(count)) : size);
  for (int64_t o : starts)
    for (int64_t t0 = 0; t0 < X; t0 += t.tile)
      for (int64_t i = 0; i < W; ++i)
        for (int64_t j = t0; j < std::min(X, t0 + t.tile); ++j) {
          if (count >= 0 && static_cast<int64_t>(out.size()) == count) return out;
          out.push_back(o + i * sw + j * sx);
        }
  return out;
}

Flat flatten(const std::vector<ContractionIndex>& g, const TileOrder& t, const TensorView* o, const TensorView* a,
             const TensorView* b, const std::vector<const TensorView*>& epilogue = {}) {
  return flatten_with(g, [&](const TensorView& v, auto dim) { return tiled_offsets(g, t, v, dim); }, o, a, b, epilogue);
}

// The index of `g` that walks `v`'s stride-1 dimension (with more than one value), or -1.
int unit_index(const std::vector<ContractionIndex>& g, const TensorView& v, int ContractionIndex::*dim) {
  for (size_t q = 0; q < g.size(); ++q)
    if (g[q].*dim >= 0 && std::llabs(v.strides[g[q].*dim]) == 1 && g[q].hi - g[q].lo > 1) return static_cast<int>(q);
  return -1;
}

// The tile order of `g` where `v`'s and `w`'s rows run along different indices of it, each with
// at least `least` values: `w`'s index tiled, `v`'s whole; the others in `v`'s order. None
// (tile 0) otherwise.
TileOrder tile_order(const std::vector<ContractionIndex>& g, const TensorView& v, int ContractionIndex::*vdim,
                     const TensorView& w, int ContractionIndex::*wdim, int tile, int64_t least) {
  TileOrder t;
  int x = unit_index(g, v, vdim), y = unit_index(g, w, wdim);
  if (x < 0 || y < 0 || x == y) return t;
  const ContractionIndex &ix = g[static_cast<size_t>(x)], &iy = g[static_cast<size_t>(y)];
  if (ix.hi - ix.lo < least || iy.hi - iy.lo < tile) return t;
  for (size_t q : flatten_order(g, v, vdim))
    if (q != static_cast<size_t>(x) && q != static_cast<size_t>(y)) t.rest.push_back(q);
  t.whole = static_cast<size_t>(x);
  t.tiled = static_cast<size_t>(y);
  t.tile = tile;
  return t;
}

// Where A's and B's K values run along different indices (A(l,i,k) * B(j,k,l): A's k, B's l),
// no order of K reads both along their rows; tiles of B's index do (one cache line each): B
// reads runs of a line, A runs along its index every tile-th step of the panel (pack_panel's
// step; in the last, narrower tile A is gathered). Needs A's and B's extents at least a tile;
// empty otherwise.
Flat tiled_k(const std::vector<ContractionIndex>& g, const TensorView& a, const TensorView& b, int tile) {
  using CI = ContractionIndex;
  const TileOrder t = tile_order(g, a, &CI::a, b, &CI::b, tile, tile);
  return t.tile == 0 ? Flat{} : flatten(g, t, nullptr, &a, &b);
}

// Where B's and O's N values run along different indices (O(c,j,b,a) from B(a,k,b,c): B's c,
// O's a), every order of N moves one of them a value per cache line: along B's rows, each value
// of a micro-tile of O lies on a line of its own; along O's, each packed value of B does. Tiles
// of B's index as wide as a micro-panel do both: each panel is one run of B (a copy per step of
// K), and the panels after it, O's index next, write the next values of the same lines of O,
// still in cache. Needs B's index at least a panel wide and O's at least two values; empty
// (tile 0) otherwise.
TileOrder tiled_n(const std::vector<ContractionIndex>& g, const TensorView& o, const TensorView& b, int nr) {
  using CI = ContractionIndex;
  return tile_order(g, o, &CI::o, b, &CI::b, nr, 2);
}

// The number of flat indices of `g` (in `order`, the fastest last) between two that lie on one
// line of `v`: the values of the indices inside v's stride-1 index, whose lines are written a
// value at a time until that index moves on; 0 where the group has no such index.
int64_t line_reuse_distance(const std::vector<ContractionIndex>& g, const std::vector<size_t>& order,
                            const TensorView& v, int ContractionIndex::*dim) {
  const int unit = unit_index(g, v, dim);
  if (unit < 0) return 0;
  int64_t inside = 1;
  for (size_t q = order.size(); q-- > 0 && order[q] != static_cast<size_t>(unit);) inside *= g[order[q]].hi - g[order[q]].lo;
  return inside;
}

// The 4 KiB pages one of B's rows crosses over a K block (offsets `k` of its steps, in elements
// of `size` bytes).
int64_t pages_along(const std::vector<int64_t>& k, int size) {
  std::vector<int64_t> pages;
  for (int64_t q : k) pages.push_back(q * size >> 12);
  std::sort(pages.begin(), pages.end());
  return std::unique(pages.begin(), pages.end()) - pages.begin();
}

// Whether the lines at rows `rows` and columns `cols` (offsets in elements of `size` bytes) put more of themselves into one set of L2 than it has ways
// (`options`' geometry) where the memory lies on 2 MiB pages: one of B's micro-panels over a K
// block (its rows, K's steps), or the lines of O a block of M writes between two values of one
// line. Such pages are contiguous in physical memory, which L2 is indexed by, so rows a multiple
// of the set span apart (intensli5's 16 rows of B 192 KiB apart in an 8-way L2 of 64 KiB sets)
// share a set, and the lines are gone before they are used again: 757 ms against 333 on 4 KiB
// pages, whose frames the OS scatters over the sets. A set keeps up to its ways: with half of
// them as the bound, AVX-512's 32 rows of intensli5 and intensli7, 16 to a set of a 16-way L2,
// went to N in tiles at 4x the time of the gathered order. NumPy and PyTorch ask for 2 MiB
// pages for large arrays.
bool crowds_l2_sets(const std::vector<int64_t>& rows, const std::vector<int64_t>& cols, int size,
                    const GettOptions& options) {
  std::vector<int64_t> lines;
  lines.reserve(rows.size() * cols.size());
  for (int64_t r : rows)
    for (int64_t q : cols) lines.push_back((r + q) * size >> 6);
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  const int64_t sets = std::max<int64_t>(options.l2_set_span / 64, 1);
  std::vector<int64_t> in_set(static_cast<size_t>(sets), 0);
  for (int64_t line : lines)
    if (++in_set[static_cast<size_t>(((line % sets) + sets) % sets)] > options.l2_ways) return true;
  return false;
}

// The orders N and K are flattened in: N by O's strides (the micro-kernel's stores run along O's
// memory), by B's (B's packing copies rows), by O's with B's innermost index second (a packed
// panel gathers B's values along O's order, but the panels after it, B's innermost index next,
// read the same lines while they are still in cache) or in tiles (tiled_n); K by A's or by B's
// strides (a packing loop reads along K where the packed index is not contiguous), or in tiles
// (tiled_k). A cost in elements moved, weighted by how each is moved, decides: O is written once
// per K block, A packed once, B once per A block (mostly once: an A block is large). Per
// element: 0.3 for a vector or a copy, 1.5 for a transposing pack along K, 0.8 for a value
// gathered from a line the next panels read again (but 3.0 where a panel's rows cross so many
// pages that the TLBs miss, or crowd into a few sets of L2: crowds_l2_sets; 2.5 where that
// order's B blocks are then packed by lines: pack_block_by_lines), 1.0 for a value of
// O written alone into a line that stays in L2 until its next value comes (the lines written in
// between fit, and do not crowd into a few sets), else a gather (about 3.0). M is flattened by
// A's strides (its rows are addressed through a table anyway). `l2`: each thread's L2, in bytes.
template <typename T>
void choose_orders(const Contraction& c, const TensorView& a, const TensorView& b, const TensorView& o,
                   const std::vector<const TensorView*>& epilogue, Layout<T>& p, const GettOptions& options,
                   int64_t l2) {
  const int64_t kc = options.kc;
  using CI = ContractionIndex;
  std::vector<size_t> by_o = flatten_order(c.n, o, &CI::o), by_b = flatten_order(c.n, b, &CI::b), mixed = by_o;
  if (mixed.size() >= 2 && by_b.back() != mixed.back()) {
    mixed.erase(std::find(mixed.begin(), mixed.end(), by_b.back()));
    mixed.insert(mixed.end() - 1, by_b.back());
  }
  const std::vector<size_t>* n_orders[3] = {&by_o, &by_b, &mixed};
  const TileOrder n_tiles = tiled_n(c.n, o, b, p.uk.nr);
  std::vector<size_t> k_orders[2] = {flatten_order(c.k, a, &CI::a), flatten_order(c.k, b, &CI::b)};
  int64_t N = 1, K = 1;
  for (const auto& x : c.n) N *= x.hi - x.lo;
  for (const auto& x : c.k) K *= x.hi - x.lo;
  const double M = static_cast<double>(p.m.size);
  const double a_moves = M * static_cast<double>(K), b_moves = static_cast<double>(K) * static_cast<double>(N);
  const double o_moves = M * static_cast<double>(N) * std::ceil(static_cast<double>(K) / static_cast<double>(kc));
  const double a_rows = share(contiguous_panels(p.m.a, p.uk.mr));
  auto pack = [](double rows, bool along_k, double gathered) {
    return rows * 0.3 + (1 - rows) * (along_k ? 1.5 : gathered);
  };
  // O written a value at a time along N, `reuse` flat indices apart on each line (O's offsets of
  // those flat indices from `cols_of(reuse)`): 1.0 where the lines written in between stay in L2,
  // else twice `gathered`: a line written in part is read before it is written back (intensli6:
  // O(c,j,b,d,a) from B(a,k,d,b,c) and a sum of 48, 2.0 s with O's values written alone on
  // lines, by B's order or in tiles of c, whose 32 values 4.7 MB apart fit in L2 but in two of
  // its sets; 0.95 s along O's order, gathering B). The lines in between: a micro-tile's rows'
  // where the next value is in the same B block (run_task sweeps a block's columns one row of
  // micro-tiles at a time), else the A block's rows'.
  auto o_alone = [&](int64_t reuse, double gathered, auto cols_of) {
    if (reuse <= 0) return 2 * gathered;
    const int64_t rows = std::min<int64_t>(p.m.size, reuse < options.nc ? p.uk.mr : p.mc);
    const std::vector<int64_t> o_rows(p.m.o.begin(), p.m.o.begin() + rows);
    return rows * reuse * 64 <= l2 && !crowds_l2_sets(o_rows, cols_of(reuse), sizeof(T), options) ? 1.0
                                                                                                   : 2 * gathered;
  };
  const auto o_dim = [](const CI& x) { return x.o; };
  auto o_cost = [&](const std::vector<size_t>& order) {
    const int64_t run = run_length(c.n, order, o, &CI::o);
    const double inside = panel_share(run, N, p.uk.nr);
    auto cols_of = [&](int64_t count) { return offsets(c.n, order, o, o_dim, count); };
    return inside * 0.3 +
           (1 - inside) * o_alone(line_reuse_distance(c.n, order, o, &CI::o), crossing_cost(run, p.uk.nr), cols_of);
  };
  // B gathered along O's order with B's innermost index second, per K order: from lines the next
  // panels read again, unless a panel's rows cross more pages than a third of a 1536-entry
  // second-level TLB holds (intensli2's 16 rows of 72 steps of K 20 KiB apart: 1152 pages, 2.8x
  // the time of N in tiles). Only where that order differs from O's.
  double mixed_gather[2] = {3.0, 3.0};
  if (mixed != by_o) {
    const auto b_dim = [](const CI& x) { return x.b; };
    const std::vector<int64_t> rows = offsets(c.n, mixed, b, b_dim, p.uk.nr);
    for (int ki = 0; ki < 2; ++ki) {
      const std::vector<int64_t> k = offsets(c.k, k_orders[ki], b, b_dim, kc);
      const bool reread = p.uk.nr * pages_along(k, sizeof(T)) <= 512 && !crowds_l2_sets(rows, k, sizeof(T), options);
      mixed_gather[ki] = reread ? 0.8 : 3.0;
    }
  }
  const int tile = 64 / static_cast<int>(sizeof(T));  // a cache line
  Flat tiled = tiled_k(c.k, a, b, tile);
  // Per order of N (the last: in tiles), the cost of a value of O and the share of B's panels
  // that are rows: they do not depend on K's order.
  const int n_count = n_tiles.tile ? 4 : 3;
  double o_per[4] = {}, b_rows[4] = {};
  for (int ni = 0; ni < n_count; ++ni) {
    if (ni == 3) {  // N in tiles: the whole tiles' panels are runs of B; the last tile's gathered
      const ContractionIndex& x = c.n[n_tiles.tiled];
      const double X = static_cast<double>(x.hi - x.lo), whole = std::floor(X / n_tiles.tile) * n_tiles.tile / X;
      auto cols_of = [&](int64_t count) { return tiled_offsets(c.n, n_tiles, o, o_dim, count); };
      o_per[ni] = whole * o_alone(n_tiles.tile, 3.0, cols_of) + (1 - whole) * 3.0;
      b_rows[ni] = whole;
    } else {
      o_per[ni] = o_cost(*n_orders[ni]);
      b_rows[ni] = panel_share(run_length(c.n, *n_orders[ni], b, &CI::b), N, p.uk.nr);
    }
  }
  // Per order of K (the last: in tiles), whether A's and B's packings read along K.
  const int k_count = tiled.size == K ? 3 : 2;
  bool a_along[3] = {}, b_along[3] = {};
  for (int ki = 0; ki < k_count; ++ki) {
    a_along[ki] = ki == 2 || panel_share(run_length(c.k, k_orders[ki], a, &CI::a), K, 8) > 0.5 || K < 2;
    b_along[ki] = ki == 2 || panel_share(run_length(c.k, k_orders[ki], b, &CI::b), K, 8) > 0.5 || K < 2;
  }
  // B's blocks packed in B's memory order (pack_block_by_lines): where O's order with B's
  // innermost index second differs from O's, B's panels gather (neither rows nor runs along K)
  // and a panel's lines would not be read again (mixed_gather). 2.5 a value, a little under a
  // gather: intensli6 (float32) 0.93-1.04 s gathered along O's order, 0.28-0.32 s by lines;
  // where a panel's lines are read again, panel by panel is faster (intensli5: 78 ms against
  // 112 by lines), and against N in tiles by lines is not measured: tiles keep their place.
  auto by_lines = [&](int ki) {
    return mixed != by_o && b_rows[2] < 0.5 && !b_along[ki] && mixed_gather[std::min(ki, 1)] > 0.8;
  };
  double best = INFINITY;
  int best_n = 0, best_k = 0;
  for (int ni = 0; ni < n_count; ++ni)
    for (int ki = 0; ki < k_count; ++ki) {
      const double gathered = ni != 2 ? 3.0 : by_lines(ki) ? 2.5 : mixed_gather[std::min(ki, 1)];
      double cost = a_moves * pack(a_rows, a_along[ki], 3.0) + b_moves * pack(b_rows[ni], b_along[ki], gathered) +
                    o_moves * o_per[ni];
      if (cost < best) best = cost, best_n = ni, best_k = ki;
    }
  p.b_by_lines = best_n == 2 && by_lines(best_k);
  if (best_n == 3) {
    p.n = flatten(c.n, n_tiles, &o, nullptr, &b, epilogue);
    p.n_tiles = n_tiles;
  } else {
    p.n = flatten(c.n, *n_orders[best_n], &o, nullptr, &b, epilogue);
    p.n_order = *n_orders[best_n];
  }
  if (best_k == 2) {
    p.k = std::move(tiled);
    p.ka_step = tile;
  } else {
    p.k = flatten(c.k, k_orders[best_k], nullptr, &a, &b);
    p.k_order = k_orders[best_k];
  }
}

// The layout for these tensors up to the groups' orders: the micro-kernel and each group
// flattened (choose_orders).
template <typename T>
void lay_out(Layout<T>& p, const Contraction& c, const TensorView& a, const TensorView& b, const TensorView& o,
             const std::vector<const TensorView*>& epilogue, const GettOptions& options) {
  p.uk = options.isa.empty() ? host_microkernel<T>() : microkernel_for<T>(options.isa);
  if (!p.uk.run) fail(TC_ERROR_UNSUPPORTED, "cpu backend: this CPU has no " + options.isa + " micro-kernel");
  using CI = ContractionIndex;
  p.batch = flatten(c.batch, o, &CI::o, &o, &a, &b, epilogue);
  p.m_order = flatten_order(c.m, a, &CI::a);
  p.m = flatten(c.m, p.m_order, &o, &a, nullptr, epilogue);
  if (options.mc <= 0 || options.kc <= 0 || options.nc <= 0)
    fail(TC_ERROR_INTERNAL, "cpu backend: a contraction without block sizes");
  p.mc = std::max<int64_t>(options.mc / p.uk.mr * p.uk.mr, p.uk.mr);  // whole micro-panels
  choose_orders(c, a, b, o, epilogue, p, options, options.l2_bytes());
}

// The rest of the layout: the tables of contiguous panels and runs, the blocks, the tasks on up
// to `threads` threads (fewer for a small contraction: an MLP's narrow layer).
template <typename T>
void plan_tasks(Layout<T>& p, const Contraction& c, int threads, const GettOptions& options) {
  if (p.batch.size == 0 || p.m.size == 0 || p.n.size == 0) return;
  p.o_panels = contiguous_panels(p.n.o, p.uk.nr);
  for (const auto& e : p.n.e) p.e_panels.push_back(contiguous_panels(e, p.uk.nr));
  if (p.k.size == 0) return;
  p.a_panels = contiguous_panels(p.m.a, p.uk.mr);
  p.b_panels = contiguous_panels(p.n.b, p.uk.nr);
  p.ka_runs = contiguous_runs(p.k.a, p.ka_step);
  p.kb_runs = contiguous_runs(p.k.b);
  p.nc = std::max<int64_t>(options.nc / p.uk.nr * p.uk.nr, p.uk.nr);
  p.kc = options.kc;
  p.l2 = options.l2_bytes();
  p.threads = static_cast<int>(std::clamp<double>(c.flops() / std::max(options.flops_per_thread, 1.0), 1,
                                                  std::max(1, threads)));
  p.tasks = cut(p.batch.size, p.m.size, p.n.size, p.k.size, p.k_unit(), p.uk.mr, p.uk.nr, p.threads);
  if (p.tasks.size() > 1 && p.tasks[1].part > 0) {
    for (int64_t i = 0; i < p.m.size; ++i) p.partial_m.push_back(i * p.n.size);
    for (int64_t j = 0; j < p.n.size; ++j) p.partial_n.push_back(j);
  }
}

// The contraction's operands, its output and its epilogue's reads among the def's tensors.
struct Operands {
  const TensorView &a, &b, &o;
  std::vector<const TensorView*> epilogue;
};

Operands operands(const Contraction& c, const std::vector<TensorView>& tensors) {
  Operands x{tensors[static_cast<size_t>(c.a)], tensors[static_cast<size_t>(c.b)], tensors[static_cast<size_t>(c.o)], {}};
  for (int t : c.epilogue_reads) x.epilogue.push_back(&tensors[static_cast<size_t>(t)]);
  return x;
}

// What a layout depends on: the stage, the type, the threads, each operand's shape and strides.
std::vector<int64_t> layout_key(size_t stage, const Contraction& c, const Operands& x, int threads) {
  std::vector<int64_t> key{static_cast<int64_t>(stage), static_cast<int64_t>(c.type), threads};
  auto add = [&](const TensorView& v) {
    key.push_back(v.ndim);
    key.insert(key.end(), v.shape, v.shape + v.ndim);
    key.insert(key.end(), v.strides, v.strides + v.ndim);
  };
  add(x.a);
  add(x.b);
  add(x.o);
  for (const TensorView* v : x.epilogue) add(*v);
  return key;
}

template <typename T>
void run_typed(const Contraction& c, const Operands& x, int threads, const GettOptions& options, GettLayouts* layouts,
               const std::vector<int64_t>& key) {
  Layout<T> fresh;
  std::shared_ptr<const void> kept = layouts ? layouts->find(key) : nullptr;
  if (!kept) {
    lay_out(fresh, c, x.a, x.b, x.o, x.epilogue, options);
    plan_tasks(fresh, c, threads, options);
    if (layouts) {
      kept = std::make_shared<const Layout<T>>(std::move(fresh));
      layouts->keep(key, kept);
    }
  }
  Problem<T> p{kept ? *static_cast<const Layout<T>*>(kept.get()) : fresh};
  p.a = reinterpret_cast<const T*>(x.a.data);
  p.b = reinterpret_cast<const T*>(x.b.data);
  p.o = reinterpret_cast<T*>(x.o.data);
  p.accumulate = c.accumulate;
  p.epilogue = &c.epilogue;
  for (const TensorView* v : x.epilogue) p.e.push_back(reinterpret_cast<const T*>(v->data));
  if (p.l.batch.size == 0 || p.l.m.size == 0 || p.l.n.size == 0) return;
  if (p.l.k.size == 0) {  // an empty sum: `+=!` writes 0, `+=` leaves O as it is; the epilogue follows
    for (size_t bi = 0; bi < p.l.batch.o.size(); ++bi)
      for (int64_t i = 0; i < p.l.m.size; ++i) {
        if (!c.accumulate)
          for (int64_t ni : p.l.n.o) p.o[p.l.batch.o[bi] + p.l.m.o[static_cast<size_t>(i)] + ni] = T(0);
        if (!c.epilogue.empty())
          for (int64_t j = 0; j < p.l.n.size; j += p.l.uk.nr)
            apply_epilogue(p, bi, i, 1, j, std::min<int64_t>(p.l.uk.nr, p.l.n.size - j));
      }
    return;
  }
  std::unique_ptr<T[]> partial;
  if (!p.l.partial_m.empty()) {
    size_t elements = static_cast<size_t>(p.l.m.size * p.l.n.size) * (p.l.tasks.size() - 1);
    partial.reset(new (std::nothrow) T[elements]);
    if (!partial)
      fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory for the contraction's partial sums (" +
                                   std::to_string(elements * sizeof(T)) + " bytes)");
    p.partial = partial.get();
  }
  auto run = [&](runtime::Task entry, int count) {
    int status = runtime::parallel_for(p.l.threads, entry, nullptr, 0, count, reinterpret_cast<uint8_t*>(&p));
    if (status == runtime::kThreadStartFailed)
      fail(TC_ERROR_NO_MEMORY, "cpu backend: could not start a thread: " + runtime::thread_start_failure());
    if (status != 0) fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory for the contraction's packed blocks");
  };
  run(task_entry<T>, static_cast<int>(p.l.tasks.size()));
  if (p.partial) run(reduce_entry<T>, static_cast<int>((p.l.m.size + p.l.uk.mr - 1) / p.l.uk.mr));
}

// The most L3 one thread counts on. A server core has 2-5 MiB of L3 of its own (an EPYC's
// 8-core complex 32 MiB, Emerald Rapids 5 MiB a core); a VM is told its host's whole L3. On a
// 2-vCPU Emerald Rapids VM (L3 listed as 260 MiB), A blocks of 2-4 MiB against the whole of M
// (10.5 MiB): dgemm 5136^2 2335-2380 -> 1760-1820 ms, sgemm 934 -> 854.
constexpr int64_t kL3PerThread = int64_t{8} << 20;

int64_t round_down(int64_t v, int64_t to, int64_t lo, int64_t hi) { return std::clamp(v / to * to, lo, hi); }

template <typename T>
GettOptions blocking_for(const MemoryLevels& levels, int threads) {
  const MicroKernel<T>& uk = host_microkernel<T>();
  int64_t sz = sizeof(T);
  GettOptions b;
  // K blocks at least long enough for a B micro-panel to fill half of L1, and at least 32 steps
  // per vector lane: O's micro-tile is loaded and stored once per K block, and a wider vector
  // does the block's steps in fewer cycles, so the tile's traffic per cycle grows with the lanes
  // unless kc does (AVX2's 8 float lanes: 256 steps, as L1 gives; AVX-512's 16: 512, where half
  // of a 48 KiB L1 gave 192 and the B micro-panel now streams from L2).
  b.kc = round_down(std::max<int64_t>(levels.l1d / 2 / (uk.nr * sz), 32 * uk.lanes), 8, 64, 1024);
  // A B block in half of L2: the rest holds the A micro-panel, the A block's lines as it is
  // packed and the tiles of O passing through, and on a VM may be a neighbour's.
  b.nc = round_down(levels.l2 / 2 / (b.kc * sz), uk.nr, uk.nr, 4096 / uk.nr * uk.nr);
  // An A block in half of each thread's share of L3, the share at most kL3PerThread.
  const int64_t l3 = levels.l3 > 0 ? levels.l3 : int64_t{8} << 20;  // none reported: assumed
  const int64_t l3_share = std::min(l3 / std::max(1, threads), kL3PerThread);
  b.mc = round_down(l3_share / 2 / (b.kc * sz), uk.mr, uk.mr, 16384 / uk.mr * uk.mr);
  if (levels.l2_ways > 0) b.l2_ways = levels.l2_ways;
  b.l2_set_span = std::max<int64_t>(levels.l2 / b.l2_ways, 64);
  return b;
}

}  // namespace

GettOptions default_blocking(ScalarType type, const MemoryLevels& levels, int threads) {
  return type == ScalarType::Float64 ? blocking_for<double>(levels, threads) : blocking_for<float>(levels, threads);
}

std::string describe_gett(ScalarType type, const GettOptions& b) {
  auto text = [&](const char* isa, int mr, int nr) {
    return std::string("micro-kernel ") + isa + " " + std::to_string(mr) + "x" + std::to_string(nr) + ", blocks mc " +
           std::to_string(b.mc) + " kc " + std::to_string(b.kc) + " nc " + std::to_string(b.nc);
  };
  if (type == ScalarType::Float64) {
    auto uk = b.isa.empty() ? host_microkernel<double>() : microkernel_for<double>(b.isa);
    return text(uk.isa, uk.mr, uk.nr);
  }
  auto uk = b.isa.empty() ? host_microkernel<float>() : microkernel_for<float>(b.isa);
  return text(uk.isa, uk.mr, uk.nr);
}

namespace {

std::string names(const std::vector<ContractionIndex>& g, const std::vector<size_t>& order) {
  std::string out;
  for (size_t q : order) out += (out.empty() ? "" : " ") + g[q].name;
  return out.empty() ? "-" : out;
}

// "b c/16 a c%16": the other indices, the tiled index by tiles, the whole one, the tile's values.
std::string tiles(const std::vector<ContractionIndex>& g, const TileOrder& t) {
  const std::string rest = t.rest.empty() ? "" : names(g, t.rest) + " ", x = g[t.tiled].name, n = std::to_string(t.tile);
  return rest + x + "/" + n + " " + g[t.whole].name + " " + x + "%" + n;
}

template <typename T>
std::string layout_text(const Contraction& c, const Operands& x, const GettOptions& options) {
  Layout<T> p;
  lay_out(p, c, x.a, x.b, x.o, x.epilogue, options);
  return "M " + names(c.m, p.m_order) + "; N " + (p.n_tiles.tile ? tiles(c.n, p.n_tiles) : names(c.n, p.n_order)) +
         (p.b_by_lines ? " by lines" : "") + "; K " +
         (p.k_order.empty() && !c.k.empty() ? "in tiles" : names(c.k, p.k_order));
}

void run_stage(const Contraction& c, size_t stage, const std::vector<TensorView>& tensors, int threads,
               const GettOptions& options, GettLayouts* layouts) {
  const Operands x = operands(c, tensors);
  const std::vector<int64_t> key = layouts ? layout_key(stage, c, x, threads) : std::vector<int64_t>{};
  if (c.type == ScalarType::Float64) run_typed<double>(c, x, threads, options, layouts, key);
  else run_typed<float>(c, x, threads, options, layouts, key);
}

}  // namespace

std::string describe_layout(const Contraction& c, const std::vector<TensorView>& tensors, const GettOptions& options) {
  const Operands x = operands(c, tensors);
  return c.type == ScalarType::Float64 ? layout_text<double>(c, x, options) : layout_text<float>(c, x, options);
}

std::shared_ptr<const void> GettLayouts::find(const std::vector<int64_t>& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [k, layout] : kept_)
    if (k == key) return layout;
  return nullptr;
}

void GettLayouts::keep(std::vector<int64_t> key, std::shared_ptr<const void> layout) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (kept_.size() == kMost) kept_.erase(kept_.begin());
  kept_.emplace_back(std::move(key), std::move(layout));
}

size_t GettLayouts::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_.size();
}

void run_gett(const Contraction& c, const std::vector<TensorView>& tensors, int threads, const GettOptions& options) {
  run_stage(c, 0, tensors, threads, options, nullptr);
}

void run_contraction_plan(const ContractionPlan& plan, const ir::BoundDef& bound, const std::vector<TensorView>& inputs,
                          const std::vector<TensorView>& outputs, int threads, const GettOptions& options,
                          GettLayouts* layouts) {
  ir::CallTensors call = ir::call_tensors(bound, inputs, outputs, "cpu backend");
  for (size_t s = 0; s < plan.stages.size(); ++s) run_stage(plan.stages[s], s, call.views, threads, options, layouts);
}

}  // namespace tc::backends::cpu
