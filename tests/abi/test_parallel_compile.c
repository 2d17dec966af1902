/* test_parallel_compile.c — many threads define, compile, run and destroy DIFFERENT kernels at
 * once (and, in some rounds, the same def from one shared program), each result checked
 * against a plain C computation. This is what an autotuner compiling candidates in parallel
 * does; the cpu backend compiles without a lock of its own (src/backends/cpu/jit.cpp).
 *
 * The threads' compilations are the process's first: one of them builds Halide's shared JIT
 * runtime while the others wait for it. TC_PC_THREADS (default 8) and TC_PC_ROUNDS (default 9)
 * make it a longer stress run; TC_PC_WARM=1 compiles one kernel first (the shared runtime then
 * exists before the threads start), TC_PC_WARM=2 every case; either prints the wall time of
 * the threaded part.
 *
 * Under ThreadSanitizer every case is compiled once on this thread first: libHalide, not
 * instrumented, builds tables in function-local statics on first use (Simplify_Call.cpp:649,
 * Type.h:250 in Halide 14), and TSan cannot see the synchronisation of another thread's
 * already-initialised check of such a static, so it reports the table's later reads as races. */
#include "abi_util.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

/* ---- the kernels -------------------------------------------------------------------------- */

enum { NUM_CASES = 10 };

static const char *const case_src[NUM_CASES] = {
    /* 0 */ "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }",
    /* 1 */
    "def softmax(float(N, D) X) -> (O) {\n"
    "  mx(n) max=! X(n, d)\n"
    "  e(n, d) = exp(X(n, d) - mx(n))\n"
    "  s(n) +=! e(n, d)\n"
    "  O(n, d) = e(n, d) / s(n)\n"
    "}\n",
    /* 2 */
    "def relu_rowsum(float(M,N) X) -> (R, S) {\n"
    "  t(i,j) = X(i,j) * 2\n"
    "  R(i,j) = fmax(t(i,j), 0)\n"
    "  S(i) +=! t(i,j) + N\n"
    "}\n",
    /* 3 */ "def tadd(float(M,N) A, float(N,M) B) -> (O) { O(i,j) = A(i,j) + B(j,i) * 0.5 }",
    /* 4 */ "def embed(float(E, D) LUT, int32(B, L) I) -> (O) { O(b, d) +=! LUT(I(b, l), d) }",
    /* 5 */ "def maxpool(float(B,C,H,W) I) -> (O) { O(b,c,i,j) max=! I(b,c,2*i + kh, 2*j + kw) where kh in 0:2, kw in 0:2 }",
    /* 6 */ "def padsq(float(N) A) -> (O) { O(i) = (i >= 1 && i <= N) ? A(i - 1) * A(i - 1) : 0 where i in 0:N+2 }",
    /* 7 */ "def isum(int32(M,N) A) -> (S) { S(i) +=! A(i,j) * 3 - 1 }",
    /* 8 */
    "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }\n"
    "def relu_rowsum(float(M,N) X) -> (R, S) {\n"
    "  t(i,j) = X(i,j) * 2\n"
    "  R(i,j) = fmax(t(i,j), 0)\n"
    "  S(i) +=! t(i,j) + N\n"
    "}\n"
    "def mlp2(float(B,I) x, float(I,H) w1, float(H,O) w2) -> (y, s) {\n"
    "  h = mm(x, w1)\n"
    "  r, s = relu_rowsum(h)\n"
    "  y = mm(r, w2)\n"
    "}\n",
    /* 9 */ "def act(float(N,M) X) -> (O) { O(i,j) = tanh(X(i,j)) + exp(-X(i,j)) }",
};
static const char *const case_entry[NUM_CASES] = {"mm",      "softmax", "relu_rowsum", "tadd", "embed",
                                                  "maxpool", "padsq",   "isum",        "mlp2", "act"};

/* Exact for the small half-integer sums most cases compute; relative for exp/tanh/softmax. */
static int close_enough(double got, double want, double rel) {
  double d = fabs(got - want);
  return d <= rel * (1.0 + fabs(want));
}

