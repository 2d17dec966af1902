/* test_errors.c — status codes, NULL arguments, diagnostics format. */
#include "abi_util.h"

/* Parses "<name>:<line>:<col>: error: " at the start of the message and checks that the
 * message goes on with the offending source line and a caret under column `col`. */
static void check_source_diag(const char *msg, const char *name, int line, int col, const char *src_line) {
  if (!msg || !*msg) fail_msg("empty message");
  print_message("diagnostic:\n%s\n", msg);
  char prefix[256];
  snprintf(prefix, sizeof prefix, "%s:", name);
  if (strncmp(msg, prefix, strlen(prefix)) != 0) fail_msg("message does not start with '%s': %s", prefix, msg);
  int l = -1, c = -1, consumed = 0;
  if (sscanf(msg + strlen(prefix), "%d:%d: error:%n", &l, &c, &consumed) != 2 || consumed == 0)
    fail_msg("message is not '<name>:<line>:<col>: error:': %s", msg);
  assert_int_equal(l, line);
  if (col > 0) assert_int_equal(c, col);
  assert_true(c >= 1);
  /* the rest: a line with the source text and a caret line below it */
  const char *nl = strchr(msg, '\n');
  if (!nl) fail_msg("no source line in message: %s", msg);
  const char *sl = nl + 1;
  const char *sl_end = strchr(sl, '\n');
  if (!sl_end) fail_msg("no caret line in message: %s", msg);
  if (src_line) {
    size_t n = (size_t)(sl_end - sl);
    char buf[512];
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, sl, n);
    buf[n] = 0;
    const char *at = strstr(buf, src_line);
    if (!at) fail_msg("source line '%s' not in '%s'", src_line, buf);
    size_t indent = (size_t)(at - buf);
    const char *caret_line = sl_end + 1;
    const char *caret = strchr(caret_line, '^');
    if (!caret) fail_msg("no caret in message: %s", msg);
    assert_int_equal((size_t)(caret - caret_line), indent + (size_t)c - 1);
  } else {
    assert_non_null(strchr(sl_end + 1, '^'));
  }
}

static void test_syntax_error(void **state) {
  (void)state;
  const char *src =
      "def bad(float(N) A) -> (B) {\n"
      "  B(i) = A(i) $ 2\n"
      "}\n";
  tc_program *p = (tc_program *)(uintptr_t)0x1;
  assert_fails_with(tc_define(&p, src), TC_ERROR_SYNTAX);
  assert_ptr_equal(p, (tc_program *)(uintptr_t)0x1); /* not written on failure */
  check_source_diag(tc_last_error_message(), "bad", 2, 15, "  B(i) = A(i) $ 2");

  /* missing operand before '}' */
  const char *src2 =
      "def ok(float(N) A) -> (B) { B(i) = A(i) }\n"
      "def bad2(float(N) A) -> (B) {\n"
      "  B(i) = A(i) +\n"
      "}\n";
  p = NULL;
  assert_fails_with(tc_define(&p, src2), TC_ERROR_SYNTAX);
  assert_null(p);
  check_source_diag(tc_last_error_message(), "bad2", 4, 1, "}");

  /* error outside any def */
  p = NULL;
  assert_fails_with(tc_define(&p, "  oops"), TC_ERROR_SYNTAX);
  check_source_diag(tc_last_error_message(), "<source>", 1, 3, "  oops");

  /* empty source: no defs */
  p = NULL;
  int rc = tc_define(&p, "");
  assert_true(rc == TC_ERROR_SYNTAX || rc == TC_ERROR_INVALID_ARGUMENT || rc == TC_ERROR_SEMANTIC);
  assert_null(p);
  assert_true(strlen(tc_last_error_message()) > 0);
}

