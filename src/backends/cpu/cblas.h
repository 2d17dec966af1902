// cblas.h — the system's CBLAS (OpenBLAS, BLIS, the reference BLAS), loaded with dlopen on
// first use for the cpu.blas route (gemm_route.h): libtc neither links nor requires one. Only
// sgemm and dgemm are bound, and OpenBLAS's thread-count setter where the library has it.
#pragma once

#include <string>
#include <vector>

namespace tc::backends::cpu {

struct Cblas {
  // CBLAS's enum values (cblas.h), which every implementation shares.
  static constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  using Sgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                         const float* b, int ldb, float beta, float* c, int ldc);
  using Dgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, double alpha, const double* a,
                         int lda, const double* b, int ldb, double beta, double* c, int ldc);
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  void (*set_threads)(int) = nullptr;  // openblas_set_num_threads; null elsewhere
  std::string path;                    // the candidate that loaded

  // $TC_CBLAS (a path or soname) alone when set; else OpenBLAS, BLIS, then Debian's libblas.so.3
  // (the alternative the system selected: OpenBLAS, BLIS or the reference BLAS).
  static std::vector<std::string> default_candidates();
  explicit Cblas(const std::vector<std::string>& candidates);  // throws TC_ERROR_UNSUPPORTED naming each try
};

// The process's CBLAS, loaded once; null when none loads (`why` then says what was tried).
const Cblas* cblas(std::string* why = nullptr);

}  // namespace tc::backends::cpu
