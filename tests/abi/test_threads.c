/* test_threads.c — thread-local error messages and concurrent use of one kernel/program. */
#include "abi_util.h"

#include <pthread.h>

static pthread_barrier_t barrier;

typedef struct {
  int which; /* 0: syntax error, 1: shape error, 2: no failure */
  int status;
  char message[2048];
  int ok; /* the thread's own checks passed */
} err_job;

static void *err_thread(void *arg) {
  err_job *job = arg;
  job->ok = 1;
  /* a fresh thread has no message */
  if (strcmp(tc_last_error_message(), "") != 0) job->ok = 0;
  pthread_barrier_wait(&barrier);
  tc_program *p = NULL;
  if (job->which == 0) {
    job->status = tc_define(&p, "def synt(float(N) A) -> (B) { B(i) = A(i) $ }");
  } else if (job->which == 1) {
    p = NULL;
    if (tc_define(&p, MM_SRC) != TC_OK) job->ok = 0;
    int64_t as[2] = {3, 4}, bs[2] = {5, 2};
    DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, NULL), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
    tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
    size_t n = 1;
    job->status = tc_infer_outputs(p, NULL, in, 2, &ti, &n);
    tc_program_destroy(p);
    p = NULL;
  } else {
    job->status = tc_define(&p, MM_SRC);
    tc_program_destroy(p);
    p = NULL;
  }
  /* everybody has failed (or not) before anybody reads */
  pthread_barrier_wait(&barrier);
  snprintf(job->message, sizeof job->message, "%s", tc_last_error_message());
  pthread_barrier_wait(&barrier);
  /* the message is still this thread's after the others read theirs */
  if (strcmp(job->message, tc_last_error_message()) != 0) job->ok = 0;
  return NULL;
}

static void test_thread_local_errors(void **state) {
  (void)state;
  /* this thread's own message must not leak into the workers or change because of them */
  tc_program *p = NULL;
  assert_fails_with(tc_define(&p, "def main_thread_error("), TC_ERROR_SYNTAX);
  char mine[2048];
  snprintf(mine, sizeof mine, "%s", tc_last_error_message());

  err_job jobs[3];
  pthread_t th[3];
  assert_int_equal(pthread_barrier_init(&barrier, NULL, 3), 0);
  for (int i = 0; i < 3; ++i) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].which = i;
    assert_int_equal(pthread_create(&th[i], NULL, err_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 3; ++i) assert_int_equal(pthread_join(th[i], NULL), 0);
  pthread_barrier_destroy(&barrier);

  for (int i = 0; i < 3; ++i) {
    print_message("thread %d: status %d ok %d message '%s'\n", i, jobs[i].status, jobs[i].ok, jobs[i].message);
    assert_int_equal(jobs[i].ok, 1);
  }
  assert_int_equal(jobs[0].status, TC_ERROR_SYNTAX);
  assert_int_equal(strncmp(jobs[0].message, "synt:", 5), 0);
  assert_null(strstr(jobs[0].message, "rhs"));
  assert_int_equal(jobs[1].status, TC_ERROR_SHAPE);
  assert_non_null(strstr(jobs[1].message, "rhs"));
  assert_null(strstr(jobs[1].message, "synt"));
  assert_int_equal(jobs[2].status, TC_OK);
  assert_string_equal(jobs[2].message, "");
  assert_string_equal(tc_last_error_message(), mine);
}

/* ---- concurrent runs of one kernel ------------------------------------------------------- */

enum { M = 17, K = 13, N = 11, THREADS = 8, ITERS = 20 };

typedef struct {
  const tc_kernel *kernel;
  const tc_program *program;
  int seed;
  int failures;
  int status;
} run_job;

