/* test_hostile.c — the hostile-input matrix: every input below gets its documented status and
 * a message, and nothing crashes, hangs, leaks (run under ASan in CI) or writes outside the
 * outputs (canaries around every output buffer). */
#include "abi_util.h"

#define has(fragment) assert_non_null(strstr(tc_last_error_message(), (fragment)))

static char *repeat(const char *head, const char *unit, size_t n, const char *tail) {
  size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
  char *s = malloc(hl + ul * n + tl + 1);
  assert_non_null(s);
  memcpy(s, head, hl);
  for (size_t i = 0; i < n; ++i) memcpy(s + hl + i * ul, unit, ul);
  memcpy(s + hl + ul * n, tail, tl + 1);
  return s;
}

static void test_non_utf8_source(void **state) {
  (void)state;
  tc_program *p = NULL;
  assert_fails_with(tc_define(&p, "def f(float(N) A) -> (B) { B(i) = A(i) \xff\xfe }"), TC_ERROR_SYNTAX);
  has("byte 0xff");
  assert_null(p);
}

static void test_ten_megabyte_sources(void **state) {
  (void)state;
  /* 10 MB of comment before a valid def: accepted */
  char *ok = repeat("", "# padding padding padding padding padding padding padding padding padding\n", 140000,
                    "def f(float(N) A) -> (B) { B(i) = A(i) }\n");
  assert_true(strlen(ok) > 10 * 1000 * 1000);
  tc_program *p = NULL;
  assert_tc_ok(tc_define(&p, ok));
  tc_program_destroy(p);
  free(ok);
  /* 10 MB of garbage: a syntax error at the first bad token */
  char *bad = repeat("def f(float(N) A) -> (B) { B(i) = A(i) ", "@@@@@@@@@@", 1000000, "}");
  assert_fails_with(tc_define(&p, bad), TC_ERROR_SYNTAX);
  has("1:40: error");
  free(bad);
}

static void test_deep_nesting_is_reported(void **state) {
  (void)state;
  tc_program *p = NULL;
  char *parens = repeat("def f(float(N) A) -> (B) { B(i) = ", "(", 100000, "A(i) }");
  assert_fails_with(tc_define(&p, parens), TC_ERROR_SYNTAX);
  has("nested too deeply");
  free(parens);
  char *chain = repeat("def f(float(N) A) -> (B) { B(i) = A(i)", " + A(i)", 100000, " }");
  assert_fails_with(tc_define(&p, chain), TC_ERROR_SYNTAX);
  has("nested too deeply");
  free(chain);
  char *unary = repeat("def f(float(N) A) -> (B) { B(i) = ", "-", 100000, "A(i) }");
  assert_fails_with(tc_define(&p, unary), TC_ERROR_SYNTAX);
  free(unary);
}