static void test_define_named_prefix(void **state) {
  (void)state;
  const char *src =
      "def bad(float(N) A) -> (B) {\n"
      "  B(i) = A(i) $ 2\n"
      "}\n";
  tc_program *p = NULL;
  assert_fails_with(tc_define_named(&p, src, "kernels/bad.tc"), TC_ERROR_SYNTAX);
  assert_null(p);
  check_source_diag(tc_last_error_message(), "kernels/bad.tc", 2, 15, "  B(i) = A(i) $ 2");
  /* NULL name: def name as with tc_define */
  assert_fails_with(tc_define_named(&p, src, NULL), TC_ERROR_SYNTAX);
  check_source_diag(tc_last_error_message(), "bad", 2, 15, "  B(i) = A(i) $ 2");
  /* semantic errors too */
  assert_fails_with(tc_define_named(&p, "def s(float(N) A) -> (B) {\n  B(i) = A(i, i)\n}\n", "s.tc"),
                    TC_ERROR_SEMANTIC);
  check_source_diag(tc_last_error_message(), "s.tc", 2, 0, "  B(i) = A(i, i)");
}

static void test_semantic_errors(void **state) {
  (void)state;
  static const struct {
    const char *src;
    int line;
    const char *src_line;
  } cases[] = {
      /* rank mismatch in an access */
      {"def s1(float(N) A) -> (B) {\n  B(i) = A(i, i)\n}\n", 2, "  B(i) = A(i, i)"},
      /* reduction index without a reduction operator */
      {"def s2(float(N,M) A) -> (B) {\n  B(i) = A(i, j)\n}\n", 2, "  B(i) = A(i, j)"},
      /* unknown tensor/function */
      {"def s3(float(N) A) -> (B) {\n  B(i) = nosuch(i)\n}\n", 2, "  B(i) = nosuch(i)"},
      /* duplicate parameter name */
      {"def s4(float(N) A, float(N) A) -> (B) {\n  B(i) = A(i)\n}\n", 1, NULL},
      /* an output that is never defined */
      {"def s5(float(N) A) -> (B, C) {\n  B(i) = A(i)\n}\n", 0, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    tc_program *p = NULL;
    int rc = tc_define(&p, cases[i].src);
    if (rc != TC_ERROR_SEMANTIC)
      print_error("case %zu: got %d (%s): %s\n", i, rc, tc_strerror(rc), tc_last_error_message());
    assert_int_equal(rc, TC_ERROR_SEMANTIC);
    assert_null(p);
    char name[8];
    snprintf(name, sizeof name, "s%zu", i + 1);
    const char *msg = tc_last_error_message();
    if (cases[i].line > 0)
      check_source_diag(msg, name, cases[i].line, 0, cases[i].src_line);
    else
      assert_int_equal(strncmp(msg, name, strlen(name)), 0);
  }
}

static void test_null_arguments_programs(void **state) {
  (void)state;
  tc_program *p = NULL;
  assert_fails_with(tc_define(NULL, MM_SRC), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_define(&p, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_null(p);
  assert_fails_with(tc_define_named(NULL, MM_SRC, "x.tc"), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_define_named(&p, NULL, "x.tc"), TC_ERROR_INVALID_ARGUMENT);
  assert_null(p);

  p = define_ok(MM_SRC);
  size_t c = 0, ni = 0, no = 0;
  const char *s = NULL;
  tc_param_info pi = TC_STRUCT_INIT(tc_param_info);
  assert_fails_with(tc_program_num_defs(NULL, &c), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_num_defs(p, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_def_name(NULL, 0, &s), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_def_name(p, 0, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_num_params(NULL, NULL, &ni, &no), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_num_params(p, NULL, NULL, &no), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_num_params(p, NULL, &ni, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_input_info(NULL, NULL, 0, &pi), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_input_info(p, NULL, 0, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_output_info(NULL, NULL, 0, &pi), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_output_info(p, NULL, 0, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_describe(NULL, NULL, &s), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_program_describe(p, NULL, NULL), TC_ERROR_INVALID_ARGUMENT);

  int64_t as[2] = {2, 3}, bs[2] = {3, 4};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, NULL), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
  size_t n = 1;
  assert_fails_with(tc_infer_outputs(NULL, NULL, in, 2, &ti, &n), TC_ERROR_INVALID_ARGUMENT);
  n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, NULL, 2, &ti, &n), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, &ti, NULL), TC_ERROR_INVALID_ARGUMENT);
  /* a NULL shape with ndim > 0 */
  DLTensor bad[2] = {in[0], in[1]};
  bad[1].shape = NULL;
  n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, bad, 2, &ti, &n), TC_ERROR_INVALID_ARGUMENT);
  tc_program_destroy(p);
}

static void test_null_arguments_options(void **state) {
  (void)state;
  tc_options *o = NULL;
  assert_fails_with(tc_options_create(NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_tc_ok(tc_options_create(&o));
  const char *v = NULL;
  assert_fails_with(tc_options_set(NULL, "checked", "1"), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_options_set(o, NULL, "1"), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_options_set(o, "checked", NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_options_get(NULL, "checked", &v), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_options_get(o, NULL, &v), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_options_get(o, "checked", NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_null(v);
  tc_options_destroy(o);
}

static void test_null_arguments_kernels(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {2, 3}, bs[2] = {3, 4}, cs[2] = {2, 4};
  float a[6] = {0}, b[12] = {0}, cbuf[8] = {0};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};
  DLTensor out = make_tensor(cbuf, dt_f32(), 2, cs, NULL);
  tc_kernel *k = NULL;
  assert_fails_with(tc_compile(NULL, p, NULL, in, 2, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_compile(&k, NULL, NULL, in, 2, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_compile(&k, p, NULL, NULL, 2, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_null(k);
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  assert_non_null(k);

  size_t c = 0;
  tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
  assert_fails_with(tc_kernel_num_outputs(NULL, &c), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_kernel_num_outputs(k, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_kernel_output_info(NULL, 0, &ti), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_kernel_output_info(k, 0, NULL), TC_ERROR_INVALID_ARGUMENT);

  assert_fails_with(tc_run(NULL, in, 2, &out, 1), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_run(k, NULL, 2, &out, 1), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_run(k, in, 2, NULL, 1), TC_ERROR_INVALID_ARGUMENT);
  /* NULL data where the tensor has elements */
  DLTensor nin[2] = {in[0], in[1]};
  nin[1].data = NULL;
  assert_fails_with(tc_run(k, nin, 2, &out, 1), TC_ERROR_INVALID_ARGUMENT);
  DLTensor nout = out;
  nout.data = NULL;
  assert_fails_with(tc_run(k, in, 2, &nout, 1), TC_ERROR_INVALID_ARGUMENT);
  /* NULL shape with ndim > 0 */
  nin[1] = in[1];
  nin[0].shape = NULL;
  assert_fails_with(tc_run(k, nin, 2, &out, 1), TC_ERROR_INVALID_ARGUMENT);
  nout = out;
  nout.shape = NULL;
  assert_fails_with(tc_run(k, in, 2, &nout, 1), TC_ERROR_INVALID_ARGUMENT);
  /* and the kernel still works */
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_wrong_counts(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {2, 3}, bs[2] = {3, 4}, cs[2] = {2, 4};
  float a[6] = {0}, b[12] = {0}, c1[8] = {0}, c2[8] = {0};
  DLTensor in[3] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL),
                    make_tensor(b, dt_f32(), 2, bs, NULL)};
  DLTensor out[2] = {make_tensor(c1, dt_f32(), 2, cs, NULL), make_tensor(c2, dt_f32(), 2, cs, NULL)};
  tc_kernel *k = NULL;
  assert_fails_with(tc_compile(&k, p, NULL, in, 1, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_compile(&k, p, NULL, in, 3, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_compile(&k, p, NULL, in, 0, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_null(k);
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  assert_fails_with(tc_run(k, in, 1, out, 1), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_run(k, in, 3, out, 1), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_run(k, in, 2, out, 0), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_run(k, in, 2, out, 2), TC_ERROR_INVALID_ARGUMENT);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_shape_errors_infer(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
  size_t n;
  tc_kernel *k = NULL;

  /* K mismatch: lhs is 3x4, rhs is 5x2 */
  int64_t as[2] = {3, 4}, bs[2] = {5, 2};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, NULL), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, &ti, &n), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "rhs"));
  assert_fails_with(tc_compile(&k, p, NULL, in, 2, NULL), TC_ERROR_SHAPE);
  assert_null(k);

  /* wrong rank */
  int64_t r3[3] = {4, 2, 1};
  in[1] = make_tensor(NULL, dt_f32(), 3, r3, NULL);
  n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, &ti, &n), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "rhs"));

  /* wrong dtype */
  int64_t ok[2] = {4, 2};
  in[1] = make_tensor(NULL, dt_f64(), 2, ok, NULL);
  n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, &ti, &n), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "rhs"));
  assert_fails_with(tc_compile(&k, p, NULL, in, 2, NULL), TC_ERROR_SHAPE);
  in[1] = make_tensor(NULL, dt_i32(), 2, ok, NULL);
  assert_fails_with(tc_compile(&k, p, NULL, in, 2, NULL), TC_ERROR_SHAPE);

  /* vector dtype (lanes != 1): does not match the def */
  DLDataType f32x4 = {kDLFloat, 32, 4};
  in[1] = make_tensor(NULL, f32x4, 2, ok, NULL);
  n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, &ti, &n), TC_ERROR_SHAPE);
  assert_fails_with(tc_compile(&k, p, NULL, in, 2, NULL), TC_ERROR_SHAPE);

  /* negative extent */
  int64_t neg[2] = {4, -2};
  in[1] = make_tensor(NULL, dt_f32(), 2, neg, NULL);
  n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, &ti, &n), TC_ERROR_SHAPE);

  /* rank above TC_MAX_NDIM */
  int64_t big[TC_MAX_NDIM + 1];
  for (int i = 0; i <= TC_MAX_NDIM; ++i) big[i] = 1;
  in[1] = make_tensor(NULL, dt_f32(), TC_MAX_NDIM + 1, big, NULL);
  n = 1;
  int rc = tc_infer_outputs(p, NULL, in, 2, &ti, &n);
  assert_true(rc == TC_ERROR_SHAPE || rc == TC_ERROR_INVALID_ARGUMENT);
  assert_true(strlen(tc_last_error_message()) > 0);

  /* literal extents must match */
  tc_program *q = define_ok("def lit(float(3,N) A) -> (B) { B(i,j) = A(i,j) * 2 }");
  int64_t ls[2] = {4, 5};
  DLTensor li = make_tensor(NULL, dt_f32(), 2, ls, NULL);
  n = 1;
  assert_fails_with(tc_infer_outputs(q, NULL, &li, 1, &ti, &n), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "A"));
  ls[0] = 3;
  n = 1;
  assert_tc_ok(tc_infer_outputs(q, NULL, &li, 1, &ti, &n));
  assert_int_equal(ti.shape[0], 3);
  assert_int_equal(ti.shape[1], 5);
  tc_program_destroy(q);
  tc_program_destroy(p);
}

