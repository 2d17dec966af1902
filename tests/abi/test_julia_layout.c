/* test_julia_layout.c — the C side of the Julia binding (bindings/julia/TensorComprehensions),
 * proven without Julia (not installable here). Each test makes exactly the libtc calls the
 * binding makes for one testset of its test/runtests.jl, with the same data, dtypes and
 * layouts: a Julia array is lent as data = pointer(a) (its first element), shape = size(a),
 * strides = strides(a) in elements, byte_offset 0 — column-major, so TC's A(i,j) is Julia's
 * A[i+1,j+1]; compile always creates an options object, sets the keyword options, compiles,
 * destroys it, then reads the kernel's outputs; run allocates zero-filled column-major
 * outputs of those sizes. Values are checked against loops over Julia's column-major layout.
 */
#include "abi_util.h"

#define JULIA_MM "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"

static DLDataType dt(uint8_t code, uint8_t bits) {
  DLDataType t = {code, bits, 1};
  return t;
}

/* compile(p, entry, inputs...; options...): options = NULL-terminated key, value pairs. */
static int julia_compile(tc_kernel **kernel, const tc_program *p, const char *entry, const DLTensor *in,
                         size_t n, const char *const *options) {
  tc_options *opts = NULL;
  int rc = tc_options_create(&opts);
  if (rc != TC_OK) return rc;
  for (const char *const *kv = options; kv && kv[0]; kv += 2)
    if ((rc = tc_options_set(opts, kv[0], kv[1])) != TC_OK) break;
  if (rc == TC_OK) rc = tc_compile(kernel, p, entry, in, n, opts);
  tc_options_destroy(opts);
  return rc;
}

/* The Kernel constructor's queries; returns the number of outputs and fills infos. */
static size_t julia_kernel_outputs(const tc_kernel *k, tc_tensor_info *infos, size_t cap) {
  size_t count = 0;
  assert_tc_ok(tc_kernel_num_outputs(k, &count));
  assert_true(count <= cap);
  for (size_t i = 0; i < count; ++i) assert_tc_ok(tc_kernel_output_info(k, i, &infos[i]));
  return count;
}

/* Julia's strides(zeros(T, size...)): column-major. */
static void column_major_strides(int ndim, const int64_t *size, int64_t *strides) {
  int64_t s = 1;
  for (int d = 0; d < ndim; ++d) {
    strides[d] = s;
    s *= size[d];
  }
}

