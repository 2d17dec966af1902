// peak.c — the machine's FP32 fused multiply-add throughput, the ceiling every contraction
// figure in bench/ is given against. Each thread runs CHAINS independent chains of
// vector multiply-adds (acc = acc * m + c) on the widest vectors the compiler targets with
// -march=native (AVX-512: 16 floats, AVX: 8, else 4); 12 chains cover two FMA units of 4 cycles'
// latency with room. One multiply-add counts 2 flops, as bench/kernels.py counts them.
// What it does not measure: memory, caches, or anything a kernel does besides multiply-adds.
//
//   cc -O2 -march=native -ffp-contract=fast -pthread bench/peak.c -o peak
//   ./peak THREADS [SECONDS]    prints "peak threads=N gflops=MEDIAN best=BEST runs=5"
//
// bench/peak.py compiles and runs it. The run is repeated 5 times (each about SECONDS / 5,
// default 1 s in all) and the median and the best reported.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
#define CHAINS 12  // the unrolled loop in work() has this many
#define RUNS 5

typedef float vec __attribute__((vector_size(LANES * sizeof(float))));

struct job {
  long iterations;
  float seed;
  float result;  // the chains' sum: printed nowhere, but it keeps the loop from being removed
  pthread_barrier_t* start;
};

static void* work(void* arg) {
  struct job* j = arg;
  // Broadcast, not set lane by lane: a vector written through a subscript is kept in memory,
  // and every multiply-add of the loop then read m from the stack (GCC 12: a quarter below the
  // rate OpenBLAS's sgemm reaches; tests/bench checks the loop's operands are registers).
  const vec zero = {0}, m = zero + 0.999999f, c = zero + j->seed * 1e-7f;
  vec acc[CHAINS];
  for (int k = 0; k < CHAINS; ++k)
    for (int l = 0; l < LANES; ++l) acc[k][l] = j->seed + (float)(k + l);
  pthread_barrier_wait(j->start);
  // Unrolled by hand: a loop over the chains left them in memory (one FMA per load and store).
  vec a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], a4 = acc[4], a5 = acc[5];
  vec a6 = acc[6], a7 = acc[7], a8 = acc[8], a9 = acc[9], a10 = acc[10], a11 = acc[11];
  for (long i = 0; i < j->iterations; ++i) {
    a0 = a0 * m + c, a1 = a1 * m + c, a2 = a2 * m + c, a3 = a3 * m + c, a4 = a4 * m + c, a5 = a5 * m + c;
    a6 = a6 * m + c, a7 = a7 * m + c, a8 = a8 * m + c, a9 = a9 * m + c, a10 = a10 * m + c, a11 = a11 * m + c;
  }
  acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = a4, acc[5] = a5;
  acc[6] = a6, acc[7] = a7, acc[8] = a8, acc[9] = a9, acc[10] = a10, acc[11] = a11;
  float sum = 0;
  for (int k = 0; k < CHAINS; ++k)
    for (int l = 0; l < LANES; ++l) sum += acc[k][l];
  j->result = sum;
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// GFLOP/s of `threads` threads running `iterations` steps each, timed from the moment they are
// all released to the moment the last one ends.
static double measure(int threads, long iterations) {
  pthread_t ids[1024];
  struct job jobs[1024];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
  for (int t = 0; t < threads; ++t) {
    jobs[t] = (struct job){iterations, 1.0f + (float)t, 0.0f, &start};
    if (pthread_create(&ids[t], NULL, work, &jobs[t]) != 0) {
      fprintf(stderr, "peak: cannot start thread %d\n", t);
      exit(1);
    }
  }
  // The clock starts before the release: taken after it, it waited for this thread to be
  // scheduled beside workers that had already started, and the time came out short.
  double t0 = now();
  pthread_barrier_wait(&start);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  double seconds = now() - t0;
  pthread_barrier_destroy(&start);
  return 2.0 * CHAINS * LANES * (double)iterations * threads / seconds / 1e9;
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  double seconds = argc > 2 ? atof(argv[2]) : 1.0;
  if (threads < 1 || threads > 1024 || !(seconds > 0)) {
    fprintf(stderr, "usage: peak THREADS [SECONDS]   (1 <= THREADS <= 1024)\n");
    return 2;
  }
  // Iterations for about SECONDS / RUNS a run, from a short calibration run.
  long iterations = 1 << 16;
  double t0 = now();
  measure(threads, iterations);
  double per_iteration = (now() - t0) / (double)iterations;
  iterations = (long)(seconds / RUNS / per_iteration);
  if (iterations < 1024) iterations = 1024;
  double runs[RUNS];
  for (int r = 0; r < RUNS; ++r) runs[r] = measure(threads, iterations);
  qsort(runs, RUNS, sizeof runs[0], by_value);
  printf("peak threads=%d gflops=%.1f best=%.1f runs=%d lanes=%d chains=%d\n", threads, runs[RUNS / 2], runs[RUNS - 1],
         RUNS, LANES, CHAINS);
  return 0;
}