static void test_ten_thousand_statements(void **state) {
  (void)state;
  size_t cap = 10000 * 40 + 200, len = 0;
  char *src = malloc(cap);
  len += (size_t)snprintf(src + len, cap - len, "def f(float(N) A) -> (O) {\n t0(i) = A(i)\n");
  for (int k = 1; k < 10000; ++k) len += (size_t)snprintf(src + len, cap - len, " t%d(i) = t%d(i) + 1\n", k, k - 1);
  snprintf(src + len, cap - len, " O(i) = t9999(i)\n}\n");
  tc_program *p = define_ok(src);
  free(src);
  float a[3] = {1, 2, 3}, o[3];
  int64_t s[1] = {3};
  DLTensor in = make_tensor(a, dt_f32(), 1, s, NULL), out = make_tensor(o, dt_f32(), 1, s, NULL);
  tc_kernel *k = NULL;
  /* the cpu backend (default) refuses pipelines this long, with a hint */
  assert_int_equal(tc_compile(&k, p, NULL, &in, 1, NULL), TC_ERROR_UNSUPPORTED);
  assert_non_null(strstr(tc_last_error_message(), "backend=reference"));
  tc_options *opt = NULL;
  assert_tc_ok(tc_options_create(&opt));
  assert_tc_ok(tc_options_set(opt, "backend", "reference"));
  assert_tc_ok(tc_compile(&k, p, NULL, &in, 1, opt));
  tc_options_destroy(opt);
  assert_tc_ok(tc_run(k, &in, 1, &out, 1));
  for (int i = 0; i < 3; ++i) assert_true(o[i] == a[i] + 9999);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_let_expansion_is_bounded(void **state) {
  (void)state;
  tc_program *p = NULL;
  /* each let doubles the tree: 2^40 nodes if inlined naively */
  char *src = repeat("def f(float(N) A) -> (B) { B(i) = x40 where x0 = A(i)", "", 0, "");
  size_t cap = strlen(src) + 40 * 40 + 8;
  src = realloc(src, cap);
  for (int k = 1; k <= 40; ++k) snprintf(src + strlen(src), cap - strlen(src), ", x%d = x%d * x%d", k, k - 1, k - 1);
  snprintf(src + strlen(src), cap - strlen(src), " }");
  assert_fails_with(tc_define(&p, src), TC_ERROR_SEMANTIC);
  has("too large");
  free(src);
}

static void test_rank_above_max_in_tensors(void **state) {
  (void)state;
  tc_program *p = define_ok("def f(float(N) A) -> (B) { B(i) = A(i) }");
  int64_t shape[TC_MAX_NDIM + 1];
  for (int d = 0; d <= TC_MAX_NDIM; ++d) shape[d] = 1;
  float x = 1;
  DLTensor in = make_tensor(&x, dt_f32(), TC_MAX_NDIM + 1, shape, NULL);
  tc_tensor_info info = TC_STRUCT_INIT(tc_tensor_info);
  size_t n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, &in, 1, &info, &n), TC_ERROR_SHAPE);
  has("expected rank 1, got 17");
  tc_program_destroy(p);
}

static void test_sizes_overflowing_int64(void **state) {
  (void)state;
  tc_program *p = define_ok("def f(float(A,B,C,D) X) -> (Y) { Y(a,b,c,d) = X(a,b,c,d) }");
  int64_t huge[4] = {2147483647, 2147483647, 2147483647, 2147483647};
  DLTensor in = make_tensor(NULL, dt_f32(), 4, huge, NULL);
  tc_tensor_info info = TC_STRUCT_INIT(tc_tensor_info);
  size_t n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, &in, 1, &info, &n), TC_ERROR_UNSUPPORTED);
  has("too many elements");
  int64_t too_big[4] = {1, 1, 1, (int64_t)1 << 40};
  in = make_tensor(NULL, dt_f32(), 4, too_big, NULL);
  assert_fails_with(tc_infer_outputs(p, NULL, &in, 1, &info, &n), TC_ERROR_UNSUPPORTED);
  has("dimension 3");
  int64_t negative[4] = {1, -2, 1, 1};
  in = make_tensor(NULL, dt_f32(), 4, negative, NULL);
  assert_fails_with(tc_infer_outputs(p, NULL, &in, 1, &info, &n), TC_ERROR_SHAPE);
  has("negative");
  tc_program_destroy(p);
}

