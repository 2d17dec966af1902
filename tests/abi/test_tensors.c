/* test_tensors.c — tc_run with real data: layouts, offsets, 0-d tensors, output validation. */
#include <math.h>

#include "abi_util.h"

enum { M = 5, K = 7, N = 3 };

/* Compiles MM_SRC for MxK * KxN (data NULL at compile time). */
static tc_kernel *compile_mm(const tc_options *opt) {
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {M, K}, bs[2] = {K, N};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, NULL), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, opt));
  assert_non_null(k);
  tc_program_destroy(p); /* the kernel outlives the program */
  return k;
}

static void check_mm(const float *c, const float *a, const float *b) {
  float want[M * N];
  ref_matmul(a, b, want, M, K, N);
  for (int i = 0; i < M * N; ++i) assert_close(c[i], want[i]);
}

static void test_matmul_row_major(void **state) {
  (void)state;
  tc_options *opt = NULL;
  assert_tc_ok(tc_options_create(&opt));
  assert_tc_ok(tc_options_set(opt, "backend", "reference"));
  tc_kernel *k = compile_mm(opt);
  tc_options_destroy(opt); /* the kernel outlives its options */

  float a[M * K], b[K * N], c[M * N];
  fill_pattern(a, M * K, 1);
  fill_pattern(b, K * N, 2);
  for (int i = 0; i < M * N; ++i) c[i] = 12345.0f; /* '+=!' must initialise */
  int64_t as[2] = {M, K}, bs[2] = {K, N}, cs[2] = {M, N};
  int64_t ast[2] = {K, 1}; /* explicit row-major strides for one input, NULL for the rest */
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, ast), make_tensor(b, dt_f32(), 2, bs, NULL)};
  DLTensor out = make_tensor(c, dt_f32(), 2, cs, NULL);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  check_mm(c, a, b);
  /* running again gives the same result ('+=!' re-initialises) */
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  check_mm(c, a, b);
  /* inputs are not modified */
  float a2[M * K];
  fill_pattern(a2, M * K, 1);
  assert_memory_equal(a, a2, sizeof a);
  tc_kernel_destroy(k);
}

static void test_matmul_fortran_order_and_offsets(void **state) {
  (void)state;
  tc_kernel *k = compile_mm(NULL);
  float a[M * K], b[K * N], want[M * N];
  fill_pattern(a, M * K, 3);
  fill_pattern(b, K * N, 4);
  ref_matmul(a, b, want, M, K, N);

  /* lhs in column-major order */
  float af[M * K];
  for (int i = 0; i < M; ++i)
    for (int kk = 0; kk < K; ++kk) af[kk * M + i] = a[i * K + kk];
  /* rhs inside a bigger buffer at a byte offset, with a padded row stride */
  enum { PAD = 2, OFF = 3 };
  float bbuf[OFF + K * (N + PAD)];
  for (size_t i = 0; i < sizeof bbuf / sizeof bbuf[0]; ++i) bbuf[i] = -999.0f;
  for (int kk = 0; kk < K; ++kk)
    for (int j = 0; j < N; ++j) bbuf[OFF + kk * (N + PAD) + j] = b[kk * N + j];
  /* output column-major, at a byte offset in a bigger buffer */
  float cbuf[1 + M * N];
  for (size_t i = 0; i < sizeof cbuf / sizeof cbuf[0]; ++i) cbuf[i] = 777.0f;

  int64_t as[2] = {M, K}, ast[2] = {1, M};
  int64_t bs[2] = {K, N}, bst[2] = {N + PAD, 1};
  int64_t cs[2] = {M, N}, cst[2] = {1, M};
  DLTensor in[2] = {make_tensor(af, dt_f32(), 2, as, ast), make_tensor(bbuf, dt_f32(), 2, bs, bst)};
  in[1].byte_offset = OFF * sizeof(float);
  DLTensor out = make_tensor(cbuf, dt_f32(), 2, cs, cst);
  out.byte_offset = sizeof(float);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  assert_true(cbuf[0] == 777.0f); /* before the offset: untouched */
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) assert_close(cbuf[1 + j * M + i], want[i * N + j]);
  /* padding of rhs untouched */
  assert_true(bbuf[0] == -999.0f && bbuf[OFF + N] == -999.0f);
  tc_kernel_destroy(k);
}