static void test_device_not_cpu(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {2, 3}, bs[2] = {3, 4}, cs[2] = {2, 4};
  float a[6] = {0}, b[12] = {0}, c[8] = {0};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};
  DLTensor out = make_tensor(c, dt_f32(), 2, cs, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  /* "device must be kDLCPU": a CUDA tensor is rejected at tc_run (which status is not pinned
   * down by the header; it must be an error with a message) */
  in[0].device.device_type = kDLCUDA;
  int rc = tc_run(k, in, 2, &out, 1);
  assert_true(rc == TC_ERROR_SHAPE || rc == TC_ERROR_INVALID_ARGUMENT || rc == TC_ERROR_UNSUPPORTED);
  assert_true(strlen(tc_last_error_message()) > 0);
  in[0].device.device_type = kDLCPU;
  out.device.device_type = kDLCUDA;
  rc = tc_run(k, in, 2, &out, 1);
  assert_true(rc == TC_ERROR_SHAPE || rc == TC_ERROR_INVALID_ARGUMENT || rc == TC_ERROR_UNSUPPORTED);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

static void test_runtime_gather_out_of_range(void **state) {
  (void)state;
  tc_program *p = define_ok("def gather(float(N) table, int32(I) idx) -> (out) { out(i) = table(idx(i)) }");
  float table[4] = {10, 20, 30, 40};
  int32_t idx[3] = {3, 0, 2};
  float out[3] = {0};
  int64_t ts[1] = {4}, is[1] = {3}, os[1] = {3};
  DLTensor in[2] = {make_tensor(table, dt_f32(), 1, ts, NULL), make_tensor(idx, dt_i32(), 1, is, NULL)};
  DLTensor o = make_tensor(out, dt_f32(), 1, os, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL)); /* default: checked=1 */
  assert_tc_ok(tc_run(k, in, 2, &o, 1));
  assert_true(out[0] == 40 && out[1] == 10 && out[2] == 30);
  idx[1] = 4; /* one past the end */
  assert_fails_with(tc_run(k, in, 2, &o, 1), TC_ERROR_RUNTIME);
  assert_non_null(strstr(tc_last_error_message(), "table"));
  idx[1] = -1;
  assert_fails_with(tc_run(k, in, 2, &o, 1), TC_ERROR_RUNTIME);
  idx[1] = 1;
  assert_tc_ok(tc_run(k, in, 2, &o, 1));
  assert_true(out[1] == 20);
  tc_kernel_destroy(k);

  /* explicitly checked options */
  tc_options *opt = NULL;
  assert_tc_ok(tc_options_create(&opt));
  assert_tc_ok(tc_options_set(opt, "checked", "1"));
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, opt));
  idx[2] = 100;
  assert_fails_with(tc_run(k, in, 2, &o, 1), TC_ERROR_RUNTIME);
  tc_kernel_destroy(k);
  tc_options_destroy(opt);
  tc_program_destroy(p);
}