static void test_zero_size_dimensions(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  tc_kernel *k = NULL;
  float a[1], b[6], c[6] = {9, 9, 9, 9, 9, 9};
  int64_t as[2] = {2, 0}, bs[2] = {0, 3}, cs[2] = {2, 3};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};
  DLTensor out = make_tensor(c, dt_f32(), 2, cs, NULL);
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  for (int i = 0; i < 6; ++i) assert_true(c[i] == 0); /* empty sums */
  tc_kernel_destroy(k);
  int64_t as0[2] = {0, 4}, bs0[2] = {4, 3}, cs0[2] = {0, 3};
  DLTensor in0[2] = {make_tensor(NULL, dt_f32(), 2, as0, NULL), make_tensor(b, dt_f32(), 2, bs0, NULL)};
  DLTensor out0 = make_tensor(NULL, dt_f32(), 2, cs0, NULL); /* no elements: data may be NULL */
  float bb[12] = {0};
  in0[1].data = bb;
  assert_tc_ok(tc_compile(&k, p, NULL, in0, 2, NULL));
  assert_tc_ok(tc_run(k, in0, 2, &out0, 1));
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_negative_strides_rejected(void **state) {
  (void)state;
  tc_program *p = define_ok("def f(float(N) A) -> (B) { B(i) = A(i) }");
  float a[4] = {1, 2, 3, 4}, b[4];
  int64_t s[1] = {4}, neg[1] = {-1};
  DLTensor in = make_tensor(a + 3, dt_f32(), 1, s, neg), out = make_tensor(b, dt_f32(), 1, s, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, &in, 1, NULL));
  assert_fails_with(tc_run(k, &in, 1, &out, 1), TC_ERROR_SHAPE);
  has("negative stride");
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* A stride beyond 32 bits: the cpu backend's generated code indexes with 32-bit strides, so it
 * refuses, naming the tensor and dimension (the reference backend has no such limit). Nothing
 * is read: the check comes before the call. */
static void test_stride_beyond_32_bits(void **state) {
  (void)state;
  tc_program *p = define_ok("def f(float(N) A) -> (B) { B(i) = A(i) * 2 }");
  static float a[1] = {3};
  float b[2] = {0, 0};
  int64_t s[1] = {2}, huge[1] = {(int64_t)1 << 32};
  DLTensor meta = make_tensor(NULL, dt_f32(), 1, s, NULL);
  DLTensor in = make_tensor(a, dt_f32(), 1, s, huge), out = make_tensor(b, dt_f32(), 1, s, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, &meta, 1, NULL));
  assert_fails_with(tc_run(k, &in, 1, &out, 1), TC_ERROR_UNSUPPORTED);
  has("input 'A' dimension 0");
  has("4294967296");
  assert_true(b[0] == 0 && b[1] == 0);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_misaligned_data_works(void **state) {
  (void)state;
  tc_program *p = define_ok("def f(double(N) A) -> (B) { B(i) = A(i) * 2 }");
  unsigned char in_buf[8 * 4 + 1], out_buf[8 * 4 + 1];
  double vals[4] = {1.5, -2, 3.25, 8};
  memcpy(in_buf + 1, vals, sizeof vals);
  int64_t s[1] = {4};
  DLTensor in = make_tensor(in_buf, dt_f64(), 1, s, NULL), out = make_tensor(out_buf, dt_f64(), 1, s, NULL);
  in.byte_offset = 1; /* not 8-byte aligned */
  out.byte_offset = 1;
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, &in, 1, NULL));
  assert_tc_ok(tc_run(k, &in, 1, &out, 1));
  double got[4];
  memcpy(got, out_buf + 1, sizeof got);
  for (int i = 0; i < 4; ++i) assert_true(got[i] == vals[i] * 2);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_device_and_lanes_mismatch(void **state) {
  (void)state;
  tc_program *p = define_ok("def f(float(N) A) -> (B) { B(i) = A(i) }");
  float a[4] = {0}, b[4];
  int64_t s[1] = {4};
  DLTensor in = make_tensor(a, dt_f32(), 1, s, NULL), out = make_tensor(b, dt_f32(), 1, s, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, &in, 1, NULL));
  DLTensor gpu = in;
  gpu.device.device_type = kDLCUDA;
  assert_fails_with(tc_run(k, &gpu, 1, &out, 1), TC_ERROR_SHAPE);
  has("device");
  DLTensor vec = in;
  vec.dtype.lanes = 4;
  assert_fails_with(tc_run(k, &vec, 1, &out, 1), TC_ERROR_SHAPE);
  has("float32x4");
  tc_tensor_info info = TC_STRUCT_INIT(tc_tensor_info);
  size_t n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, &vec, 1, &info, &n), TC_ERROR_SHAPE);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* Outputs written through strided views inside a larger buffer: gaps and both ends untouched. */