/* @testset "matmul on column-major arrays" */
static void test_julia_matmul(void **state) {
  (void)state;
  float A[3 * 4], B[4 * 2]; /* A[i,j] at (i-1) + 3(j-1), 1-based like Julia */
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 4; ++j) A[(i - 1) + 3 * (j - 1)] = (float)(i - 2 * j);
  for (int i = 1; i <= 4; ++i)
    for (int j = 1; j <= 2; ++j) B[(i - 1) + 4 * (j - 1)] = (float)((i + j) % 3);
  int64_t a_size[2] = {3, 4}, a_strides[2] = {1, 3}, b_size[2] = {4, 2}, b_strides[2] = {1, 4};
  DLTensor in[2] = {make_tensor(A, dt_f32(), 2, a_size, a_strides), make_tensor(B, dt_f32(), 2, b_size, b_strides)};

  tc_program *p = NULL;
  assert_tc_ok(tc_define(&p, JULIA_MM)); /* tc_define(MM) */
  size_t ndefs = 0;                      /* defs(prog) */
  const char *name = NULL;
  assert_tc_ok(tc_program_num_defs(p, &ndefs));
  assert_int_equal(ndefs, 1);
  assert_tc_ok(tc_program_def_name(p, 0, &name));
  assert_string_equal(name, "mm");

  size_t count = 0; /* infer_outputs(prog, "mm", A, B): count, then the infos */
  assert_tc_ok(tc_infer_outputs(p, "mm", in, 2, NULL, &count));
  assert_int_equal(count, 1);
  tc_tensor_info inferred[1];
  assert_tc_ok(tc_infer_outputs(p, "mm", in, 2, inferred, &count));
  assert_int_equal(inferred[0].ndim, 2);
  assert_int_equal(inferred[0].shape[0], 3); /* (Float32, (3, 2)) */
  assert_int_equal(inferred[0].shape[1], 2);
  assert_int_equal(inferred[0].dtype.code, kDLFloat);

  tc_kernel *k = NULL; /* compile(prog, "mm", A, B; backend="reference") */
  const char *const options[] = {"backend", "reference", NULL};
  assert_tc_ok(julia_compile(&k, p, "mm", in, 2, options));
  tc_tensor_info out_info[1];
  assert_int_equal(julia_kernel_outputs(k, out_info, 1), 1);
  assert_int_equal(out_info[0].shape[0], 3);
  assert_int_equal(out_info[0].shape[1], 2);

  float C[3 * 2] = {0}; /* run(k, A, B): zeros(Float32, 3, 2) */
  int64_t c_size[2] = {3, 2}, c_strides[2];
  column_major_strides(2, c_size, c_strides);
  DLTensor out = make_tensor(C, dt_f32(), 2, c_size, c_strides);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      float want = 0;
      for (int q = 0; q < 4; ++q) want += A[i + 3 * q] * B[q + 4 * j];
      assert_true(C[i + 3 * j] == want); /* C == A * B (small integers: exact) */
    }
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* @testset "strided views, no copies" */
static void test_julia_views(void **state) {
  (void)state;
  float P[6 * 5], Bp[2 * 4], Cbig[3 * 5];
  for (int i = 1; i <= 6; ++i)
    for (int j = 1; j <= 5; ++j) P[(i - 1) + 6 * (j - 1)] = (float)((i * 7 + j) % 9 - 4);
  for (int i = 1; i <= 2; ++i)
    for (int j = 1; j <= 4; ++j) Bp[(i - 1) + 2 * (j - 1)] = (float)((i + 2 * j) % 5);
  for (int i = 0; i < 15; ++i) Cbig[i] = -1.0f;
  /* A = view(P, 2:2:6, 1:4): first element P[2,1]; strides (2, 6). */
  int64_t a_size[2] = {3, 4}, a_strides[2] = {2, 6};
  /* B = PermutedDimsArray(Bp, (2, 1)): 4×2, strides (2, 1). */
  int64_t b_size[2] = {4, 2}, b_strides[2] = {2, 1};
  DLTensor in[2] = {make_tensor(&P[1], dt_f32(), 2, a_size, a_strides),
                    make_tensor(Bp, dt_f32(), 2, b_size, b_strides)};
  float want[3 * 2]; /* Array(A) * Array(B), column-major */
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      float s = 0;
      for (int q = 0; q < 4; ++q) s += P[(1 + 2 * i) + 6 * q] * Bp[j + 2 * q];
      want[i + 3 * j] = s;
    }

  tc_program *p = NULL;
  assert_tc_ok(tc_define(&p, JULIA_MM));
  tc_kernel *k = NULL;
  assert_tc_ok(julia_compile(&k, p, "mm", in, 2, NULL)); /* no keyword options */
  tc_tensor_info info[1];
  assert_int_equal(julia_kernel_outputs(k, info, 1), 1);

  float C[3 * 2] = {0}; /* run(k, A, B) */
  int64_t c_size[2] = {3, 2}, c_strides[2];
  column_major_strides(2, c_size, c_strides);
  DLTensor out = make_tensor(C, dt_f32(), 2, c_size, c_strides);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  for (int i = 0; i < 6; ++i) assert_true(C[i] == want[i]);

  /* run!(k, (view(Cbig, :, 2:2:4),), A, B): first element Cbig[1,2]; strides (1, 6). */
  int64_t cv_strides[2] = {1, 6};
  DLTensor view = make_tensor(&Cbig[3], dt_f32(), 2, c_size, cv_strides);
  assert_tc_ok(tc_run(k, in, 2, &view, 1));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      float got = Cbig[i + 3 * j];
      if (j == 1 || j == 3)
        assert_true(got == want[i + 3 * (j / 2)]);
      else
        assert_true(got == -1.0f); /* nothing else touched */
    }
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* @testset "0-d input, several outputs, element types" */
static void test_julia_scalar_and_several_outputs(void **state) {
  (void)state;
  const char *src =
      "def f(int32(N) A, uint8(N) B, double s) -> (gt, inc, scaled, total) {\n"
      "  gt(i) = A(i) > int32(B(i))\n"
      "  inc(i) = B(i) + 1\n"
      "  scaled(i) = double(A(i)) * s\n"
      "  total +=! A(i)\n"
      "}";
  int32_t A[4] = {-1, 5, 300, 7};
  uint8_t B[4] = {0, 5, 255, 6};
  double s = 0.5; /* fill(0.5): a 0-d array; size() and strides() are empty vectors */
  int64_t n_size[1] = {4}, unit[1] = {1}, empty[1] = {0};
  DLTensor in[3] = {make_tensor(A, dt_i32(), 1, n_size, unit), make_tensor(B, dt(kDLUInt, 8), 1, n_size, unit),
                    make_tensor(&s, dt_f64(), 0, empty, empty)};
  tc_program *p = NULL;
  assert_tc_ok(tc_define(&p, src));
  tc_kernel *k = NULL;
  assert_tc_ok(julia_compile(&k, p, "f", in, 3, NULL));
  tc_tensor_info info[4];
  assert_int_equal(julia_kernel_outputs(k, info, 4), 4);
  assert_int_equal(info[0].dtype.code, TC_DL_BOOL); /* Bool */
  assert_int_equal(info[1].dtype.code, kDLUInt);    /* UInt8 */
  assert_int_equal(info[2].dtype.bits, 64);         /* Float64 */
  assert_int_equal(info[3].ndim, 0);                /* Array{Int32,0} */
  assert_int_equal(info[3].dtype.code, kDLInt);

  uint8_t gt[4] = {0}, inc[4] = {0}; /* Julia Bool is one byte */
  double scaled[4] = {0};
  int32_t total = 0;
  DLTensor out[4] = {make_tensor(gt, dt(TC_DL_BOOL, 8), 1, n_size, unit),
                     make_tensor(inc, dt(kDLUInt, 8), 1, n_size, unit),
                     make_tensor(scaled, dt_f64(), 1, n_size, unit), make_tensor(&total, dt_i32(), 0, empty, empty)};
  assert_tc_ok(tc_run(k, in, 3, out, 4));
  const uint8_t want_gt[4] = {0, 0, 1, 1}, want_inc[4] = {1, 6, 0, 7};
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(gt[i], want_gt[i]);
    assert_int_equal(inc[i], want_inc[i]); /* uint8 wraps */
    assert_true(scaled[i] == (double)A[i] * 0.5);
  }
  assert_int_equal(total, -1 + 5 + 300 + 7);

  /* The same with NULL shape/strides for the 0-d tensors, in case a Julia version passes
   * NULL for an empty vector. */
  in[2].shape = in[2].strides = NULL;
  out[3].shape = out[3].strides = NULL;
  total = 0;
  assert_tc_ok(tc_run(k, in, 3, out, 4));
  assert_int_equal(total, 311);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* @testset "accumulation into caller arrays" */
