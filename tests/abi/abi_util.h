/* abi_util.h — small helpers shared by the cmocka ABI tests (public header only). */
#ifndef TC_TESTS_ABI_UTIL_H
#define TC_TESTS_ABI_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <tc/tc.h>

#define MM_SRC "def mm(float(M,K) lhs, float(K,N) rhs) -> (out) { out(i,j) +=! lhs(i,k) * rhs(k,j) }"

static inline DLDataType dt_f32(void) {
  DLDataType t = {kDLFloat, 32, 1};
  return t;
}
static inline DLDataType dt_f64(void) {
  DLDataType t = {kDLFloat, 64, 1};
  return t;
}
static inline DLDataType dt_i32(void) {
  DLDataType t = {kDLInt, 32, 1};
  return t;
}

/* A CPU DLTensor over caller-owned data/shape/strides (strides may be NULL). */
static inline DLTensor make_tensor(void *data, DLDataType dtype, int ndim, int64_t *shape, int64_t *strides) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 0;
  return t;
}

/* Defines `src`, failing the test on error (prints the library's message). */
static inline tc_program *define_ok(const char *src) {
  tc_program *p = NULL;
  int rc = tc_define(&p, src);
  if (rc != TC_OK) print_error("tc_define failed (%d): %s\n", rc, tc_last_error_message());
  assert_int_equal(rc, TC_OK);
  assert_non_null(p);
  return p;
}

/* Asserts that `status` is the expected error and that the thread's message is non-empty. */
#define assert_fails_with(call, expected)                                         \
  do {                                                                            \
    int rc_ = (call);                                                             \
    if (rc_ != (expected))                                                        \
      print_error("%s returned %d (%s), message: %s\n", #call, rc_, tc_strerror(rc_), \
                  tc_last_error_message());                                       \
    assert_int_equal(rc_, (expected));                                            \
    assert_non_null(tc_last_error_message());                                     \
    assert_true(strlen(tc_last_error_message()) > 0);                             \
  } while (0)

#define assert_tc_ok(call)                                                        \
  do {                                                                            \
    int rc_ = (call);                                                             \
    if (rc_ != TC_OK)                                                             \
      print_error("%s returned %d (%s), message: %s\n", #call, rc_, tc_strerror(rc_), \
                  tc_last_error_message());                                       \
    assert_int_equal(rc_, TC_OK);                                                 \
  } while (0)

/* Fills a with a deterministic pattern of small values (exact in float). */
static inline void fill_pattern(float *a, size_t n, int seed) {
  for (size_t i = 0; i < n; ++i) a[i] = (float)((int)((i * 7 + (size_t)seed * 13) % 11) - 5) * 0.5f;
}

/* Reference row-major matmul, accumulating in double. */
static inline void ref_matmul(const float *A, const float *B, float *C, int64_t M, int64_t K, int64_t N) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += (double)A[i * K + k] * (double)B[k * N + j];
      C[i * N + j] = (float)s;
    }
}

static inline void assert_close(float got, float want) {
  float d = got - want;
  if (d < 0) d = -d;
  float tol = 1e-4f * (1.0f + (want < 0 ? -want : want));
  if (d > tol) print_error("got %g, want %g\n", (double)got, (double)want);
  assert_true(d <= tol);
}

#endif