static void test_deep_nesting_no_crash(void **state) {
  (void)state;
  /* hostile input: a very deep expression must be an error, not a stack overflow */
  enum { DEPTH = 200000 };
  const char *head = "def deep(float(N) A) -> (B) { B(i) = ";
  size_t hl = strlen(head);
  char *src = malloc(hl + 2 * DEPTH + 16);
  assert_non_null(src);
  memcpy(src, head, hl);
  char *q = src + hl;
  for (int i = 0; i < DEPTH; ++i) *q++ = '(';
  memcpy(q, "A(i)", 4);
  q += 4;
  for (int i = 0; i < DEPTH; ++i) *q++ = ')';
  memcpy(q, " }", 3);
  tc_program *p = NULL;
  int rc = tc_define(&p, src);
  free(src);
  assert_true(rc == TC_ERROR_SYNTAX || rc == TC_ERROR_UNSUPPORTED || rc == TC_ERROR_SEMANTIC);
  assert_null(p);
  assert_true(strncmp(tc_last_error_message(), "deep:1:", 7) == 0);
}

static void test_infer_reads_only_dtype_ndim_shape(void **state) {
  (void)state;
  /* "only their dtype, ndim and shape are read": device, strides, byte_offset are ignored */
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {2, 3}, bs[2] = {3, 4}, junk[2] = {-5, 0};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, junk), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  in[0].device.device_type = kDLCUDA;
  in[1].byte_offset = 3;
  tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
  size_t n = 1;
  assert_tc_ok(tc_infer_outputs(p, NULL, in, 2, &ti, &n));
  assert_int_equal(ti.shape[0], 2);
  assert_int_equal(ti.shape[1], 4);

  /* on a shape failure the outputs are not written */
  bs[0] = 9;
  tc_tensor_info before = TC_STRUCT_INIT(tc_tensor_info);
  memset(&ti, 0x5A, sizeof ti);
  ti.size = sizeof ti;
  memcpy(&before, &ti, sizeof ti);
  n = 1;
  assert_fails_with(tc_infer_outputs(p, NULL, in, 2, &ti, &n), TC_ERROR_SHAPE);
  assert_memory_equal(&ti, &before, sizeof ti);
  /* the message names the tensor, the dimension, expected and got */
  const char *msg = tc_last_error_message();
  assert_non_null(strstr(msg, "rhs"));
  assert_non_null(strstr(msg, "0"));
  assert_non_null(strstr(msg, "3"));
  assert_non_null(strstr(msg, "9"));
  /* a negative rank */
  bs[0] = 3;
  in[1].ndim = -1;
  n = 1;
  int rc = tc_infer_outputs(p, NULL, in, 2, &ti, &n);
  assert_true(rc == TC_ERROR_SHAPE || rc == TC_ERROR_INVALID_ARGUMENT);
  tc_program_destroy(p);
}

