// microkernel_body.h — the register-blocked micro-kernel (microkernel.h) as a template over a
// vector ISA's operations, included by one file per ISA inside its target pragma, so the
// same loop is compiled for each. Nothing else may be defined here: code compiled for AVX-512
// must not be shared (inline, template) with code that runs on CPUs without it.
//
// V: the vector type; Ops: static zero, load (aligned), loadu, storeu, broadcast, fma (a*b+c,
// one rounding); T: the element type; MR rows, NV vectors of Ops::kLanes values per row.
#pragma once

namespace tc::backends::cpu::ukernel {

template <typename Ops, typename T, int MR, int NV>
inline __attribute__((always_inline)) void tile(int64_t kc, const T* __restrict a, const T* __restrict b, T* c,
                                                const int64_t* rows, bool add) {
  constexpr int L = Ops::kLanes;
  // The tile's rows of C are read or written at the end: fetched now, while the sum runs (C is
  // out of cache, each row in a line of its own).
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    __builtin_prefetch(c + rows[r], 1);
    __builtin_prefetch(c + rows[r] + NV * L - 1, 1);
  }
  typename Ops::V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = Ops::zero();
  for (int64_t k = 0; k < kc; ++k) {
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
  }
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
