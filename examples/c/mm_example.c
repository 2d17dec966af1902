/* mm_example.c — multiply two matrices with a Tensor Comprehension through libtc's C API.
 *
 * Build against an installed libtc:
 *     cc mm_example.c $(pkg-config --cflags --libs tc) -o mm_example
 * (or with CMake: see ../cmake/CMakeLists.txt). Exits 0 when the result matches a C loop.
 */
#include <stdio.h>
#include <stdlib.h>

#include <tc/tc.h>

static const char *const kSource =
    "def mm(float(M,K) A, float(K,N) B) -> (C) {\n"
    "  C(i,j) +=! A(i,k) * B(k,j)\n"
    "}\n";

static int check(int status, const char *what) {
  if (status != TC_OK)
    fprintf(stderr, "%s failed: %s (%d)\n%s\n", what, tc_strerror(status), status, tc_last_error_message());
  return status == TC_OK;
}

static DLTensor tensor(void *data, DLDataType dtype, int ndim, int64_t *shape) {
  DLTensor t = {0};
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = NULL; /* row-major */
  return t;
}

int main(void) {
  enum { M = 3, K = 4, N = 2 };
  float a[M * K], b[K * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 5) - 1.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 3) + 0.5f;

  const DLDataType f32 = {kDLFloat, 32, 1};
  int64_t a_shape[2] = {M, K}, b_shape[2] = {K, N};
  DLTensor inputs[2] = {tensor(a, f32, 2, a_shape), tensor(b, f32, 2, b_shape)};

  int ok = 0;
  tc_program *program = NULL;
  tc_kernel *kernel = NULL;
  float *c = NULL;
  printf("libtc %s\n", tc_version_string());

  if (!check(tc_define_named(&program, kSource, "mm.tc"), "tc_define")) goto done;

  /* Output shapes for these inputs. */
  tc_tensor_info out_info = TC_STRUCT_INIT(tc_tensor_info);
  size_t num_outputs = 1;
  if (!check(tc_infer_outputs(program, "mm", inputs, 2, &out_info, &num_outputs), "tc_infer_outputs"))
    goto done;
  if (num_outputs != 1 || out_info.ndim != 2 || out_info.shape[0] != M || out_info.shape[1] != N) {
    fprintf(stderr, "unexpected output shape\n");
    goto done;
  }
  int64_t c_shape[2] = {out_info.shape[0], out_info.shape[1]};
  c = malloc(sizeof(float) * (size_t)(c_shape[0] * c_shape[1]));
  if (!c) goto done;
  DLTensor output = tensor(c, out_info.dtype, out_info.ndim, c_shape);

  /* Compile for these shapes (default options: the reference backend), then run. */
  if (!check(tc_compile(&kernel, program, "mm", inputs, 2, NULL), "tc_compile")) goto done;
  tc_program_destroy(program); /* the kernel keeps what it needs */
  program = NULL;
  if (!check(tc_run(kernel, inputs, 2, &output, 1), "tc_run")) goto done;

  /* Check against a plain C loop and print. */
  ok = 1;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
      float got = c[i * N + j];
      float diff = got > want ? got - want : want - got;
      if (diff > 1e-5f * (1.0f + (want < 0 ? -want : want))) {
        fprintf(stderr, "C(%d,%d) = %g, expected %g\n", i, j, (double)got, (double)want);
        ok = 0;
      }
      printf("%8.3f", (double)got);
    }
    printf("\n");
  }
  printf(ok ? "ok\n" : "MISMATCH\n");

done:
  free(c);
  tc_kernel_destroy(kernel);
  tc_program_destroy(program);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