static void test_kernel_copies_options(void **state) {
  (void)state;
  /* "the kernel keeps its own copy": changing the options after tc_compile has no effect */
  tc_program *p = define_ok("def gather(float(N) table, int32(I) idx) -> (out) { out(i) = table(idx(i)) }");
  float table[4] = {10, 20, 30, 40}, out[2];
  int32_t idx[2] = {1, 9};
  int64_t ts[1] = {4}, is[1] = {2};
  DLTensor in[2] = {make_tensor(table, dt_f32(), 1, ts, NULL), make_tensor(idx, dt_i32(), 1, is, NULL)};
  DLTensor o = make_tensor(out, dt_f32(), 1, is, NULL);
  tc_options *opt = NULL;
  assert_tc_ok(tc_options_create(&opt));
  assert_tc_ok(tc_options_set(opt, "checked", "1"));
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, opt));
  assert_tc_ok(tc_options_set(opt, "checked", "0"));
  assert_fails_with(tc_run(k, in, 2, &o, 1), TC_ERROR_RUNTIME);
  tc_options_destroy(opt);
  tc_program_destroy(p);
  assert_fails_with(tc_run(k, in, 2, &o, 1), TC_ERROR_RUNTIME);
  idx[1] = 3;
  assert_tc_ok(tc_run(k, in, 2, &o, 1));
  assert_true(out[0] == 20 && out[1] == 40);
  tc_kernel_destroy(k);
}

