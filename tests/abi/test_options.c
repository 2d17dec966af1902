/* test_options.c — listing and validating options through tc_option_info (the general keys,
 * then each backend's knobs), and running kernels with tc_run_async: NULL and non-NULL streams
 * on host backends, tensors on a device the backend does not accept. */
#include "abi_util.h"

/* Every option in order: (key, values, default, help), until TC_ERROR_INVALID_ARGUMENT. */
static size_t count_options(void) {
  size_t n = 0;
  const char *key = NULL;
  while (tc_option_info(n, &key, NULL, NULL, NULL) == TC_OK) ++n;
  return n;
}

static void test_lists_every_option(void **state) {
  (void)state;
  size_t n = count_options();
  assert_true(n >= 10);
  const char *key, *values, *def, *help;
  /* The general keys come first, in this order. */
  const char *general[][3] = {{"backend", "cpu|reference|cuda", "cpu"}, {"checked", "1|0", "1"}, {"threads", "0..1024", "0"}};
  for (size_t i = 0; i < 3; ++i) {
    assert_tc_ok(tc_option_info(i, &key, &values, &def, &help));
    assert_string_equal(key, general[i][0]);
    assert_string_equal(values, general[i][1]);
    assert_string_equal(def, general[i][2]);
    assert_true(strlen(help) > 10);
  }
  /* Each cpu knob, with its allowed values and default. */
  const char *knobs[][3] = {{"cpu.vectorize", "auto|1..64", "auto"}, {"cpu.tile", "auto|1..4096x1..4096", "auto"},
                            {"cpu.unroll", "auto|1..32", "auto"},    {"cpu.parallel", "auto|outer|none", "auto"},
                            {"cpu.inline", "auto|1|0", "auto"},      {"cpu.pack", "1|0", "1"},
                            {"cpu.fuse", "1|0", "1"},                {"cpu.rows", "auto|0..4096", "auto"},
                            {"cpu.kblock", "auto|0..65536", "auto"},
                            {"cpu.panel", "auto|none|streamed|broadcast|both", "auto"}};
  for (size_t k = 0; k < sizeof knobs / sizeof knobs[0]; ++k) {
    int found = 0;
    for (size_t i = 0; i < n; ++i) {
      assert_tc_ok(tc_option_info(i, &key, &values, &def, &help));
      if (strcmp(key, knobs[k][0]) != 0) continue;
      found = 1;
      assert_string_equal(values, knobs[k][1]);
      assert_string_equal(def, knobs[k][2]);
      assert_non_null(strchr(help, ' '));
      assert_null(strchr(help, '\n')); /* one line */
    }
    assert_true(found);
  }
  /* Past the end: an error naming the count; the outputs are untouched. */
  key = "unchanged";
  assert_fails_with(tc_option_info(n, &key, &values, &def, &help), TC_ERROR_INVALID_ARGUMENT);
  assert_string_equal(key, "unchanged");
  assert_non_null(strstr(tc_last_error_message(), "out of range"));
  assert_fails_with(tc_option_info((size_t)-1, NULL, NULL, NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
  /* Strings are static: the same pointers every time. */
  const char *k1, *k2;
  assert_tc_ok(tc_option_info(0, &k1, NULL, NULL, NULL));
  assert_tc_ok(tc_option_info(0, &k2, NULL, NULL, NULL));
  assert_ptr_equal(k1, k2);
}

/* Every listed default is accepted by tc_options_set and read back by tc_options_get; a value
 * outside the listed ones is refused naming the key and the allowed values. */
static void test_defaults_and_validation_agree(void **state) {
  (void)state;
  size_t n = count_options();
  tc_options *o = NULL;
  assert_tc_ok(tc_options_create(&o));
  for (size_t i = 0; i < n; ++i) {
    const char *key, *values, *def, *got;
    assert_tc_ok(tc_option_info(i, &key, &values, &def, NULL));
    assert_tc_ok(tc_options_get(o, key, &got));
    assert_string_equal(got, def);
    assert_tc_ok(tc_options_set(o, key, def));
    assert_fails_with(tc_options_set(o, key, "no-such\nvalue"), TC_ERROR_INVALID_ARGUMENT); /* no kind takes a newline */
    assert_non_null(strstr(tc_last_error_message(), key));
    assert_non_null(strstr(tc_last_error_message(), values));
  }
  const char *ok[][2] = {{"cpu.pack", "0"}, {"cpu.fuse", "0"}, {"cpu.tile", "4096x1"}, {"threads", "1024"},
                         {"cpu.inline", "1"}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i) assert_tc_ok(tc_options_set(o, ok[i][0], ok[i][1]));
  const char *bad[][2] = {{"cpu.pack", "auto"}, {"cpu.fuse", "2"}, {"cpu.tile", "4097x1"}, {"threads", "1025"},
                          {"cpu.vectorize", "08x"}, {"cpu.tile", "x"}, {"checked", "yes"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    assert_fails_with(tc_options_set(o, bad[i][0], bad[i][1]), TC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_last_error_message(), "allowed:"));
  }
  assert_fails_with(tc_options_set(o, "cpu.no_such_knob", "1"), TC_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(tc_last_error_message(),
                          "known options: backend, checked, threads, cache, cache.remote, cache.remote_key, "
                          "cache.remote_timeout, tune.strategy"));
  /* The remote cache's URL is checked when set: what is wrong, and the forms allowed. */
  const char *remote_ok[] = {"off", "redis://127.0.0.1:6379", "redis://cache.example:7000/3", "redis://[::1]:6379",
                             "unix:///run/redis/redis.sock"};
  for (size_t i = 0; i < sizeof remote_ok / sizeof remote_ok[0]; ++i) assert_tc_ok(tc_options_set(o, "cache.remote", remote_ok[i]));
  const char *remote_bad[][2] = {{"http://host:80", "not a redis:// or unix:// URL"},
                                 {"redis://host", "no port"},
                                 {"redis://host:0", "the port must be a number from 1 to 65535"},
                                 {"redis://host:6379/x", "the database must be a number"},
                                 {"redis://:6379", "no host"},
                                 {"redis://user:pw@host:6379", "passwords in the URL are not supported"},
                                 {"unix://relative.sock", "a Unix socket needs an absolute path"}};
  for (size_t i = 0; i < sizeof remote_bad / sizeof remote_bad[0]; ++i) {
    assert_fails_with(tc_options_set(o, "cache.remote", remote_bad[i][0]), TC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_last_error_message(), remote_bad[i][1]));
    assert_non_null(strstr(tc_last_error_message(), "expected redis://HOST:PORT[/DB] or unix:///PATH"));
  }
  tc_options_destroy(o);
}

/* The new knobs change how the kernel is built, never what it computes. */
static void test_pack_and_fuse_knobs(void **state) {
  (void)state;
  enum { M = 19, K = 23, N = 17 };
  static float a[M * K], b[N * K], bias[N], want[M * N], got[M * N];
  fill_pattern(a, M * K, 1);
  fill_pattern(b, N * K, 2);
  fill_pattern(bias, N, 3);
  int64_t sa[2] = {M, K}, sb[2] = {N, K}, sbias[1] = {N}, so[2] = {M, N};
  DLTensor in[3] = {make_tensor(a, dt_f32(), 2, sa, NULL), make_tensor(b, dt_f32(), 2, sb, NULL),
                    make_tensor(bias, dt_f32(), 1, sbias, NULL)};
  tc_program *p = define_ok(
      "def fc(float(M,K) A, float(N,K) B, float(N) bias) -> (O) {\n"
      "  T(m, n) +=! A(m, k) * B(n, k)\n"
      "  O(m, n) = fmax(T(m, n) + bias(n), 0)\n"
      "}");
  const char *cases[][3] = {{"backend", "reference", ""}, {"cpu.pack", "1", "cpu.fuse=1"}, {"cpu.pack", "0", "cpu.fuse=0"},
                            {"cpu.fuse", "0", "cpu.pack=1"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    tc_options *o = NULL;
    assert_tc_ok(tc_options_create(&o));
    assert_tc_ok(tc_options_set(o, cases[c][0], cases[c][1]));
    if (c == 2) assert_tc_ok(tc_options_set(o, "cpu.fuse", "0"));
    tc_kernel *k = NULL;
    assert_tc_ok(tc_compile(&k, p, NULL, in, 3, o));
    DLTensor out = make_tensor(c == 0 ? want : got, dt_f32(), 2, so, NULL);
    assert_tc_ok(tc_run(k, in, 3, &out, 1));
    if (c > 0)
      for (int i = 0; i < M * N; ++i) assert_true(got[i] == want[i]);
    const char *text = NULL;
    assert_tc_ok(tc_kernel_describe(k, &text));
    if (c > 0) assert_non_null(strstr(text, cases[c][2]));
    if (c == 1) assert_non_null(strstr(text, "copy with dimension")); /* B packed */
    if (c == 2) assert_null(strstr(text, "copy with dimension"));
    if (c == 3) assert_non_null(strstr(text, "inside a copy")); /* not fused into O */
    tc_kernel_destroy(k);
    tc_options_destroy(o);
  }
  tc_program_destroy(p);
}

/* tc_run_async on host backends: NULL runs to completion like tc_run; a stream is refused
 * before anything runs (the outputs keep their contents). */
static void test_run_async_on_host_backends(void **state) {
  (void)state;
  enum { M = 5, K = 3, N = 4 };
  float a[M * K], b[K * N], sync_out[M * N], async_out[M * N];
  fill_pattern(a, M * K, 4);
  fill_pattern(b, K * N, 5);
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, so[2] = {M, N};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, sa, NULL), make_tensor(b, dt_f32(), 2, sb, NULL)};
  tc_program *p = define_ok(MM_SRC);
  const char *backends[] = {"cpu", "reference"};
  for (size_t i = 0; i < 2; ++i) {
    tc_options *o = NULL;
    assert_tc_ok(tc_options_create(&o));
    assert_tc_ok(tc_options_set(o, "backend", backends[i]));
    tc_kernel *k = NULL;
    assert_tc_ok(tc_compile(&k, p, NULL, in, 2, o));
    DLTensor out_sync = make_tensor(sync_out, dt_f32(), 2, so, NULL);
    DLTensor out_async = make_tensor(async_out, dt_f32(), 2, so, NULL);
    assert_tc_ok(tc_run(k, in, 2, &out_sync, 1));
    assert_tc_ok(tc_run_async(k, in, 2, &out_async, 1, NULL));
    assert_memory_equal(sync_out, async_out, sizeof sync_out);
    for (int j = 0; j < M * N; ++j) async_out[j] = -7.0f;
    int fake_stream = 0;
    assert_fails_with(tc_run_async(k, in, 2, &out_async, 1, &fake_stream), TC_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_last_error_message(), "stream must be NULL"));
    assert_non_null(strstr(tc_last_error_message(), backends[i]));
    for (int j = 0; j < M * N; ++j) assert_true(async_out[j] == -7.0f);
    assert_fails_with(tc_run_async(NULL, in, 2, &out_async, 1, NULL), TC_ERROR_INVALID_ARGUMENT);
    tc_kernel_destroy(k);
    tc_options_destroy(o);
  }
  tc_program_destroy(p);
}

