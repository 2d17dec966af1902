/* test_basics.c — version, strerror, program/kernel queries, options, capacity rules. */
#include "abi_util.h"

#include <limits.h>

#define TWO_SRC                                                   \
  "def first(float(N) A) -> (B) { B(i) = A(i) + 1 }\n"            \
  "def second(float(M,K) X, float(K) v) -> (y, z) {\n"          \
  "  y(i) +=! X(i,k) * v(k)\n"                                    \
  "  z(i,k) = X(i,k) * 2\n"                                       \
  "}\n"

static void test_version(void **state) {
  (void)state;
  assert_int_equal(tc_version_number(), LIBTC_VERSION_NUMBER);
  assert_int_equal(LIBTC_VERSION_NUMBER, LIBTC_VERSION_MAJOR * 10000 + LIBTC_VERSION_MINOR * 100 + LIBTC_VERSION_PATCH);
  assert_non_null(tc_version_string());
  assert_string_equal(tc_version_string(), LIBTC_VERSION_STRING);
  char buf[64];
  snprintf(buf, sizeof buf, "%d.%d.%d", LIBTC_VERSION_MAJOR, LIBTC_VERSION_MINOR, LIBTC_VERSION_PATCH);
  assert_string_equal(tc_version_string(), buf);
  /* static: same pointer every time */
  assert_ptr_equal(tc_version_string(), tc_version_string());
}

static void test_strerror(void **state) {
  (void)state;
  const int codes[] = {TC_OK,          TC_ERROR_INVALID_ARGUMENT, TC_ERROR_SYNTAX,  TC_ERROR_SEMANTIC,
                       TC_ERROR_SHAPE, TC_ERROR_UNSUPPORTED,      TC_ERROR_COMPILE, TC_ERROR_RUNTIME,
                       TC_ERROR_CACHE, TC_ERROR_NO_MEMORY,        TC_ERROR_INTERNAL};
  const size_t n = sizeof codes / sizeof codes[0];
  assert_int_equal(n, 11);
  for (size_t i = 0; i < n; ++i) {
    const char *s = tc_strerror(codes[i]);
    assert_non_null(s);
    assert_true(strlen(s) > 0);
    assert_string_not_equal(s, "unknown status");
    for (size_t j = 0; j < i; ++j) assert_string_not_equal(s, tc_strerror(codes[j]));
  }
  const int unknown[] = {1, -11, 42, -1000, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    const char *s = tc_strerror(unknown[i]);
    assert_non_null(s);
    assert_string_equal(s, "unknown status");
  }
}

static void test_last_error_never_null(void **state) {
  (void)state;
  assert_non_null(tc_last_error_message());
  /* A failure sets it; a later success does not clear it. */
  tc_program *p = NULL;
  assert_fails_with(tc_define(&p, "def ("), TC_ERROR_SYNTAX);
  assert_null(p);
  char saved[4096];
  snprintf(saved, sizeof saved, "%s", tc_last_error_message());
  assert_true(strlen(saved) > 0);
  p = define_ok(MM_SRC);
  assert_string_equal(tc_last_error_message(), saved);
  tc_program_destroy(p);
}

static void test_destroy_null(void **state) {
  (void)state;
  tc_program_destroy(NULL);
  tc_kernel_destroy(NULL);
  tc_options_destroy(NULL);
  assert_non_null(tc_last_error_message()); /* still alive */
}

static void test_program_defs(void **state) {
  (void)state;
  tc_program *p = define_ok(TWO_SRC);
  size_t count = 999;
  assert_tc_ok(tc_program_num_defs(p, &count));
  assert_int_equal(count, 2);
  const char *name = NULL;
  assert_tc_ok(tc_program_def_name(p, 0, &name));
  assert_string_equal(name, "first");
  assert_tc_ok(tc_program_def_name(p, 1, &name));
  assert_string_equal(name, "second");
  const char *keep = name;
  assert_fails_with(tc_program_def_name(p, 2, &name), TC_ERROR_INVALID_ARGUMENT);
  assert_ptr_equal(name, keep); /* not written on failure */
  assert_fails_with(tc_program_def_name(p, (size_t)-1, &name), TC_ERROR_INVALID_ARGUMENT);

  size_t ni = 99, no = 99;
  assert_tc_ok(tc_program_num_params(p, "first", &ni, &no));
  assert_int_equal(ni, 1);
  assert_int_equal(no, 1);
  assert_tc_ok(tc_program_num_params(p, "second", &ni, &no));
  assert_int_equal(ni, 2);
  assert_int_equal(no, 2);
  /* entry NULL with several defs is an error; unknown entry too */
  ni = no = 77;
  assert_fails_with(tc_program_num_params(p, NULL, &ni, &no), TC_ERROR_INVALID_ARGUMENT);
  assert_int_equal(ni, 77);
  assert_int_equal(no, 77);
  assert_fails_with(tc_program_num_params(p, "third", &ni, &no), TC_ERROR_INVALID_ARGUMENT);
  assert_true(strstr(tc_last_error_message(), "third") != NULL);
  tc_program_destroy(p);
}