static void test_zero_d_tensors(void **state) {
  (void)state;
  /* 0-d input and 0-d output */
  tc_program *p = define_ok(
      "def scale(float(N) x, float s) -> (y) { y(i) = x(i) * s }\n"
      "def total(float(N) x) -> (t) { t +=! x(i) }\n");
  float x[4] = {1, 2, 3, 4}, s = 2.5f, y[4] = {0}, t = -1;
  int64_t xs[1] = {4}, ys[1] = {4};
  int64_t dummy[1] = {0};
  DLTensor in[2] = {make_tensor(x, dt_f32(), 1, xs, NULL), make_tensor(&s, dt_f32(), 0, dummy, NULL)};
  size_t no = 1;
  tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
  assert_tc_ok(tc_infer_outputs(p, "scale", in, 2, &ti, &no));
  assert_int_equal(ti.ndim, 1);
  assert_int_equal(ti.shape[0], 4);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, "scale", in, 2, NULL));
  DLTensor out = make_tensor(y, dt_f32(), 1, ys, NULL);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  for (int i = 0; i < 4; ++i) assert_close(y[i], x[i] * 2.5f);
  /* a 0-d tensor with NULL shape and NULL strides */
  in[1].shape = NULL;
  s = -1.0f;
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  for (int i = 0; i < 4; ++i) assert_close(y[i], -x[i]);
  tc_kernel_destroy(k);

  no = 1;
  assert_tc_ok(tc_infer_outputs(p, "total", in, 1, &ti, &no));
  assert_int_equal(ti.ndim, 0);
  assert_tc_ok(tc_compile(&k, p, "total", in, 1, NULL));
  size_t c = 0;
  assert_tc_ok(tc_kernel_num_outputs(k, &c));
  assert_int_equal(c, 1);
  assert_tc_ok(tc_kernel_output_info(k, 0, &ti));
  assert_int_equal(ti.ndim, 0);
  DLTensor tout = make_tensor(&t, dt_f32(), 0, dummy, NULL);
  assert_tc_ok(tc_run(k, in, 1, &tout, 1));
  assert_close(t, 10.0f);
  /* a 0-d output given with rank 1 is a shape error */
  int64_t one[1] = {1};
  DLTensor bad = make_tensor(&t, dt_f32(), 1, one, NULL);
  assert_fails_with(tc_run(k, in, 1, &bad, 1), TC_ERROR_SHAPE);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_accumulate_without_bang(void **state) {
  (void)state;
  tc_program *p = define_ok("def acc(float(M,K) A, float(K) v) -> (y) { y(i) += A(i,k) * v(k) }");
  float A[6] = {1, 2, 3, 4, 5, 6}, v[3] = {1, 1, 2}, y[2] = {100, 200};
  int64_t as[2] = {2, 3}, vs[1] = {3}, ys[1] = {2};
  DLTensor in[2] = {make_tensor(A, dt_f32(), 2, as, NULL), make_tensor(v, dt_f32(), 1, vs, NULL)};
  DLTensor out = make_tensor(y, dt_f32(), 1, ys, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  assert_close(y[0], 100 + 1 + 2 + 6);
  assert_close(y[1], 200 + 4 + 5 + 12);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  assert_close(y[0], 100 + 2 * 9);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* Which outputs tc_run sets whole, whatever they held: '=' and '+=!' over the whole tensor and a
 * scatter with '!' do; '+=', a first writer over part of the tensor, and reading the output
 * before it is written do not. The claim is then checked by running on outputs full of NaN. */
static void test_output_overwritten(void **state) {
  (void)state;
  tc_program *p = define_ok(
      "def f(float(N) a, int32(N) ix) -> (plain, bang, acc, part, float(N) hist, later) {\n"
      "  plain(i) = a(i) * 2\n"
      "  bang(j) +=! a(i) * a(j)\n"
      "  acc(j) += a(j)\n"
      "  part(i) = 1 where i in 0:2\n"
      "  part(i) = a(i) where i in 2:N\n"
      "  hist(ix(i)) +=! 1.0\n"
      "  later(i) = plain(i) + acc(i)\n"
      "}\n");
  float a[4] = {1, 2, 3, 4};
  int32_t ix[4] = {0, 3, 3, 1};
  int64_t s4[1] = {4};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 1, s4, NULL), make_tensor(ix, dt_i32(), 1, s4, NULL)};
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, "f", in, 2, NULL));
  const int expected[6] = {1, 1, 0, 0, 1, 1};
  for (size_t o = 0; o < 6; ++o) {
    int overwritten = -1;
    assert_tc_ok(tc_kernel_output_overwritten(k, o, &overwritten));
    assert_int_equal(overwritten, expected[o]);
  }
  int overwritten = -1;
  assert_fails_with(tc_kernel_output_overwritten(k, 6, &overwritten), TC_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(tc_last_error_message(), "output index 6 is out of range (the kernel has 6)"));
  assert_fails_with(tc_kernel_output_overwritten(k, 0, NULL), TC_ERROR_INVALID_ARGUMENT);
  /* The outputs said to be set whole come out right from memory full of NaN. */
  float out[6][4];
  DLTensor outs[6];
  for (int o = 0; o < 6; ++o) {
    for (int i = 0; i < 4; ++i) out[o][i] = expected[o] ? NAN : 0.0f;
    outs[o] = make_tensor(out[o], dt_f32(), 1, s4, NULL);
  }
  assert_tc_ok(tc_run(k, in, 2, outs, 6));
  for (int i = 0; i < 4; ++i) {
    assert_close(out[0][i], 2 * a[i]);
    assert_close(out[1][i], 10 * a[i]);
    assert_close(out[5][i], 3 * a[i]);
  }
  const float hist[4] = {1, 1, 0, 2};
  for (int i = 0; i < 4; ++i) assert_close(out[4][i], hist[i]);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_unchecked_option_runs(void **state) {
  (void)state;
  tc_options *opt = NULL;
  assert_tc_ok(tc_options_create(&opt));
  assert_tc_ok(tc_options_set(opt, "checked", "0"));
  tc_kernel *k = compile_mm(opt);
  tc_options_destroy(opt);
  float a[M * K], b[K * N], c[M * N];
  fill_pattern(a, M * K, 5);
  fill_pattern(b, K * N, 6);
  int64_t as[2] = {M, K}, bs[2] = {K, N}, cs[2] = {M, N};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};
  DLTensor out = make_tensor(c, dt_f32(), 2, cs, NULL);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  check_mm(c, a, b);
  tc_kernel_destroy(k);
}