/* A tensor on a device the backend does not accept is refused naming the tensor, the device and
 * what the backend accepts; binding (tc_compile, tc_infer_outputs) reads no device. */
static void test_device_rejected(void **state) {
  (void)state;
  float a[6] = {0}, b[6] = {0}, out[4] = {0};
  int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, so[2] = {2, 2};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, sa, NULL), make_tensor(b, dt_f32(), 2, sb, NULL)};
  in[1].device.device_type = kDLCUDA;
  tc_program *p = define_ok(MM_SRC);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));
  DLTensor o = make_tensor(out, dt_f32(), 2, so, NULL);
  assert_fails_with(tc_run_async(k, in, 2, &o, 1, NULL), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "input 'rhs'"));
  assert_non_null(strstr(tc_last_error_message(), "kDLCUDA"));
  assert_non_null(strstr(tc_last_error_message(), "backend 'cpu' accepts kDLCPU (1)"));
  in[1].device.device_type = kDLCPU;
  o.device.device_type = kDLCUDAManaged;
  assert_fails_with(tc_run(k, in, 2, &o, 1), TC_ERROR_SHAPE);
  assert_non_null(strstr(tc_last_error_message(), "output 'out'"));
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists_every_option),
      cmocka_unit_test(test_defaults_and_validation_agree),
      cmocka_unit_test(test_pack_and_fuse_knobs),
      cmocka_unit_test(test_run_async_on_host_backends),
      cmocka_unit_test(test_device_rejected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