static void *run_thread(void *arg) {
  run_job *job = arg;
  float a[M * K], b[K * N], c[M * N], want[M * N];
  fill_pattern(a, M * K, job->seed);
  fill_pattern(b, K * N, job->seed + 100);
  ref_matmul(a, b, want, M, K, N);
  int64_t as[2] = {M, K}, bs[2] = {K, N}, cs[2] = {M, N};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, as, NULL), make_tensor(b, dt_f32(), 2, bs, NULL)};
  DLTensor out = make_tensor(c, dt_f32(), 2, cs, NULL);
  pthread_barrier_wait(&barrier);
  for (int it = 0; it < ITERS; ++it) {
    memset(c, 0xFF, sizeof c);
    int rc = tc_run(job->kernel, in, 2, &out, 1);
    if (rc != TC_OK) {
      job->status = rc;
      job->failures++;
      continue;
    }
    for (int i = 0; i < M * N; ++i)
      if (c[i] != want[i]) job->failures++;
    /* the shared program too: inference from several threads */
    tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
    size_t n = 1;
    if (tc_infer_outputs(job->program, NULL, in, 2, &ti, &n) != TC_OK || ti.shape[0] != M || ti.shape[1] != N)
      job->failures++;
  }
  return NULL;
}

static void test_concurrent_runs(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  int64_t as[2] = {M, K}, bs[2] = {K, N};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, NULL), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, in, 2, NULL));

  run_job jobs[THREADS];
  pthread_t th[THREADS];
  assert_int_equal(pthread_barrier_init(&barrier, NULL, THREADS), 0);
  for (int i = 0; i < THREADS; ++i) {
    jobs[i] = (run_job){k, p, i, 0, TC_OK};
    assert_int_equal(pthread_create(&th[i], NULL, run_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; ++i) assert_int_equal(pthread_join(th[i], NULL), 0);
  pthread_barrier_destroy(&barrier);
  for (int i = 0; i < THREADS; ++i) {
    if (jobs[i].failures) print_error("thread %d: %d failures, status %d\n", i, jobs[i].failures, jobs[i].status);
    assert_int_equal(jobs[i].failures, 0);
  }
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

/* Several threads compiling from one program at once. */
typedef struct {
  const tc_program *program;
  int64_t m;
  int ok;
} compile_job;

static void *compile_thread(void *arg) {
  compile_job *job = arg;
  int64_t as[2] = {job->m, 3}, bs[2] = {3, 2};
  DLTensor in[2] = {make_tensor(NULL, dt_f32(), 2, as, NULL), make_tensor(NULL, dt_f32(), 2, bs, NULL)};
  pthread_barrier_wait(&barrier);
  for (int it = 0; it < 3; ++it) { /* cpu compiles take ~0.3 s each */
    tc_kernel *k = NULL;
    if (tc_compile(&k, job->program, "mm", in, 2, NULL) != TC_OK) return NULL;
    tc_tensor_info ti = TC_STRUCT_INIT(tc_tensor_info);
    int rc = tc_kernel_output_info(k, 0, &ti);
    tc_kernel_destroy(k);
    if (rc != TC_OK || ti.shape[0] != job->m || ti.shape[1] != 2) return NULL;
  }
  job->ok = 1;
  return NULL;
}

static void test_concurrent_compiles(void **state) {
  (void)state;
  tc_program *p = define_ok(MM_SRC);
  compile_job jobs[4];
  pthread_t th[4];
  assert_int_equal(pthread_barrier_init(&barrier, NULL, 4), 0);
  for (int i = 0; i < 4; ++i) {
    jobs[i] = (compile_job){p, i + 1, 0};
    assert_int_equal(pthread_create(&th[i], NULL, compile_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; ++i) assert_int_equal(pthread_join(th[i], NULL), 0);
  pthread_barrier_destroy(&barrier);
  for (int i = 0; i < 4; ++i) assert_int_equal(jobs[i].ok, 1);
  tc_program_destroy(p);
}

/* Every stage at once from many threads: each defines its own program (with temporaries),
 * compiles it, and runs it next to a kernel shared by all; results must match a
 * single-threaded run exactly. */
#define SOFTMAX_SRC                                   \
  "def softmax(float(N, D) X) -> (O) {\n"            \
  "  mx(n) max=! X(n, d)\n"                          \
  "  e(n, d) = exp(X(n, d) - mx(n))\n"               \
  "  s(n) +=! e(n, d)\n"                             \
  "  O(n, d) = e(n, d) / s(n)\n"                     \
  "}\n"
enum { SN = 4, SD = 5, MIXED_THREADS = 6, MIXED_ITERS = 20 };
static float softmax_in[SN * SD], softmax_want[SN * SD];

typedef struct {
  const tc_kernel *shared;
  int failures;
} mixed_job;

static int run_softmax(const tc_kernel *k, float *out) {
  int64_t shape[2] = {SN, SD};
  DLTensor in = make_tensor(softmax_in, dt_f32(), 2, shape, NULL);
  DLTensor o = make_tensor(out, dt_f32(), 2, shape, NULL);
  return tc_run(k, &in, 1, &o, 1);
}

static void *mixed_thread(void *arg) {
  mixed_job *job = arg;
  int64_t shape[2] = {SN, SD};
  DLTensor meta = make_tensor(NULL, dt_f32(), 2, shape, NULL);
  pthread_barrier_wait(&barrier);
  for (int it = 0; it < MIXED_ITERS; ++it) {
    tc_program *p = NULL;
    tc_kernel *k = NULL;
    float mine[SN * SD], shared[SN * SD];
    if (tc_define(&p, SOFTMAX_SRC) != TC_OK || tc_compile(&k, p, NULL, &meta, 1, NULL) != TC_OK) {
      job->failures++;
    } else {
      tc_program_destroy(p); /* the kernel outlives its program */
      p = NULL;
      if (run_softmax(k, mine) != TC_OK || run_softmax(job->shared, shared) != TC_OK) job->failures++;
      else if (memcmp(mine, softmax_want, sizeof mine) || memcmp(shared, softmax_want, sizeof shared)) job->failures++;
    }
    tc_kernel_destroy(k);
    tc_program_destroy(p);
  }
  return NULL;
}

static void test_concurrent_define_compile_run(void **state) {
  (void)state;
  for (int i = 0; i < SN * SD; ++i) softmax_in[i] = (float)((i * 37) % 11) / 7.0f - 0.5f;
  tc_program *p = define_ok(SOFTMAX_SRC);
  int64_t shape[2] = {SN, SD};
  DLTensor meta = make_tensor(NULL, dt_f32(), 2, shape, NULL);
  tc_kernel *k = NULL;
  assert_tc_ok(tc_compile(&k, p, NULL, &meta, 1, NULL));
  assert_tc_ok(run_softmax(k, softmax_want));
  for (int n = 0; n < SN; ++n) { /* rows of a softmax sum to 1 */
    float sum = 0;
    for (int d = 0; d < SD; ++d) sum += softmax_want[n * SD + d];
    assert_true(sum > 0.999f && sum < 1.001f);
  }
  mixed_job jobs[MIXED_THREADS];
  pthread_t th[MIXED_THREADS];
  assert_int_equal(pthread_barrier_init(&barrier, NULL, MIXED_THREADS), 0);
  for (int i = 0; i < MIXED_THREADS; ++i) {
    jobs[i] = (mixed_job){k, 0};
    assert_int_equal(pthread_create(&th[i], NULL, mixed_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < MIXED_THREADS; ++i) assert_int_equal(pthread_join(th[i], NULL), 0);
  pthread_barrier_destroy(&barrier);
  for (int i = 0; i < MIXED_THREADS; ++i) assert_int_equal(jobs[i].failures, 0);
  tc_kernel_destroy(k);
  tc_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concurrent_define_compile_run),
      cmocka_unit_test(test_thread_local_errors),
      cmocka_unit_test(test_concurrent_runs),
      cmocka_unit_test(test_concurrent_compiles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
