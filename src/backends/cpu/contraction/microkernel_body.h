// microkernel_body.h — the register-blocked micro-kernel (microkernel.h) as a template over a
// vector ISA's operations, included by one file per ISA inside its target pragma, so the
// same loop is compiled for each (TC_MICROKERNEL: one kernel function of it). Nothing else may
// be defined here: code compiled for AVX-512 must not be shared (inline, template) with code
// that runs on CPUs without it.
//
// V: the vector type; Ops: static zero, load (aligned), loadu, storeu, broadcast, fma (a*b+c,
// one rounding); T: the element type; MR rows, NV vectors of Ops::kLanes values per row.
#pragma once

namespace tc::backends::cpu::ukernel {

template <typename Ops, typename T, int MR, int NV>
inline __attribute__((always_inline)) void tile(int64_t kc, const T* __restrict a, const T* __restrict b, T* c,
                                                const int64_t* rows, bool add, const void* const* fetch,
                                                int fetches) {
  constexpr int L = Ops::kLanes;
  typename Ops::V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = Ops::zero();
  auto step = [&]() __attribute__((always_inline)) {
    typename Ops::V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = Ops::load(b + v * L);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      typename Ops::V x = Ops::broadcast(a + r);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = Ops::fma(x, bv[v], acc[r][v]);
    }
    a += MR;
    b += NV * L;
  };
  // The tile's rows of C (out of cache, each in lines of its own; a row not aligned to a line
  // spans one more) are read or written at the end. Fetched into L2 one line per step while the
  // sum starts, not all at once: a burst of misses to memory would hold the line-fill buffers
  // that the micro-panels' loads from L2 need (and the fetches past them are dropped: a scratch
  // tile's 30-odd lines of the output fetched before the call were missing when it was copied).
  constexpr int64_t kRowBytes = int64_t{NV} * L * static_cast<int64_t>(sizeof(T));
  // Steps before the end at which they are fetched into L1: enough for an L2 hit's latency, few
  // enough that the micro-panels streaming through L1 meanwhile do not evict them.
  constexpr int64_t kFetchCToL1Steps = 32;
  int64_t k = 0;
  // c's own rows are walked in place, not listed into an array like `fetch` and then walked by
  // one loop: listing them cost 1-2% of sgemm 1024^3 and 5136^2 (pairs of processes).
  if (fetch) {
    for (int q = 0; q < fetches; ++q) {
      __builtin_prefetch(fetch[q], 1, 2);
      if (k < kc) step(), ++k;
    }
  } else {
    for (int r = 0; r < MR; ++r) {
      const uintptr_t row = reinterpret_cast<uintptr_t>(c + rows[r]);
      for (uintptr_t line = row & ~uintptr_t{63}; line < row + kRowBytes; line += 64) {
        __builtin_prefetch(reinterpret_cast<const void*>(line), 1, 2);
        if (k < kc) step(), ++k;
      }
    }
  }
  // Four steps a turn: with one, the loop's counter, compare and branch took issue slots on the
  // multiply-add ports once every 24 multiply-adds, which a float64 tile (half the work per
  // step of a float one) felt most.
#pragma GCC unroll 4
  for (; k < kc - kFetchCToL1Steps; ++k) step();
  if (fetch) {
    for (int q = 0; q < fetches; ++q) __builtin_prefetch(fetch[q], 1, 3);
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const char* row = reinterpret_cast<const char*>(c + rows[r]);
      __builtin_prefetch(row, 1, 3);
      __builtin_prefetch(row + kRowBytes - 1, 1, 3);
      if (kRowBytes > 64) __builtin_prefetch(row + 64, 1, 3);
    }
  }
  for (; k < kc; ++k) step();
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    T* row = c + rows[r];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      typename Ops::V x = acc[r][v];
      if (add) x = Ops::add(Ops::loadu(row + v * L), x);
      Ops::storeu(row + v * L, x);
    }
  }
}

}  // namespace tc::backends::cpu::ukernel

// A micro-kernel (MicroKernelFn) of the ISA the including file compiles for: `tile` for that
// ISA's operations OPS on T, MR rows of NV vectors. Aligned to a cache line, so that the sum's
// loop lies the same way against the lines of code whatever is compiled before it: the same
// kernel at other offsets, moved by changes elsewhere in its file, ran 4-6% slower (ccsd9 to
// ccsd18 in float64, pairs of processes).
#define TC_MICROKERNEL(NAME, OPS, T, MR, NV)                                                         \
  __attribute__((aligned(64))) void NAME(int64_t kc, const T* a, const T* b, T* c, const int64_t* rows, \
                                         bool add, const void* const* fetch, int fetches) {           \
    ukernel::tile<OPS, T, MR, NV>(kc, a, b, c, rows, add, fetch, fetches);                           \
  }