static void test_program_param_info(void **state) {
  (void)state;
  tc_program *p = define_ok(TWO_SRC);
  tc_param_info info = TC_STRUCT_INIT(tc_param_info);
  assert_tc_ok(tc_program_input_info(p, "second", 0, &info));
  assert_string_equal(info.name, "X");
  assert_int_equal(info.dtype.code, kDLFloat);
  assert_int_equal(info.dtype.bits, 32);
  assert_int_equal(info.dtype.lanes, 1);
  assert_int_equal(info.ndim, 2);
  assert_string_equal(info.dims[0], "M");
  assert_string_equal(info.dims[1], "K");
  assert_tc_ok(tc_program_input_info(p, "second", 1, &info));
  assert_string_equal(info.name, "v");
  assert_int_equal(info.ndim, 1);
  assert_string_equal(info.dims[0], "K");

  assert_tc_ok(tc_program_output_info(p, "second", 0, &info));
  assert_string_equal(info.name, "y");
  assert_int_equal(info.dtype.code, kDLFloat);
  assert_int_equal(info.dtype.bits, 32);
  assert_int_equal(info.dtype.lanes, 1);
  assert_int_equal(info.ndim, 1);
  assert_string_equal(info.dims[0], "M");
  assert_tc_ok(tc_program_output_info(p, "second", 1, &info));
  assert_string_equal(info.name, "z");
  assert_int_equal(info.ndim, 2);
  assert_string_equal(info.dims[0], "M");
  assert_string_equal(info.dims[1], "K");

  /* index out of range: error, info untouched */
  tc_param_info before = info;
  assert_fails_with(tc_program_input_info(p, "second", 2, &info), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_output_info(p, "second", 2, &info), TC_ERROR_INVALID_ARGUMENT);
  assert_memory_equal(&before, &info, sizeof info);
  assert_fails_with(tc_program_input_info(p, NULL, 0, &info), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_output_info(p, "nope", 0, &info), TC_ERROR_INVALID_ARGUMENT);
  tc_program_destroy(p);

  /* single def: entry NULL selects it; integer literal dims stay literal */
  p = define_ok("def lit(float(3,N) A) -> (B) { B(i,j) = A(i,j) * 2 }");
  assert_tc_ok(tc_program_input_info(p, NULL, 0, &info));
  assert_string_equal(info.name, "A");
  assert_int_equal(info.ndim, 2);
  assert_string_equal(info.dims[0], "3");
  assert_string_equal(info.dims[1], "N");
  assert_tc_ok(tc_program_output_info(p, NULL, 0, &info));
  assert_string_equal(info.name, "B");
  assert_int_equal(info.ndim, 2);
  assert_string_equal(info.dims[1], "N");
  tc_program_destroy(p);
}

/* Rank polymorphism: a parameter whose rank depends on '...' has ndim -1 and its dims as
 * written, "..." among them, then NULL; binding picks the rank from the inputs, and each rank
 * gives its own output shapes. */