/* TC_MAX_NDIM is the "highest rank of any tensor": rank 16 works end to end; a def with a
 * tensor of rank 17 cannot be described by tc_param_info/tc_tensor_info and must be refused
 * at tc_define (it must never reach tc_infer_outputs, which would write shape[16]). */
static void test_rank_limits(void **state) {
  (void)state;
  const char *src16 =
      "def r16(float(A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P) X) -> (Y) {\n"
      "  Y(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p) = X(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p) * 2\n"
      "}\n";
  tc_program *p = define_ok(src16);
  tc_param_info pi = TC_STRUCT_INIT(tc_param_info);
  assert_tc_ok(tc_program_output_info(p, NULL, 0, &pi));
  assert_int_equal(pi.ndim, TC_MAX_NDIM);
  assert_string_equal(pi.dims[TC_MAX_NDIM - 1], "P");
  int64_t shape[TC_MAX_NDIM];
  for (int i = 0; i < TC_MAX_NDIM; ++i) shape[i] = 1;
  shape[3] = 2;
  shape[15] = 3;
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
  DLTensor in = make_tensor(x, dt_f32(), TC_MAX_NDIM, shape, NULL);
  DLTensor out = make_tensor(y, dt_f32(), TC_MAX_NDIM, shape, NULL);
  tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
  size_t n = 1;
  assert_tc_ok(tc_infer_outputs(p, NULL, &in, 1, &ti, &n));
  assert_int_equal(ti.ndim, TC_MAX_NDIM);
  assert_int_equal(ti.shape[3], 2);
  assert_int_equal(ti.shape[15], 3);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, &in, 1, NULL));
  assert_tc_ok(tc_run(k, &in, 1, &out, 1));
  for (int i = 0; i < 6; ++i) assert_true(y[i] == 2 * x[i]);
  tc_kernel_destroy(k);
  tc_program_destroy(p);

  static const char *const over[] = {
      /* a rank-17 input */
      "def r17(float(A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P,Q) X) -> (Y) {\n"
      "  Y(a) +=! X(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q)\n"
      "}\n",
      /* a rank-17 output */
      "def r17(float(N) X) -> (Y) {\n"
      "  Y(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q) = X(a)+X(b)+X(c)+X(d)+X(e)+X(f)+X(g)+X(h)+X(i)+X(j)+X(k)+X(l)+X(m)+X(n)+X(o)+X(p)+X(q)\n"
      "}\n",
  };
  for (size_t c = 0; c < sizeof over / sizeof over[0]; ++c) {
    p = NULL;
    int rc = tc_define(&p, over[c]);
    if (rc == TC_OK) {
      tc_param_info info = TC_STRUCT_INIT(tc_param_info);
      tc_program_input_info(p, NULL, 0, &info);
      int in_ndim = info.ndim;
      tc_program_output_info(p, NULL, 0, &info);
      tc_program_destroy(p);
      fail_msg("case %zu: tc_define accepted a tensor of rank > TC_MAX_NDIM (input ndim %d, output ndim %d)", c,
               in_ndim, info.ndim);
    }
    assert_true(rc == TC_ERROR_SEMANTIC || rc == TC_ERROR_UNSUPPORTED);
    assert_true(strncmp(tc_last_error_message(), "r17:", 4) == 0);
  }
}