static void test_bad_outputs(void **state) {
  (void)state;
  tc_kernel *k = compile_mm(NULL);
  float a[M * K], b[K * N], c[M * N * 2];
  fill_pattern(a, M * K, 7);
  fill_pattern(b, K * N, 8);
  int64_t as[2] = {M, K}, bs[2] = {K, N};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};

  /* wrong extent in dimension 1: message names the tensor and the dimension */
  int64_t wrong[2] = {M, N + 1};
  DLTensor out = make_tensor(c, dt_f32(), 2, wrong, NULL);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);
  const char *msg = tc_last_error_message();
  print_message("shape message: %s\n", msg);
  assert_non_null(strstr(msg, "out"));
  assert_non_null(strstr(msg, "1"));
  char num[16];
  snprintf(num, sizeof num, "%d", N);
  assert_non_null(strstr(msg, num)); /* expected */
  snprintf(num, sizeof num, "%d", N + 1);
  assert_non_null(strstr(msg, num)); /* got */

  /* wrong rank, wrong dtype, vector dtype */
  int64_t cs[2] = {M, N}, r1[1] = {M * N};
  out = make_tensor(c, dt_f32(), 1, r1, NULL);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "out"));
  out = make_tensor(c, dt_f64(), 2, cs, NULL);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "out"));
  DLDataType f32x2 = {kDLFloat, 32, 2};
  out = make_tensor(c, f32x2, 2, cs, NULL);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);

  /* inputs with other shapes than compiled for */
  int64_t bs2[2] = {K, N + 1};
  DLTensor in2[2] = {in[0], make_tensor(b, dt_f32(), 2, bs2, NULL)};
  out = make_tensor(c, dt_f32(), 2, cs, NULL);
  assert_fails_with(tc_run(k, in2, 2, &out, 1), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "rhs"));
  in2[1] = make_tensor(b, dt_f64(), 2, bs, NULL);
  assert_fails_with(tc_run(k, in2, 2, &out, 1), TC_ERROR_SHAPE);

  /* overlapping strides: stride 0 on an extent>1 dimension of an output */
  int64_t st0[2] = {N, 0};
  out = make_tensor(c, dt_f32(), 2, cs, st0);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);
  int64_t st_small[2] = {1, 1}; /* rows overlap */
  out = make_tensor(c, dt_f32(), 2, cs, st_small);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);
  /* negative strides are not allowed */
  int64_t st_neg[2] = {N, -1};
  out = make_tensor(c + N - 1, dt_f32(), 2, cs, st_neg);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);

  /* output aliasing an input */
  float ab[M * K > M * N ? M * K : M * N];
  memcpy(ab, a, sizeof a);
  DLTensor in3[2] = {make_tensor(ab, dt_f32(), 2, as, NULL), in[1]};
  out = make_tensor(ab, dt_f32(), 2, cs, NULL);
  assert_fails_with(tc_run(k, in3, 2, &out, 1), TC_ERROR_SHAPE);

  /* inputs may overlap themselves: rhs with stride 0 on dimension 0 (every row the same) */
  float row[N];
  fill_pattern(row, N, 9);
  int64_t bst0[2] = {0, 1};
  DLTensor in4[2] = {in[0], make_tensor(row, dt_f32(), 2, bs, bst0)};
  out = make_tensor(c, dt_f32(), 2, cs, NULL);
  assert_tc_ok(tc_run(k, in4, 2, &out, 1));
  float bexp[K * N], want0[M * N];
  for (int kk = 0; kk < K; ++kk) memcpy(bexp + kk * N, row, sizeof row);
  ref_matmul(a, bexp, want0, M, K, N);
  for (int i = 0; i < M * N; ++i) assert_close(c[i], want0[i]);

  /* output strides that leave gaps are fine */
  int64_t st_gap[2] = {2 * N, 2};
  out = make_tensor(c, dt_f32(), 2, cs, st_gap);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  float want[M * N];
  ref_matmul(a, b, want, M, K, N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) assert_close(c[i * 2 * N + j * 2], want[i * N + j]);
  tc_kernel_destroy(k);
}