#define MAXN 256
typedef struct {
  float f[4][MAXN];  /* inputs (float) */
  int32_t i[MAXN];   /* input (int32) */
  float out[2][MAXN];
  int32_t iout[MAXN];
  double want[2][MAXN];
  int64_t shape[6][4]; /* inputs then outputs */
  DLTensor in[3], outs[2];
  size_t nin, nout;
  size_t count[2];  /* elements of each output */
  double rel;       /* tolerance */
} case_data;

static void set_f(case_data *c, int k, int n, int seed) {
  fill_pattern(c->f[k], (size_t)n, seed);
}

static DLTensor tensor(void *data, DLDataType t, int ndim, int64_t *shape, int64_t a, int64_t b, int64_t x, int64_t y) {
  shape[0] = a, shape[1] = b, shape[2] = x, shape[3] = y;
  return make_tensor(data, t, ndim, shape, NULL);
}

/* Inputs, outputs and expected values of case `which` with shape variant `v` (0..2). */
static void prepare(case_data *c, int which, int v, int seed) {
  memset(c, 0, sizeof *c);
  c->rel = 0;
  c->nout = 1;
  switch (which) {
    case 0: {
      int M = 5 + v, K = 7, N = 6 + v;
      set_f(c, 0, M * K, seed), set_f(c, 1, K * N, seed + 1);
      c->in[0] = tensor(c->f[0], dt_f32(), 2, c->shape[0], M, K, 0, 0);
      c->in[1] = tensor(c->f[1], dt_f32(), 2, c->shape[1], K, N, 0, 0);
      c->nin = 2;
      c->outs[0] = tensor(c->out[0], dt_f32(), 2, c->shape[4], M, N, 0, 0);
      c->count[0] = (size_t)(M * N);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double s = 0;
          for (int k = 0; k < K; ++k) s += (double)c->f[0][i * K + k] * c->f[1][k * N + j];
          c->want[0][i * N + j] = s;
        }
      break;
    }
    case 1: {
      int N = 4 + v, D = 9;
      set_f(c, 0, N * D, seed);
      c->in[0] = tensor(c->f[0], dt_f32(), 2, c->shape[0], N, D, 0, 0);
      c->nin = 1;
      c->outs[0] = tensor(c->out[0], dt_f32(), 2, c->shape[4], N, D, 0, 0);
      c->count[0] = (size_t)(N * D);
      c->rel = 1e-5;
      for (int n = 0; n < N; ++n) {
        double mx = -INFINITY, s = 0;
        for (int d = 0; d < D; ++d) mx = fmax(mx, c->f[0][n * D + d]);
        for (int d = 0; d < D; ++d) s += exp(c->f[0][n * D + d] - mx);
        for (int d = 0; d < D; ++d) c->want[0][n * D + d] = exp(c->f[0][n * D + d] - mx) / s;
      }
      break;
    }
    case 2: {
      int M = 3 + v, N = 8;
      set_f(c, 0, M * N, seed);
      c->in[0] = tensor(c->f[0], dt_f32(), 2, c->shape[0], M, N, 0, 0);
      c->nin = 1;
      c->nout = 2;
      c->outs[0] = tensor(c->out[0], dt_f32(), 2, c->shape[4], M, N, 0, 0);
      c->outs[1] = tensor(c->out[1], dt_f32(), 1, c->shape[5], M, 0, 0, 0);
      c->count[0] = (size_t)(M * N), c->count[1] = (size_t)M;
      for (int i = 0; i < M; ++i) {
        double s = 0;
        for (int j = 0; j < N; ++j) {
          double t = 2.0 * c->f[0][i * N + j];
          c->want[0][i * N + j] = fmax(t, 0);
          s += t + N;
        }
        c->want[1][i] = s;
      }
      break;
    }
    case 3: {
      int M = 4 + v, N = 7;
      set_f(c, 0, M * N, seed), set_f(c, 1, N * M, seed + 3);
      c->in[0] = tensor(c->f[0], dt_f32(), 2, c->shape[0], M, N, 0, 0);
      c->in[1] = tensor(c->f[1], dt_f32(), 2, c->shape[1], N, M, 0, 0);
      c->nin = 2;
      c->outs[0] = tensor(c->out[0], dt_f32(), 2, c->shape[4], M, N, 0, 0);
      c->count[0] = (size_t)(M * N);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) c->want[0][i * N + j] = (double)c->f[0][i * N + j] + c->f[1][j * M + i] * 0.5;
      break;
    }
    case 4: {
      int E = 6, D = 5 + v, B = 3, L = 4;
      set_f(c, 0, E * D, seed);
      for (int b = 0; b < B; ++b)
        for (int l = 0; l < L; ++l) c->i[b * L + l] = (b * 7 + l * 3 + seed) % E;
      c->in[0] = tensor(c->f[0], dt_f32(), 2, c->shape[0], E, D, 0, 0);
      c->in[1] = tensor(c->i, dt_i32(), 2, c->shape[1], B, L, 0, 0);
      c->nin = 2;
      c->outs[0] = tensor(c->out[0], dt_f32(), 2, c->shape[4], B, D, 0, 0);
      c->count[0] = (size_t)(B * D);
      for (int b = 0; b < B; ++b)
        for (int d = 0; d < D; ++d) {
          double s = 0;
          for (int l = 0; l < L; ++l) s += c->f[0][c->i[b * L + l] * D + d];
          c->want[0][b * D + d] = s;
        }
      break;
    }
    case 5: {
      int B = 1, C = 2, H = 2 * (3 + v), W = 8, OH = H / 2, OW = W / 2;
      set_f(c, 0, B * C * H * W, seed);
      c->in[0] = tensor(c->f[0], dt_f32(), 4, c->shape[0], B, C, H, W);
      c->nin = 1;
      c->outs[0] = tensor(c->out[0], dt_f32(), 4, c->shape[4], B, C, OH, OW);
      c->count[0] = (size_t)(B * C * OH * OW);
      for (int ch = 0; ch < C; ++ch)
        for (int i = 0; i < OH; ++i)
          for (int j = 0; j < OW; ++j) {
            double m = -INFINITY;
            for (int kh = 0; kh < 2; ++kh)
              for (int kw = 0; kw < 2; ++kw) m = fmax(m, c->f[0][(ch * H + 2 * i + kh) * W + 2 * j + kw]);
            c->want[0][(ch * OH + i) * OW + j] = m;
          }
      break;
    }
    case 6: {
      int N = 9 + v;
      set_f(c, 0, N, seed);
      c->in[0] = tensor(c->f[0], dt_f32(), 1, c->shape[0], N, 0, 0, 0);
      c->nin = 1;
      c->outs[0] = tensor(c->out[0], dt_f32(), 1, c->shape[4], N + 2, 0, 0, 0);
      c->count[0] = (size_t)(N + 2);
      for (int i = 0; i < N + 2; ++i)
        c->want[0][i] = i >= 1 && i <= N ? (double)c->f[0][i - 1] * c->f[0][i - 1] : 0.0;
      break;
    }
    case 7: {
      int M = 4 + v, N = 10;
      for (int k = 0; k < M * N; ++k) c->i[k] = (k * 7 + seed) % 23 - 11;
      c->in[0] = tensor(c->i, dt_i32(), 2, c->shape[0], M, N, 0, 0);
      c->nin = 1;
      c->outs[0] = tensor(c->iout, dt_i32(), 1, c->shape[4], M, 0, 0, 0);
      c->count[0] = (size_t)M;
      for (int i = 0; i < M; ++i) {
        int64_t s = 0;
        for (int j = 0; j < N; ++j) s += (int64_t)c->i[i * N + j] * 3 - 1;
        c->want[0][i] = (double)s;
      }
      break;
    }
    case 8: {
      int B = 3 + v, I = 4, H = 5, O = 6;
      set_f(c, 0, B * I, seed), set_f(c, 1, I * H, seed + 1), set_f(c, 2, H * O, seed + 2);
      c->in[0] = tensor(c->f[0], dt_f32(), 2, c->shape[0], B, I, 0, 0);
      c->in[1] = tensor(c->f[1], dt_f32(), 2, c->shape[1], I, H, 0, 0);
      c->in[2] = tensor(c->f[2], dt_f32(), 2, c->shape[2], H, O, 0, 0);
      c->nin = 3;
      c->nout = 2;
      c->outs[0] = tensor(c->out[0], dt_f32(), 2, c->shape[4], B, O, 0, 0);
      c->outs[1] = tensor(c->out[1], dt_f32(), 1, c->shape[5], B, 0, 0, 0);
      c->count[0] = (size_t)(B * O), c->count[1] = (size_t)B;
      c->rel = 1e-5;
      for (int b = 0; b < B; ++b) {
        double r[8], s = 0;
        for (int h = 0; h < H; ++h) {
          double t = 0;
          for (int i = 0; i < I; ++i) t += (double)c->f[0][b * I + i] * c->f[1][i * H + h];
          t *= 2;
          r[h] = fmax(t, 0);
          s += t + H;
        }
        c->want[1][b] = s;
        for (int o = 0; o < O; ++o) {
          double y = 0;
          for (int h = 0; h < H; ++h) y += r[h] * c->f[2][h * O + o];
          c->want[0][b * O + o] = y;
        }
      }
      break;
    }
    case 9: {
      int N = 3 + v, M = 11;
      set_f(c, 0, N * M, seed);
      c->in[0] = tensor(c->f[0], dt_f32(), 2, c->shape[0], N, M, 0, 0);
      c->nin = 1;
      c->outs[0] = tensor(c->out[0], dt_f32(), 2, c->shape[4], N, M, 0, 0);
      c->count[0] = (size_t)(N * M);
      c->rel = 1e-5;
      for (int k = 0; k < N * M; ++k) c->want[0][k] = tanh(c->f[0][k]) + exp(-c->f[0][k]);
      break;
    }
  }
}

