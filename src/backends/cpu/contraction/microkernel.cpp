// microkernel.cpp — see microkernel.h: the portable scalar kernels (4 x 4, fused multiply-adds
// as std::fma: the same one rounding per step as the vector kernels) and the choice per CPU.
#include "backends/cpu/contraction/microkernel.h"

#include <cmath>

namespace tc::backends::cpu {

namespace {

template <typename T, int MR, int NR>
void scalar_tile(int64_t kc, const T* a, const T* b, T* c, const int64_t* rows, bool add, const void* const*, int) {
  T acc[MR][NR] = {};
  for (int64_t k = 0; k < kc; ++k, a += MR, b += NR)
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) acc[r][j] = std::fma(a[r], b[j], acc[r][j]);
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) c[rows[r] + j] = add ? c[rows[r] + j] + acc[r][j] : acc[r][j];
}

bool has_avx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool has_avx2() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace

MicroKernel<float> scalar_f32() { return {4, 4, scalar_tile<float, 4, 4>, "scalar", nullptr, 1}; }
MicroKernel<double> scalar_f64() { return {4, 4, scalar_tile<double, 4, 4>, "scalar", nullptr, 1}; }

template <>
MicroKernel<float> microkernel_for<float>(const std::string& isa) {
  if (isa == "avx512") return has_avx512() ? avx512_f32() : MicroKernel<float>{};
  if (isa == "avx2") return has_avx2() ? avx2_f32() : MicroKernel<float>{};
  return scalar_f32();
}

template <>
MicroKernel<double> microkernel_for<double>(const std::string& isa) {
  if (isa == "avx512") return has_avx512() ? avx512_f64() : MicroKernel<double>{};
  if (isa == "avx2") return has_avx2() ? avx2_f64() : MicroKernel<double>{};
  return scalar_f64();
}

template <typename T>
const MicroKernel<T>& host_microkernel() {
  static const MicroKernel<T> kBest = [] {
    for (const char* isa : {"avx512", "avx2"})
      if (MicroKernel<T> k = microkernel_for<T>(isa); k.run) return k;
    return microkernel_for<T>("scalar");
  }();
  return kBest;
}

template const MicroKernel<float>& host_microkernel<float>();
template const MicroKernel<double>& host_microkernel<double>();

}  // namespace tc::backends::cpu