static void test_two_outputs_overlapping(void **state) {
  (void)state;
  tc_program *p = define_ok("def two(float(N) A) -> (B, C) {\n  B(i) = A(i) + 1\n  C(i) = A(i) * 2\n}\n");
  float a[4] = {1, 2, 3, 4}, buf[8];
  int64_t s[1] = {4};
  DLTensor in = make_tensor(a, dt_f32(), 1, s, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, &in, 1, NULL));
  tc_program_destroy(p);
  DLTensor outs[2] = {make_tensor(buf, dt_f32(), 1, s, NULL), make_tensor(buf + 2, dt_f32(), 1, s, NULL)};
  assert_fails_with(tc_run(k, &in, 1, outs, 2), TC_ERROR_SHAPE);
  outs[1].data = buf; /* the same memory */
  assert_fails_with(tc_run(k, &in, 1, outs, 2), TC_ERROR_SHAPE);
  outs[1].data = buf + 4;
  assert_tc_ok(tc_run(k, &in, 1, outs, 2));
  for (int i = 0; i < 4; ++i) {
    assert_close(buf[i], a[i] + 1);
    assert_close(buf[4 + i], a[i] * 2);
  }
  /* the second output at a byte offset into the first one's buffer */
  outs[1].data = buf;
  outs[1].byte_offset = 3 * sizeof(float);
  assert_fails_with(tc_run(k, &in, 1, outs, 2), TC_ERROR_SHAPE);
  tc_kernel_destroy(k);
}

/* Outputs that interleave (stride 2, offsets 0 and 1) share no element: tc.h rejects only
 * outputs "that overlap another output". Fixture so that a failure does not leak. */
static int setup_two(void **state) {
  tc_program *p = NULL;
  if (tc_define(&p, "def two(float(N) A) -> (B, C) {\n  B(i) = A(i) + 1\n  C(i) = A(i) * 2\n}\n") != TC_OK)
    return -1;
  int64_t s[1] = {4};
  DLTensor in = make_tensor(NULL, dt_f32(), 1, s, NULL);
  tc_kernel *k = NULL;
  int rc = tc_compile(&k, p, NULL, &in, 1, NULL);
  tc_program_destroy(p);
  *state = k;
  return rc == TC_OK ? 0 : -1;
}
static int teardown_kernel(void **state) {
  tc_kernel_destroy(*state);
  return 0;
}

/* tc.h documents the overlap check as conservative: interleaved outputs (disjoint elements,
 * intersecting spans) are rejected, and the message names both outputs. */