/* The grammar's "TC function call" statement (tc-semantics.md: `id_list = id '(' id_list ')'`):
 * the callee is inlined; a call with the wrong arity is a located semantic error. */
static void test_def_call(void **state) {
  (void)state;
  const char *src =
      "def pair(float(N) A) -> (P, Q) {\n"
      "  P(i) = A(i)\n"
      "  Q(i) = A(i) * 2\n"
      "}\n"
      "def user(float(N) X) -> (Y, Z) {\n"
      "  Y, Z = pair(X)\n"
      "}\n";
  tc_program *p = define_ok(src);
  float x[3] = {1, -2, 4}, y[3], z[3];
  int64_t s[1] = {3};
  DLTensor in = make_tensor(x, dt_f32(), 1, s, NULL);
  DLTensor out[2] = {make_tensor(y, dt_f32(), 1, s, NULL), make_tensor(z, dt_f32(), 1, s, NULL)};
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, "user", &in, 1, NULL));
  assert_tc_ok(tc_run(k, &in, 1, out, 2));
  for (int i = 0; i < 3; ++i) assert_true(y[i] == x[i] && z[i] == 2 * x[i]);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
  const char *bad =
      "def pair(float(N) A) -> (P, Q) {\n"
      "  P(i) = A(i)\n"
      "  Q(i) = A(i) * 2\n"
      "}\n"
      "def user(float(N) X) -> (Y) {\n"
      "  Y = pair(X)\n"
      "}\n";
  p = NULL;
  assert_fails_with(tc_define(&p, bad), TC_ERROR_SEMANTIC);
  assert_null(p);
  check_source_diag(tc_last_error_message(), "user", 6, 0, "  Y = pair(X)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_syntax_error),
      cmocka_unit_test(test_define_named_prefix),
      cmocka_unit_test(test_semantic_errors),
      cmocka_unit_test(test_null_arguments_programs),
      cmocka_unit_test(test_null_arguments_options),
      cmocka_unit_test(test_null_arguments_kernels),
      cmocka_unit_test(test_wrong_counts),
      cmocka_unit_test(test_shape_errors_infer),
      cmocka_unit_test(test_device_not_cpu),
      cmocka_unit_test(test_runtime_gather_out_of_range),
      cmocka_unit_test(test_def_call),
      cmocka_unit_test(test_rank_limits),
      cmocka_unit_test(test_deep_nesting_no_crash),
      cmocka_unit_test(test_infer_reads_only_dtype_ndim_shape),
      cmocka_unit_test(test_kernel_copies_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