static void test_julia_accumulate(void **state) {
  (void)state;
  float A[3] = {1, 2, 3}, B[3] = {10, 20, 30};
  int64_t size[1] = {3}, unit[1] = {1};
  DLTensor in = make_tensor(A, dt_f32(), 1, size, unit), out = make_tensor(B, dt_f32(), 1, size, unit);
  tc_program *p = NULL;
  assert_tc_ok(tc_define(&p, "def acc(float(N) A) -> (B) { B(i) += A(i) }"));
  tc_kernel *k = NULL;
  assert_tc_ok(julia_compile(&k, p, "acc", &in, 1, NULL));
  tc_tensor_info info[1];
  julia_kernel_outputs(k, info, 1);
  assert_tc_ok(tc_run(k, &in, 1, &out, 1)); /* run!(k, B, A) twice */
  assert_tc_ok(tc_run(k, &in, 1, &out, 1));
  assert_true(B[0] == 12 && B[1] == 24 && B[2] == 36);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* @testset "errors" */
static void test_julia_errors(void **state) {
  (void)state;
  tc_program *p = NULL;
  assert_fails_with(tc_define_named(&p, "def f(float(N) A) -> (B) {\n  B(i) = A(i) +\n}", "f.tc"), TC_ERROR_SYNTAX);
  assert_null(p);
  assert_true(strncmp(tc_last_error_message(), "f.tc:3:1: error: expected an expression", 39) == 0);

  assert_tc_ok(tc_define(&p, JULIA_MM));
  float A[2 * 3] = {0}, Bbad[4 * 2] = {0}, B[3 * 2] = {0};
  int64_t a_size[2] = {2, 3}, a_strides[2] = {1, 2}, bbad_size[2] = {4, 2}, bbad_strides[2] = {1, 4};
  int64_t b_size[2] = {3, 2}, b_strides[2] = {1, 3};
  DLTensor bad[2] = {make_tensor(A, dt_f32(), 2, a_size, a_strides), make_tensor(Bbad, dt_f32(), 2, bbad_size, bbad_strides)};
  tc_kernel *k = NULL;
  assert_fails_with(julia_compile(&k, p, "mm", bad, 2, NULL), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "size 'K' is 3"));

  DLTensor in[2] = {make_tensor(A, dt_f32(), 2, a_size, a_strides), make_tensor(B, dt_f32(), 2, b_size, b_strides)};
  const char *const bad_option[] = {"backend", "no-such-backend", NULL};
  assert_fails_with(julia_compile(&k, p, "mm", in, 2, bad_option), TC_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(tc_last_error_message(), "option 'backend' cannot be 'no-such-backend'"));
  assert_null(k);

  assert_tc_ok(julia_compile(&k, p, "mm", in, 2, NULL));
  tc_tensor_info info[1];
  julia_kernel_outputs(k, info, 1);
  float C[2 * 2] = {0};
  int64_t c_size[2] = {2, 2}, c_strides[2] = {1, 2};
  DLTensor out = make_tensor(C, dt_f32(), 2, c_size, c_strides);
  /* view(zeros(Float32, 2, 3), 2:-1:1, :): first element Z[2,1]; strides (-1, 2). */
  float Z[2 * 3] = {0};
  int64_t rev_strides[2] = {-1, 2};
  DLTensor reversed[2] = {make_tensor(&Z[1], dt_f32(), 2, a_size, rev_strides), in[1]};
  assert_fails_with(tc_run(k, reversed, 2, &out, 1), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "negative stride"));
  /* zeros(Float64, 2, 3) where Float32 was compiled */
  double D[2 * 3] = {0};
  DLTensor wrong_type[2] = {make_tensor(D, dt_f64(), 2, a_size, a_strides), in[1]};
  assert_fails_with(tc_run(k, wrong_type, 2, &out, 1), TC_ERROR_SHAPE);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* @testset "finalizers and ownership": the program is collected before the kernel runs. */