static void test_interleaved_outputs_rejected(void **state) {
  const tc_kernel *k = *state;
  float a[4] = {1, 2, 3, 4}, buf[8];
  int64_t s[1] = {4}, st[1] = {2};
  DLTensor in = make_tensor(a, dt_f32(), 1, s, NULL);
  DLTensor outs[2] = {make_tensor(buf, dt_f32(), 1, s, st), make_tensor(buf + 1, dt_f32(), 1, s, st)};
  assert_fails_with(tc_run(k, &in, 1, outs, 2), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "overlaps"));
}

static void test_more_overlapping_strides(void **state) {
  (void)state;
  tc_kernel *k = compile_mm(NULL);
  float a[M * K], b[K * N], c[4 * M * N];
  fill_pattern(a, M * K, 11);
  fill_pattern(b, K * N, 12);
  int64_t as[2] = {M, K}, bs[2] = {K, N}, cs[2] = {M, N};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};
  /* rows overlap by one element: row stride N-1 */
  int64_t st1[2] = {N - 1, 1};
  DLTensor out = make_tensor(c, dt_f32(), 2, cs, st1);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);
  /* column-major with too small a column stride */
  int64_t st2[2] = {1, M - 1};
  out = make_tensor(c, dt_f32(), 2, cs, st2);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);
  /* both strides equal */
  int64_t st3[2] = {2, 2};
  out = make_tensor(c, dt_f32(), 2, cs, st3);
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_SHAPE);
  /* output overlapping part of an input */
  float big[M * K + M * N];
  memcpy(big, a, sizeof a);
  DLTensor in2[2] = {make_tensor(big, dt_f32(), 2, as, NULL), in[1]};
  out = make_tensor(big + M * K - 1, dt_f32(), 2, cs, NULL);
  assert_fails_with(tc_run(k, in2, 2, &out, 1), TC_ERROR_SHAPE);
  /* ... and right after it is fine */
  out = make_tensor(big + M * K, dt_f32(), 2, cs, NULL);
  assert_tc_ok(tc_run(k, in2, 2, &out, 1));
  check_mm(big + M * K, a, b);
  /* transposed (column-major) output with exact strides is fine */
  int64_t st4[2] = {1, M};
  out = make_tensor(c, dt_f32(), 2, cs, st4);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  float want[M * N];
  ref_matmul(a, b, want, M, K, N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) assert_close(c[j * M + i], want[i * N + j]);
  tc_kernel_destroy(k);
}

static void test_compile_layout_independent(void **state) {
  (void)state;
  /* compile with Fortran strides and a byte offset (data NULL), run with row-major */
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {M, K}, bs[2] = {K, N}, cs[2] = {M, N}, ast[2] = {1, M};
  DLTensor cin[2] = {make_tensor(NULL, dt_f32(), 2, as, ast), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  cin[1].byte_offset = 64;
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, cin, 2, NULL));
  tc_program_destroy(p);
  float a[M * K], b[K * N], c[M * N];
  fill_pattern(a, M * K, 13);
  fill_pattern(b, K * N, 14);
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};
  DLTensor out = make_tensor(c, dt_f32(), 2, cs, NULL);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  check_mm(c, a, b);
  tc_kernel_destroy(k);
}