/* Compiles case `which` (variant v) from `shared` or, when NULL, from its own program; runs it
 * twice; checks. 0 on success, else a message in `why`. */
static int check_case(int which, int v, int seed, const tc_program *shared, const tc_options *opts, char *why,
                      size_t n) {
  case_data *c = malloc(sizeof *c);
  if (!c) return snprintf(why, n, "no memory"), 1;
  prepare(c, which, v, seed);
  tc_program *own = NULL;
  tc_kernel *k = NULL;
  int bad = 0;
  int rc = shared ? TC_OK : tc_define(&own, case_src[which]);
  if (rc == TC_OK) rc = tc_compile(&k, shared ? shared : own, case_entry[which], c->in, c->nin, opts);
  tc_program_destroy(own); /* the kernel outlives its program */
  if (rc != TC_OK) {
    snprintf(why, n, "case %d: define/compile returned %d: %s", which, rc, tc_last_error_message());
    bad = 1;
  }
  for (int rep = 0; rep < 2 && !bad; ++rep) {
    memset(c->out, 0xFF, sizeof c->out); /* NaN / -1: every element must be written */
    memset(c->iout, 0xFF, sizeof c->iout);
    rc = tc_run(k, c->in, c->nin, c->outs, c->nout);
    if (rc != TC_OK) {
      snprintf(why, n, "case %d: tc_run returned %d: %s", which, rc, tc_last_error_message());
      bad = 1;
      break;
    }
    for (size_t o = 0; o < c->nout && !bad; ++o)
      for (size_t e = 0; e < c->count[o]; ++e) {
        double got = which == 7 ? (double)c->iout[e] : (double)c->out[o][e];
        if (!close_enough(got, c->want[o][e], c->rel)) {
          snprintf(why, n, "case %d (%s) variant %d output %zu element %zu: got %.9g, want %.9g", which,
                   case_entry[which], v, o, e, got, c->want[o][e]);
          bad = 1;
          break;
        }
      }
  }
  tc_kernel_destroy(k);
  free(c);
  return bad;
}