static void test_program_param_info_ellipsis(void **state) {
  (void)state;
  tc_program *p = define_ok("def bmm(float(..., M, K) A, float(..., K, N) B) -> (C, S) {\n"
                            "  C(..., m, n) +=! A(..., m, k) * B(..., k, n)\n"
                            "  S(m) +=! A(..., m, k)\n}");
  tc_param_info info = TC_STRUCT_INIT(tc_param_info);
  assert_tc_ok(tc_program_input_info(p, NULL, 0, &info));
  assert_string_equal(info.name, "A");
  assert_int_equal(info.ndim, -1);
  assert_string_equal(info.dims[0], "...");
  assert_string_equal(info.dims[1], "M");
  assert_string_equal(info.dims[2], "K");
  assert_null(info.dims[3]);
  assert_tc_ok(tc_program_output_info(p, NULL, 0, &info));
  assert_string_equal(info.name, "C");
  assert_int_equal(info.ndim, -1);
  assert_string_equal(info.dims[0], "...");
  assert_string_equal(info.dims[1], "M");
  assert_string_equal(info.dims[2], "N");
  assert_null(info.dims[3]);
  assert_tc_ok(tc_program_output_info(p, NULL, 1, &info)); /* S's rank does not depend on '...' */
  assert_int_equal(info.ndim, 1);
  assert_string_equal(info.dims[0], "M");

  int64_t a3[] = {2, 3, 4, 5}, b3[] = {2, 3, 5, 6}, a1[] = {4, 5}, b1[] = {5, 6};
  DLTensor in3[2] = {{NULL, {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, a3, NULL, 0},
                     {NULL, {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, b3, NULL, 0}};
  DLTensor in1[2] = {{NULL, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, a1, NULL, 0},
                     {NULL, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, b1, NULL, 0}};
  tc_tensor_info outs[2] = {TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info)};
  size_t n = 2;
  assert_tc_ok(tc_infer_outputs(p, NULL, in3, 2, outs, &n));
  assert_int_equal(outs[0].ndim, 4);
  assert_int_equal(outs[0].shape[0], 2);
  assert_int_equal(outs[0].shape[1], 3);
  assert_int_equal(outs[0].shape[2], 4);
  assert_int_equal(outs[0].shape[3], 6);
  assert_int_equal(outs[1].ndim, 1);
  assert_int_equal(outs[1].shape[0], 4);
  n = 2;
  assert_tc_ok(tc_infer_outputs(p, NULL, in1, 2, outs, &n));
  assert_int_equal(outs[0].ndim, 2);
  assert_int_equal(outs[0].shape[0], 4);
  assert_int_equal(outs[0].shape[1], 6);
  /* the two inputs disagree on what '...' stands for */
  DLTensor mixed[2] = {in3[0], in1[1]};
  n = 2;
  assert_fails_with(tc_infer_outputs(p, NULL, mixed, 2, outs, &n), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "every '...' of a def denotes the same dimensions"));
  tc_program_destroy(p);
}

static void test_program_describe(void **state) {
  (void)state;
  tc_program *p = define_ok(TWO_SRC);
  const char *text = NULL;
  assert_tc_ok(tc_program_describe(p, "second", &text));
  assert_non_null(text);
  assert_true(strlen(text) > 0);
  /* mentions the tensors and the size names */
  assert_non_null(strstr(text, "y"));
  assert_non_null(strstr(text, "z"));
  assert_non_null(strstr(text, "M"));
  assert_non_null(strstr(text, "K"));
  const char *t2 = NULL;
  assert_tc_ok(tc_program_describe(p, "first", &t2));
  assert_non_null(t2);
  assert_non_null(strstr(t2, "N"));
  const char *keep = t2;
  assert_fails_with(tc_program_describe(p, NULL, &t2), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_describe(p, "zzz", &t2), TC_ERROR_INVALID_ARGUMENT);
  assert_ptr_equal(t2, keep);
  /* the first text is still valid (owned by the program) */
  assert_true(strlen(text) > 0);
  tc_program_destroy(p);
}