static void test_empty_extents(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  /* K = 0: an empty reduction; '+=!' leaves the identity */
  float a[1], b[1], c[3 * 2];
  for (int i = 0; i < 6; ++i) c[i] = 7;
  int64_t as[2] = {3, 0}, bs[2] = {0, 2}, cs[2] = {3, 2};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};
  tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
  size_t n = 1;
  assert_tc_ok(tc_infer_outputs(p, NULL, in, 2, &ti, &n));
  assert_int_equal(ti.shape[0], 3);
  assert_int_equal(ti.shape[1], 2);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  DLTensor out = make_tensor(c, dt_f32(), 2, cs, NULL);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  for (int i = 0; i < 6; ++i) assert_true(c[i] == 0.0f);
  tc_kernel_destroy(k);
  /* M = 0: an empty output */
  int64_t as2[2] = {0, 4}, bs2[2] = {4, 2}, cs2[2] = {0, 2};
  float b2[8] = {0};
  DLTensor in2[2] = {make_tensor(a, dt_f32(), 2, as2, NULL), make_tensor(b2, dt_f32(), 2, bs2, NULL)};
  n = 1;
  assert_tc_ok(tc_infer_outputs(p, NULL, in2, 2, &ti, &n));
  assert_int_equal(ti.shape[0], 0);
  assert_int_equal(ti.shape[1], 2);
  assert_tc_ok(tc_compile(&k, p, NULL, in2, 2, NULL));
  c[0] = 5;
  out = make_tensor(c, dt_f32(), 2, cs2, NULL);
  assert_tc_ok(tc_run(k, in2, 2, &out, 1));
  assert_true(c[0] == 5); /* nothing written */
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_other_dtypes(void **state) {
  (void)state;
  /* double and int32 through the ABI, and bool as {TC_DL_BOOL, 8, 1} */
  tc_program *p = define_ok(
      "def dadd(double(N) a, double(N) b) -> (c) { c(i) = a(i) + b(i) }\n"
      "def isum(int32(N) a) -> (s) { s +=! a(i) }\n"
      "def bsel(bool(N) m, float(N) x) -> (y) { y(i) = m(i) ? x(i) : -x(i) }\n");
  double da[3] = {1.5, 2.5, -1}, db[3] = {0.25, 1, 1}, dc[3];
  int64_t s3[1] = {3};
  DLTensor din[2] = {make_tensor(da, dt_f64(), 1, s3, NULL), make_tensor(db, dt_f64(), 1, s3, NULL)};
  DLTensor dout = make_tensor(dc, dt_f64(), 1, s3, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, "dadd", din, 2, NULL));
  tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
  assert_tc_ok(tc_kernel_output_info(k, 0, &ti));
  assert_int_equal(ti.dtype.code, kDLFloat);
  assert_int_equal(ti.dtype.bits, 64);
  assert_tc_ok(tc_run(k, din, 2, &dout, 1));
  assert_true(dc[0] == 1.75 && dc[1] == 3.5 && dc[2] == 0);
  tc_kernel_destroy(k);

  int32_t ia[3] = {7, -2, 40}, is = 0;
  int64_t dummy[1] = {0};
  DLTensor iin = make_tensor(ia, dt_i32(), 1, s3, NULL);
  DLTensor iout = make_tensor(&is, dt_i32(), 0, dummy, NULL);
  assert_tc_ok(tc_compile(&k, p, "isum", &iin, 1, NULL));
  assert_tc_ok(tc_kernel_output_info(k, 0, &ti));
  assert_int_equal(ti.dtype.code, kDLInt);
  assert_int_equal(ti.dtype.bits, 32);
  assert_tc_ok(tc_run(k, &iin, 1, &iout, 1));
  assert_int_equal(is, 45);
  tc_kernel_destroy(k);

  tc_param_info pi = TC_STRUCT_INIT(tc_param_info);
  assert_tc_ok(tc_program_input_info(p, "bsel", 0, &pi));
  assert_int_equal(pi.dtype.code, TC_DL_BOOL);
  assert_int_equal(pi.dtype.bits, 8);
  assert_int_equal(pi.dtype.lanes, 1);
  uint8_t m[3] = {1, 0, 1};
  float x[3] = {1, 2, 3}, y[3];
  DLDataType dbool = {TC_DL_BOOL, 8, 1};
  DLTensor bin[2] = {make_tensor(m, dbool, 1, s3, NULL), make_tensor(x, dt_f32(), 1, s3, NULL)};
  DLTensor bout = make_tensor(y, dt_f32(), 1, s3, NULL);
  assert_tc_ok(tc_compile(&k, p, "bsel", bin, 2, NULL));
  assert_tc_ok(tc_run(k, bin, 2, &bout, 1));
  assert_true(y[0] == 1 && y[1] == -2 && y[2] == 3);
  tc_kernel_destroy(k);
  /* a uint8 tensor is not a bool tensor */
  DLDataType du8 = {kDLUInt, 8, 1};
  bin[0].dtype = du8;
  assert_fails_with(tc_compile(&k, p, "bsel", bin, 2, NULL), TC_ERROR_SHAPE);
  tc_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_row_major),
      cmocka_unit_test(test_matmul_fortran_order_and_offsets),
      cmocka_unit_test(test_zero_d_tensors),
      cmocka_unit_test(test_accumulate_without_bang),
      cmocka_unit_test(test_output_overwritten),
      cmocka_unit_test(test_unchecked_option_runs),
      cmocka_unit_test(test_bad_outputs),
      cmocka_unit_test(test_two_outputs_overlapping),
      cmocka_unit_test_setup_teardown(test_interleaved_outputs_rejected, setup_two, teardown_kernel),
      cmocka_unit_test(test_more_overlapping_strides),
      cmocka_unit_test(test_compile_layout_independent),
      cmocka_unit_test(test_empty_extents),
      cmocka_unit_test(test_other_dtypes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