/* ---- the threads -------------------------------------------------------------------------- */

static pthread_barrier_t barrier;
static int num_threads = 8, num_rounds = 9;
static tc_program *shared_programs[NUM_CASES];

typedef struct {
  int id;
  int runs, failures;
  char first_failure[1200];
} pc_job;

static void *pc_thread(void *arg) {
  pc_job *job = arg;
  tc_options *opts = NULL;
  if (job->id % 2 == 1) { /* other schedules: a different pipeline for the same source */
    if (tc_options_create(&opts) != TC_OK || tc_options_set(opts, "threads", "1") != TC_OK ||
        tc_options_set(opts, "cpu.vectorize", job->id % 4 == 1 ? "1" : "auto") != TC_OK) {
      job->failures++;
      snprintf(job->first_failure, sizeof job->first_failure, "options: %s", tc_last_error_message());
    }
  }
  for (int r = 0; r < num_rounds; ++r) {
    pthread_barrier_wait(&barrier); /* every round's compiles start together */
    /* Every third round all threads compile the same def from one shared program (half of
     * them the same shapes too); the others each compile a different def from their own. */
    int same = r % 3 == 2;
    int which = same ? (r / 3) % NUM_CASES : (job->id + r * 3) % NUM_CASES;
    int v = same ? job->id % 2 : (job->id + r) % 3;
    char why[1024];
    job->runs++;
    if (check_case(which, v, job->id + r, same ? shared_programs[which] : NULL, opts, why, sizeof why)) {
      if (job->failures++ == 0) snprintf(job->first_failure, sizeof job->first_failure, "round %d: %s", r, why);
    }
  }
  tc_options_destroy(opts);
  return NULL;
}