/* The program's source, byte for byte, owned by the program. */
static void test_program_source(void **state) {
  (void)state;
  tc_program *p = define_ok(TWO_SRC);
  const char *text = NULL;
  assert_tc_ok(tc_program_source(p, &text));
  assert_string_equal(text, TWO_SRC);
  assert_fails_with(tc_program_source(p, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_source(NULL, &text), TC_ERROR_INVALID_ARGUMENT);
  assert_string_equal(text, TWO_SRC); /* untouched by the failures, still valid */
  tc_program_destroy(p);
}

/* tc_gradient: the gradient def's name, parameters and source; it runs (d_A = d_C B^T,
 * d_B = A^T d_C, exact on small integers); it outlives its forward program; refusals. */
static void test_gradient(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  tc_program *g = NULL;
  assert_tc_ok(tc_gradient(&g, p, NULL));
  tc_program_destroy(p); /* the gradient program is independent */
  const char *name = NULL, *text = NULL;
  assert_tc_ok(tc_program_def_name(g, 0, &name));
  assert_string_equal(name, "mm_grad");
  assert_tc_ok(tc_program_source(g, &text));
  assert_non_null(strstr(text, "def mm_grad("));
  size_t ni = 0, no = 0;
  assert_tc_ok(tc_program_num_params(g, NULL, &ni, &no));
  assert_int_equal(ni, 3);
  assert_int_equal(no, 2);
  tc_param_info info = TC_STRUCT_INIT(tc_param_info);
  assert_tc_ok(tc_program_input_info(g, NULL, 2, &info));
  assert_string_equal(info.name, "d_out");
  assert_string_equal(info.dims[0], "M");
  assert_string_equal(info.dims[1], "N");
  assert_tc_ok(tc_program_output_info(g, NULL, 1, &info));
  assert_string_equal(info.name, "d_rhs");

  enum { M = 3, K = 4, N = 2 };
  float a[M * K], b[K * N], dc[M * N], da[M * K], db[K * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 5) - 2;
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 3) - 1;
  for (int i = 0; i < M * N; ++i) dc[i] = (float)(i % 4) - 1;
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  DLTensor in[3] = {make_tensor(a, dt_f32(), 2, sa, NULL), make_tensor(b, dt_f32(), 2, sb, NULL),
                    make_tensor(dc, dt_f32(), 2, sc, NULL)};
  DLTensor out[2] = {make_tensor(da, dt_f32(), 2, sa, NULL), make_tensor(db, dt_f32(), 2, sb, NULL)};
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, g, "mm_grad", in, 3, NULL));
  assert_tc_ok(tc_run(k, in, 3, out, 2));
  for (int i = 0; i < M; ++i)
    for (int kk = 0; kk < K; ++kk) {
      float want = 0;
      for (int j = 0; j < N; ++j) want += dc[i * N + j] * b[kk * N + j];
      assert_true(da[i * K + kk] == want);
    }
  for (int kk = 0; kk < K; ++kk)
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int i = 0; i < M; ++i) want += a[i * K + kk] * dc[i * N + j];
      assert_true(db[kk * N + j] == want);
    }
  tc_kernel_destroy(k);
  tc_program_destroy(g);

  tc_program *bad = define_ok("def p(float(N,K) A) -> (O) { O(i) *=! A(i,k) }");
  g = NULL;
  assert_fails_with(tc_gradient(&g, bad, NULL), TC_ERROR_UNSUPPORTED);
  assert_null(g);
  assert_non_null(strstr(tc_last_error_message(), "'*=' reductions"));
  assert_fails_with(tc_gradient(&g, bad, "nope"), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_gradient(NULL, bad, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_gradient(&g, NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
  tc_program_destroy(bad);
}

/* tc_kernel_code: the cpu kernel's Halide loop nest (the same text on a second call, owned by
 * the kernel); the reference backend generates none: UNSUPPORTED naming it. */
static void test_kernel_code(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  /* K = 8: a reduction of at most 4 steps would be unrolled, leaving no loop to find */
  int64_t sa[2] = {8, 8}, sb[2] = {8, 16};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, sa, NULL), make_tensor(NULL, dt_f32(), 2, sb, NULL)};
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  const char *text = NULL, *again = NULL;
  assert_tc_ok(tc_kernel_code(k, &text));
  assert_non_null(strstr(text, "produce "));
  assert_non_null(strstr(text, "for ("));
  assert_tc_ok(tc_kernel_code(k, &again));
  assert_ptr_equal(text, again);
  assert_fails_with(tc_kernel_code(k, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_kernel_code(NULL, &text), TC_ERROR_INVALID_ARGUMENT);
  tc_kernel_destroy(k);
  tc_options *o = NULL;
  assert_tc_ok(tc_options_create(&o));
  assert_tc_ok(tc_options_set(o, "backend", "reference"));
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, o));
  assert_fails_with(tc_kernel_code(k, &text), TC_ERROR_UNSUPPORTED);
  assert_non_null(strstr(tc_last_error_message(), "backend 'reference' generates no code"));
  tc_kernel_destroy(k);
  tc_options_destroy(o);
  tc_program_destroy(p);
}