static void test_julia_kernel_outlives_program(void **state) {
  (void)state;
  float A[2 * 3], B[3 * 2], C[2 * 2] = {0};
  for (int i = 0; i < 6; ++i) A[i] = B[i] = 1.0f;
  int64_t a_size[2] = {2, 3}, a_strides[2] = {1, 2}, b_size[2] = {3, 2}, b_strides[2] = {1, 3};
  int64_t c_size[2] = {2, 2}, c_strides[2] = {1, 2};
  DLTensor in[2] = {make_tensor(A, dt_f32(), 2, a_size, a_strides), make_tensor(B, dt_f32(), 2, b_size, b_strides)};
  tc_program *p = NULL;
  assert_tc_ok(tc_define(&p, JULIA_MM));
  tc_kernel *k = NULL;
  assert_tc_ok(julia_compile(&k, p, "mm", in, 2, NULL));
  tc_tensor_info info[1];
  julia_kernel_outputs(k, info, 1);
  tc_program_destroy(p); /* finalizer of the program */
  DLTensor out = make_tensor(C, dt_f32(), 2, c_size, c_strides);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  for (int i = 0; i < 4; ++i) assert_true(C[i] == 3.0f);
  tc_kernel_destroy(k); /* finalizer of the kernel */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_julia_matmul),
      cmocka_unit_test(test_julia_views),
      cmocka_unit_test(test_julia_scalar_and_several_outputs),
      cmocka_unit_test(test_julia_accumulate),
      cmocka_unit_test(test_julia_errors),
      cmocka_unit_test(test_julia_kernel_outlives_program),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