static void test_canaries_around_strided_outputs(void **state) {
  (void)state;
  tc_program *p = define_ok("def f(float(M,N) A) -> (B, C) { B(i,j) = A(i,j) + 1\n C(j) +=! A(i,j) }");
  float a[3 * 4];
  fill_pattern(a, 12, 3);
  int64_t as[2] = {3, 4}, bs[2] = {3, 4}, cs[1] = {4};
  DLTensor in = make_tensor(a, dt_f32(), 2, as, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, &in, 1, NULL));
  enum { PAD = 16 };
  float bbuf[PAD + 3 * 8 + PAD], cbuf[PAD + 4 * 3 + PAD];
  for (size_t i = 0; i < sizeof bbuf / sizeof *bbuf; ++i) bbuf[i] = -777;
  for (size_t i = 0; i < sizeof cbuf / sizeof *cbuf; ++i) cbuf[i] = -777;
  int64_t bstr[2] = {8, 2}, cstr[1] = {3}; /* every other column; every third element */
  DLTensor outs[2] = {make_tensor(bbuf + PAD, dt_f32(), 2, bs, bstr), make_tensor(cbuf + PAD, dt_f32(), 1, cs, cstr)};
  assert_tc_ok(tc_run(k, &in, 1, outs, 2));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 8; ++j) {
      float v = bbuf[PAD + i * 8 + j];
      if (j % 2 == 0) assert_true(v == a[i * 4 + j / 2] + 1);
      else assert_true(v == -777);
    }
  for (int i = 0; i < PAD; ++i) assert_true(bbuf[i] == -777 && bbuf[PAD + 24 + i] == -777);
  for (int j = 0; j < 12; ++j) {
    float v = cbuf[PAD + j];
    if (j % 3 == 0) assert_true(v == a[j / 3] + a[4 + j / 3] + a[8 + j / 3]);
    else assert_true(v == -777);
  }
  for (int i = 0; i < PAD; ++i) assert_true(cbuf[i] == -777 && cbuf[PAD + 12 + i] == -777);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_bad_gather_index_is_reported(void **state) {
  (void)state;
  tc_program *p = define_ok("def g(float(E,D) L, int32(B) I) -> (O) { O(b,d) = L(I(b), d) }");
  float lut[3 * 2] = {1, 2, 3, 4, 5, 6}, o[2 * 2 + 8];
  int32_t idx[2] = {1, 7};
  int64_t ls[2] = {3, 2}, is[1] = {2}, os[2] = {2, 2};
  DLTensor in[2] = {make_tensor(lut, dt_f32(), 2, ls, NULL), make_tensor(idx, dt_i32(), 1, is, NULL)};
  DLTensor out = make_tensor(o, dt_f32(), 2, os, NULL);
  for (int i = 0; i < 12; ++i) o[i] = -1;
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  assert_fails_with(tc_run(k, in, 2, &out, 1), TC_ERROR_RUNTIME);
  has("index 7");
  has("extent is 3");
  has("b=1");
  for (int i = 4; i < 12; ++i) assert_true(o[i] == -1); /* nothing written past the output */
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_non_utf8_source),
      cmocka_unit_test(test_ten_megabyte_sources),
      cmocka_unit_test(test_deep_nesting_is_reported),
      cmocka_unit_test(test_ten_thousand_statements),
      cmocka_unit_test(test_let_expansion_is_bounded),
      cmocka_unit_test(test_rank_above_max_in_tensors),
      cmocka_unit_test(test_sizes_overflowing_int64),
      cmocka_unit_test(test_zero_size_dimensions),
      cmocka_unit_test(test_negative_strides_rejected),
      cmocka_unit_test(test_stride_beyond_32_bits),
      cmocka_unit_test(test_misaligned_data_works),
      cmocka_unit_test(test_device_and_lanes_mismatch),
      cmocka_unit_test(test_canaries_around_strided_outputs),
      cmocka_unit_test(test_bad_gather_index_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