static void test_infer_outputs_capacity(void **state) {
  (void)state;
  tc_program *p = define_ok(TWO_SRC);
  int64_t xs[2] = {5, 3}, vs[1] = {3};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, xs, NULL), make_tensor(NULL, dt_f32(), 1, vs, NULL)};

  /* query the count */
  size_t n = 0;
  assert_tc_ok(tc_infer_outputs(p, "second", in, 2, NULL, &n));
  assert_int_equal(n, 2);

  /* too small: INVALID_ARGUMENT, *num_outputs = count, nothing else written */
  tc_tensor_info outs[3] = {TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info),
                            TC_STRUCT_INIT(tc_tensor_info)};
  memset(outs, 0xAB, sizeof outs);
  outs[0].size = sizeof(tc_tensor_info);
  tc_tensor_info pristine[3] = {TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info),
                                TC_STRUCT_INIT(tc_tensor_info)};
  memcpy(pristine, outs, sizeof outs);
  n = 1;
  assert_fails_with(tc_infer_outputs(p, "second", in, 2, outs, &n), TC_ERROR_INVALID_ARGUMENT);
  assert_int_equal(n, 2);
  assert_memory_equal(outs, pristine, sizeof outs);

  /* exact and larger capacity */
  n = 2;
  assert_tc_ok(tc_infer_outputs(p, "second", in, 2, outs, &n));
  assert_int_equal(n, 2);
  assert_int_equal(outs[0].ndim, 1);
  assert_int_equal(outs[0].shape[0], 5);
  assert_int_equal(outs[0].dtype.code, kDLFloat);
  assert_int_equal(outs[0].dtype.bits, 32);
  assert_int_equal(outs[0].dtype.lanes, 1);
  assert_int_equal(outs[1].ndim, 2);
  assert_int_equal(outs[1].shape[0], 5);
  assert_int_equal(outs[1].shape[1], 3);
  memset(outs, 0, sizeof outs);
  outs[0].size = sizeof(tc_tensor_info);
  n = 3;
  assert_tc_ok(tc_infer_outputs(p, "second", in, 2, outs, &n));
  assert_int_equal(n, 2);
  assert_int_equal(outs[1].shape[1], 3);

  /* outputs NULL with a non-zero capacity: NULL where a value is needed */
  n = 2;
  assert_fails_with(tc_infer_outputs(p, "second", in, 2, NULL, &n), TC_ERROR_INVALID_ARGUMENT);

  /* entry NULL with several defs */
  n = 2;
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, outs, &n), TC_ERROR_INVALID_ARGUMENT);

  /* wrong number of inputs */
  n = 2;
  assert_fails_with(tc_infer_outputs(p, "second", in, 1, outs, &n), TC_ERROR_INVALID_ARGUMENT);
  n = 2;
  assert_fails_with(tc_infer_outputs(p, "first", in, 2, outs, &n), TC_ERROR_INVALID_ARGUMENT);
  tc_program_destroy(p);
}

static void test_infer_outputs_mm(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {7, 4}, bs[2] = {4, 9};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, NULL), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  tc_tensor_info out = TC_STRUCT_INIT(tc_tensor_info);
  size_t n = 1;
  assert_tc_ok(tc_infer_outputs(p, NULL, in, 2, &out, &n));
  assert_int_equal(n, 1);
  assert_int_equal(out.ndim, 2);
  assert_int_equal(out.shape[0], 7);
  assert_int_equal(out.shape[1], 9);
  assert_int_equal(out.dtype.code, kDLFloat);
  assert_int_equal(out.dtype.bits, 32);
  /* the entry may also be named explicitly */
  n = 1;
  assert_tc_ok(tc_infer_outputs(p, "mm", in, 2, &out, &n));
  assert_int_equal(out.shape[1], 9);
  n = 1;
  assert_fails_with(tc_infer_outputs(p, "mmm", in, 2, &out, &n), TC_ERROR_INVALID_ARGUMENT);
  tc_program_destroy(p);
}

/* The size at the start of every struct the library fills: a size below this version's struct
 * is refused, naming the struct and nothing written; a caller's struct that has grown (a newer
 * header) gets this version's fields and its size set to what was written; tc_infer_outputs
 * steps through an array of grown structs by outputs[0].size. */