static int env_int(const char *name, int fallback) {
  const char *s = getenv(name);
  return s && *s ? atoi(s) : fallback;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_parallel_compile(void **state) {
  (void)state;
  num_threads = env_int("TC_PC_THREADS", 8);
  num_rounds = env_int("TC_PC_ROUNDS", 9);
  assert_true(num_threads >= 1 && num_threads <= 64 && num_rounds >= 1);
  for (int i = 0; i < NUM_CASES; ++i) shared_programs[i] = define_ok(case_src[i]);
  int warm = env_int("TC_PC_WARM", 0);
#ifdef __SANITIZE_THREAD__
  if (warm < 2) warm = 2;
#endif
  for (int which = 0; which < (warm >= 2 ? NUM_CASES : warm); ++which) {
    char why[1024];
    assert_int_equal(check_case(which, 0, 0, NULL, NULL, why, sizeof why), 0);
  }
  pc_job *jobs = calloc((size_t)num_threads, sizeof *jobs);
  pthread_t *th = calloc((size_t)num_threads, sizeof *th);
  assert_non_null(jobs);
  assert_non_null(th);
  assert_int_equal(pthread_barrier_init(&barrier, NULL, (unsigned)num_threads), 0);
  double t0 = now();
  for (int i = 0; i < num_threads; ++i) {
    jobs[i].id = i;
    assert_int_equal(pthread_create(&th[i], NULL, pc_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < num_threads; ++i) assert_int_equal(pthread_join(th[i], NULL), 0);
  double t1 = now();
  pthread_barrier_destroy(&barrier);
  int runs = 0, failures = 0;
  for (int i = 0; i < num_threads; ++i) {
    runs += jobs[i].runs;
    failures += jobs[i].failures;
    if (jobs[i].failures) print_error("thread %d: %d failures, first: %s\n", i, jobs[i].failures, jobs[i].first_failure);
  }
  if (warm)
    print_message("%d threads x %d rounds: %d compiles in %.3f s\n", num_threads, num_rounds, runs, t1 - t0);
  assert_int_equal(failures, 0);
  assert_int_equal(runs, num_threads * num_rounds);
  for (int i = 0; i < NUM_CASES; ++i) tc_program_destroy(shared_programs[i]);
  free(jobs);
  free(th);
}

/* Every case once, on this thread alone: a failure here is the case, not the threads. */
static void test_cases_serially(void **state) {
  (void)state;
  for (int which = 0; which < NUM_CASES; ++which) {
    char why[1024];
    int bad = check_case(which, 0, 1, NULL, NULL, why, sizeof why);
    if (bad) print_error("%s\n", why);
    assert_int_equal(bad, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      /* first: the threads' compiles are also the process's first (Halide builds its shared
       * JIT runtime during one of them) */
      cmocka_unit_test(test_parallel_compile),
      cmocka_unit_test(test_cases_serially),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