struct grown_tensor_info {
  tc_tensor_info v0;
  int64_t later_field;
};
static void test_struct_sizes(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {7, 4}, bs[2] = {4, 9};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, NULL), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  size_t n = 1;

  tc_tensor_info old = {0};
  old.size = sizeof(tc_tensor_info) - 8;
  old.ndim = 99;
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, &old, &n), TC_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(tc_last_error_message(), "sizeof(tc_tensor_info)"));
  assert_int_equal(old.ndim, 99);
  tc_param_info pi = {0};
  assert_fails_with(tc_program_input_info(p, NULL, 0, &pi), TC_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(tc_last_error_message(), "info->size is 0"));
  assert_null(pi.name);

  struct grown_tensor_info grown[2];
  memset(grown, 0x5A, sizeof grown);
  grown[0].v0.size = sizeof grown[0];
  n = 1;
  assert_tc_ok(tc_infer_outputs(p, NULL, in, 2, &grown[0].v0, &n));
  assert_int_equal(grown[0].v0.size, sizeof(tc_tensor_info));
  assert_int_equal(grown[0].v0.shape[1], 9);
  assert_int_equal(grown[0].later_field, 0x5A5A5A5A5A5A5A5ALL); /* past this version's struct: untouched */

  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  memset(grown, 0x5A, sizeof grown);
  grown[0].v0.size = sizeof grown[0];
  assert_tc_ok(tc_kernel_output_info(k, 0, &grown[0].v0));
  assert_int_equal(grown[0].v0.size, sizeof(tc_tensor_info));
  assert_int_equal(grown[0].v0.shape[0], 7);
  assert_int_equal(grown[0].later_field, 0x5A5A5A5A5A5A5A5ALL);
  tc_tensor_info ti = {0};
  assert_fails_with(tc_kernel_output_info(k, 0, &ti), TC_ERROR_INVALID_ARGUMENT);
  tc_kernel_destroy(k);
  tc_program_destroy(p);

  /* two outputs into an array of grown structs: the second at sizeof grown[0], not sizeof(tc_tensor_info) */
  p = define_ok(TWO_SRC);
  int64_t xs[2] = {5, 3}, vs[1] = {3};
  DLTensor in2[2] = {make_tensor(NULL, dt_f32(), 2, xs, NULL), make_tensor(NULL, dt_f32(), 1, vs, NULL)};
  memset(grown, 0x5A, sizeof grown);
  grown[0].v0.size = sizeof grown[0];
  n = 2;
  assert_tc_ok(tc_infer_outputs(p, "second", in2, 2, &grown[0].v0, &n));
  assert_int_equal(grown[0].v0.ndim, 1);
  assert_int_equal(grown[1].v0.size, sizeof(tc_tensor_info));
  assert_int_equal(grown[1].v0.ndim, 2);
  assert_int_equal(grown[1].v0.shape[1], 3);
  assert_int_equal(grown[1].later_field, 0x5A5A5A5A5A5A5A5ALL);
  tc_program_destroy(p);
}

/* Every schedule knob and thread count computes the same matmul as the reference backend,
 * and tc_kernel_describe reports the options and the schedule. */
static void test_cpu_knobs_and_describe(void **state) {
  (void)state;
  enum { M = 37, K = 29, N = 53 };
  static float a[M * K], b[K * N], ref[M * N], got[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 11) - 5;
  for (int i = 0; i < K * N; ++i) b[i] = (float)((i * 5) % 13) - 6;
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, sa, NULL), make_tensor(b, dt_f32(), 2, sb, NULL)};
  tc_program *p = NULL;
  assert_tc_ok(tc_define(&p, "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"));
  const char *knobs[][2][2] = {
      {{"backend", "reference"}, {"checked", "1"}},  {{"cpu.tile", "16x4"}, {"threads", "1"}},
      {{"cpu.vectorize", "4"}, {"cpu.unroll", "3"}}, {{"cpu.parallel", "none"}, {"cpu.inline", "0"}},
      {{"cpu.tile", "1x1"}, {"threads", "7"}},       {{"cpu.vectorize", "1"}, {"cpu.tile", "4096x4096"}}};
  for (size_t t = 0; t < sizeof knobs / sizeof knobs[0]; ++t) {
    tc_options *o = NULL;
    assert_tc_ok(tc_options_create(&o));
    for (int j = 0; j < 2; ++j) assert_tc_ok(tc_options_set(o, knobs[t][j][0], knobs[t][j][1]));
    tc_kernel *k = NULL;
    assert_tc_ok(tc_compile(&k, p, NULL, in, 2, o));
    float *dst = t == 0 ? ref : got;
    DLTensor out = make_tensor(dst, dt_f32(), 2, sc, NULL);
    assert_tc_ok(tc_run(k, in, 2, &out, 1));
    if (t > 0)
      for (int i = 0; i < M * N; ++i) assert_true(got[i] == ref[i]); /* small integers: exact */
    const char *text = NULL;
    assert_tc_ok(tc_kernel_describe(k, &text));
    char expect[64];
    snprintf(expect, sizeof expect, "%s=%s", knobs[t][1][0], knobs[t][1][1]);
    assert_non_null(strstr(text, expect));
    assert_non_null(strstr(text, t == 0 ? "backend: reference" : "backend: cpu"));
    if (t > 0) assert_non_null(strstr(text, "schedule:"));
    tc_kernel_destroy(k);
    tc_options_destroy(o);
  }
  assert_int_equal(tc_kernel_describe(NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
  tc_program_destroy(p);
}

static void test_options(void **state) {
  (void)state;
  tc_options *o = NULL;
  assert_tc_ok(tc_options_create(&o));
  assert_non_null(o);
  const char *v = NULL;
  /* defaults */
  assert_tc_ok(tc_options_get(o, "backend", &v));
  assert_string_equal(v, "cpu");
  assert_tc_ok(tc_options_get(o, "checked", &v));
  assert_string_equal(v, "1");
  assert_tc_ok(tc_options_get(o, "threads", &v));
  assert_string_equal(v, "0");
  assert_tc_ok(tc_options_get(o, "cpu.tile", &v));
  assert_string_equal(v, "auto");
  /* schedule knobs: numbers in range, the pair form, words */
  assert_tc_ok(tc_options_set(o, "cpu.tile", "64x8"));
  assert_tc_ok(tc_options_get(o, "cpu.tile", &v));
  assert_string_equal(v, "64x8");
  assert_tc_ok(tc_options_set(o, "cpu.vectorize", "8"));
  assert_tc_ok(tc_options_set(o, "cpu.unroll", "4"));
  assert_tc_ok(tc_options_set(o, "threads", "3"));
  assert_tc_ok(tc_options_set(o, "cpu.parallel", "none"));
  assert_tc_ok(tc_options_set(o, "cpu.inline", "0"));
  const char *bad[][2] = {{"cpu.tile", "64"},     {"cpu.tile", "0x8"},      {"cpu.tile", "64x"},
                          {"cpu.tile", "8x-1"},   {"cpu.vectorize", "0"},   {"cpu.vectorize", "65"},
                          {"cpu.unroll", "two"},  {"threads", "-1"},        {"threads", "1 "},
                          {"cpu.parallel", "all"}, {"cpu.inline", "2"},     {"backend", "gpu"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    assert_int_equal(tc_options_set(o, bad[i][0], bad[i][1]), TC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_last_error_message(), bad[i][0]));
  }
  assert_tc_ok(tc_options_get(o, "cpu.tile", &v));
  assert_string_equal(v, "64x8"); /* a rejected value leaves the old one */
  /* set/get */
  assert_tc_ok(tc_options_set(o, "checked", "0"));
  assert_tc_ok(tc_options_get(o, "checked", &v));
  assert_string_equal(v, "0");
  assert_tc_ok(tc_options_set(o, "checked", "1"));
  assert_tc_ok(tc_options_get(o, "checked", &v));
  assert_string_equal(v, "1");
  assert_tc_ok(tc_options_set(o, "backend", "reference"));
  assert_tc_ok(tc_options_get(o, "backend", &v));
  assert_string_equal(v, "reference");
  /* a value stays valid while other keys are set */
  const char *backend = NULL;
  assert_tc_ok(tc_options_get(o, "backend", &backend));
  assert_tc_ok(tc_options_set(o, "checked", "0"));
  assert_tc_ok(tc_options_set(o, "checked", "1"));
  assert_string_equal(backend, "reference");
  /* the value is a copy owned by options */
  char buf[8] = "0";
  assert_tc_ok(tc_options_set(o, "checked", buf));
  buf[0] = '1';
  assert_tc_ok(tc_options_get(o, "checked", &v));
  assert_string_equal(v, "0");
  /* unknown key / value: INVALID_ARGUMENT, the stored value unchanged */
  assert_fails_with(tc_options_set(o, "no_such_key", "1"), TC_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(tc_last_error_message(), "no_such_key"));
  assert_fails_with(tc_options_set(o, "checked", "maybe"), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_options_set(o, "checked", ""), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_options_set(o, "backend", "no_such_backend"), TC_ERROR_INVALID_ARGUMENT);
  assert_tc_ok(tc_options_get(o, "checked", &v));
  assert_string_equal(v, "0");
  assert_tc_ok(tc_options_get(o, "backend", &v));
  assert_string_equal(v, "reference");
  const char *keep = v;
  assert_fails_with(tc_options_get(o, "no_such_key", &v), TC_ERROR_INVALID_ARGUMENT);
  assert_ptr_equal(v, keep);
  tc_options_destroy(o);

  /* a fresh options object is independent */
  assert_tc_ok(tc_options_create(&o));
  assert_tc_ok(tc_options_get(o, "checked", &v));
  assert_string_equal(v, "1");
  tc_options_destroy(o);
}

static void test_kernel_queries(void **state) {
  (void)state;
  tc_program *p = define_ok(TWO_SRC);
  int64_t xs[2] = {4, 6}, vs[1] = {6};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, xs, NULL), make_tensor(NULL, dt_f32(), 1, vs, NULL)};
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, "second", in, 2, NULL));
  assert_non_null(k);
  size_t count = 0;
  assert_tc_ok(tc_kernel_num_outputs(k, &count));
  assert_int_equal(count, 2);
  tc_tensor_info info = TC_STRUCT_INIT(tc_tensor_info);
  assert_tc_ok(tc_kernel_output_info(k, 0, &info));
  assert_int_equal(info.ndim, 1);
  assert_int_equal(info.shape[0], 4);
  assert_int_equal(info.dtype.code, kDLFloat);
  assert_int_equal(info.dtype.bits, 32);
  assert_int_equal(info.dtype.lanes, 1);
  assert_tc_ok(tc_kernel_output_info(k, 1, &info));
  assert_int_equal(info.ndim, 2);
  assert_int_equal(info.shape[0], 4);
  assert_int_equal(info.shape[1], 6);
  tc_tensor_info before = info;
  assert_fails_with(tc_kernel_output_info(k, 2, &info), TC_ERROR_INVALID_ARGUMENT);
  assert_memory_equal(&before, &info, sizeof info);
  /* agrees with tc_infer_outputs */
  tc_tensor_info inf[2] = {TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info)};
  size_t n = 2;
  assert_tc_ok(tc_infer_outputs(p, "second", in, 2, inf, &n));
  assert_int_equal(inf[1].shape[1], info.shape[1]);
  tc_kernel_destroy(k);

  /* entry NULL with several defs / unknown entry at compile: error, *out untouched */
  k = (tc_kernel *)(uintptr_t)0x1;
  assert_fails_with(tc_compile(&k, p, NULL, in, 2, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_compile(&k, p, "missing", in, 2, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_ptr_equal(k, (tc_kernel *)(uintptr_t)0x1);
  tc_program_destroy(p);
}

static void test_define_named(void **state) {
  (void)state;
  tc_program *p = NULL;
  assert_tc_ok(tc_define_named(&p, MM_SRC, "mm.tc"));
  assert_non_null(p);
  size_t c = 0;
  assert_tc_ok(tc_program_num_defs(p, &c));
  assert_int_equal(c, 1);
  tc_program_destroy(p);
  p = NULL;
  /* source_name NULL behaves as tc_define */
  assert_tc_ok(tc_define_named(&p, MM_SRC, NULL));
  assert_non_null(p);
  tc_program_destroy(p);
}

static void test_inferred_extent_expressions(void **state) {
  (void)state;
  /* tc.h: output dims are "the inferred extent expression in terms of size names", e.g. "(I + 1)/2" */
  tc_program *p = define_ok("def sub(float(I) B) -> (A) { A(i) = B(2*i) }");
  tc_param_info pi = TC_STRUCT_INIT(tc_param_info);
  assert_tc_ok(tc_program_output_info(p, NULL, 0, &pi));
  assert_int_equal(pi.ndim, 1);
  print_message("extent of A: %s\n", pi.dims[0]);
  assert_non_null(strstr(pi.dims[0], "I + 1"));
  assert_non_null(strstr(pi.dims[0], "/2"));
  const int64_t cases[][2] = {{7, 4}, {8, 4}, {1, 1}, {0, 0}};
  for (size_t c = 0; c < 4; ++c) {
    int64_t is[1] = {cases[c][0]};
    DLTensor in = make_tensor(NULL, dt_f32(), 1, is, NULL);
    tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
    size_t n = 1;
    assert_tc_ok(tc_infer_outputs(p, NULL, &in, 1, &ti, &n));
    assert_int_equal(ti.shape[0], cases[c][1]);
  }
  tc_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version),
      cmocka_unit_test(test_strerror),
      cmocka_unit_test(test_last_error_never_null),
      cmocka_unit_test(test_destroy_null),
      cmocka_unit_test(test_program_defs),
      cmocka_unit_test(test_program_param_info),
      cmocka_unit_test(test_program_param_info_ellipsis),
      cmocka_unit_test(test_program_describe),
      cmocka_unit_test(test_program_source),
      cmocka_unit_test(test_gradient),
      cmocka_unit_test(test_kernel_code),
      cmocka_unit_test(test_infer_outputs_capacity),
      cmocka_unit_test(test_infer_outputs_mm),
      cmocka_unit_test(test_struct_sizes),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_cpu_knobs_and_describe),
      cmocka_unit_test(test_kernel_queries),
      cmocka_unit_test(test_define_named),
      cmocka_unit_test(test_inferred_extent_expressions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
