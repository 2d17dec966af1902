/* test_julia_layout.c — the C side of the Julia binding (bindings/julia/TensorComprehensions),
 * proven without Julia (not installable here). Each test makes exactly the libtc calls the
 * binding makes for one testset of its test/runtests.jl, with the same data, dtypes and
 * layouts: a Julia array is lent as data = pointer(a) (its first element), shape = size(a),
 * strides = strides(a) in elements, byte_offset 0 — column-major, so TC's A(i,j) is Julia's
 * A[i+1,j+1]; compile always creates an options object, sets the keyword options, compiles,
 * destroys it, then reads the kernel's outputs; run allocates zero-filled column-major
 * outputs of those sizes. Values are checked against loops over Julia's column-major layout.
 *
 * tune(prog, entry, inputs...; budget, progress, options...) creates an options object, sets the
 * keyword options in call order and then tune.budget, calls tc_tune with its @cfunction
 * callback (non-zero when the progress function returns true or throws) and a pointer to its
 * state as `user`, destroys the options, then builds the Kernel as compile does; cache_hit,
 * cache_tier, cache_export(file; cache_dir) and cache_import(file; cache_dir) are one call each;
 * cache_push and cache_pull(remote, remote_key; cache_dir) create an options object, set
 * cache.remote and cache.remote_key, call, and destroy it (the testset's redis-server is started
 * here as runtests.jl starts it: a free loopback port, a temporary directory). The
 * binding reads tc_tune_progress through a Julia struct whose C layout it states as constants;
 * test_julia_tune_progress_layout reads that struct and those constants from the Julia source
 * (TC_JULIA_SOURCE) and checks them against the C struct.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
  tc_tensor_info inferred[1] = {TC_STRUCT_INIT(tc_tensor_info)};
  assert_tc_ok(tc_infer_outputs(p, "mm", in, 2, inferred, &count));
  assert_int_equal(inferred[0].ndim, 2);
  assert_int_equal(inferred[0].shape[0], 3); /* (Float32, (3, 2)) */
  assert_int_equal(inferred[0].shape[1], 2);
  assert_int_equal(inferred[0].dtype.code, kDLFloat);

  tc_kernel *k = NULL; /* compile(prog, "mm", A, B; backend="reference") */
  const char *const options[] = {"backend", "reference", NULL};
  assert_tc_ok(julia_compile(&k, p, "mm", in, 2, options));
  tc_tensor_info out_info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
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
  tc_tensor_info info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
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
  tc_tensor_info info[4] = {TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info),
                            TC_STRUCT_INIT(tc_tensor_info)};
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
  tc_tensor_info info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
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
  tc_tensor_info info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
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
  tc_tensor_info info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
  julia_kernel_outputs(k, info, 1);
  tc_program_destroy(p); /* finalizer of the program */
  DLTensor out = make_tensor(C, dt_f32(), 2, c_size, c_strides);
  assert_tc_ok(tc_run(k, in, 2, &out, 1));
  for (int i = 0; i < 4; ++i) assert_true(C[i] == 3.0f);
  tc_kernel_destroy(k); /* finalizer of the kernel */
}

/* ---- the autotuner ---------------------------------------------------------------------- */

/* The Julia type each field of tc_tune_progress must have in the binding's TuneProgress. */
#define JULIA_TYPE(expr) \
  _Generic((expr), uint32_t: "UInt32", int32_t: "Int32", int64_t: "Int64", double: "Float64", default: "?")
#define PROGRESS_FIELD(name) \
  { #name, offsetof(tc_tune_progress, name), JULIA_TYPE(((tc_tune_progress *)0)->name) }

static const struct {
  const char *name;
  size_t offset;
  const char *julia_type;
} progress_fields[] = {
    PROGRESS_FIELD(size),       PROGRESS_FIELD(generation), PROGRESS_FIELD(generations), PROGRESS_FIELD(candidates_done),
    PROGRESS_FIELD(candidates_planned), PROGRESS_FIELD(best_ms), PROGRESS_FIELD(default_ms),
    PROGRESS_FIELD(elapsed_s), PROGRESS_FIELD(budget_s),
};
enum { NUM_PROGRESS_FIELDS = sizeof progress_fields / sizeof progress_fields[0] };

/* The rest of the first line of `text` that starts with `prefix` (after leading blanks), from
 * just after the prefix; NULL if no line does. */
static const char *line_after(const char *text, const char *prefix) {
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *p = line;
    while (*p == ' ') ++p;
    if (strncmp(p, prefix, strlen(prefix)) == 0) return p + strlen(prefix);
  }
  return NULL;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) print_error("cannot open %s\n", path);
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
  text[size] = '\0';
  fclose(f);
  return text;
}

/* The binding's `struct TuneProgress` (field names and types, in order) and its constants
 * TUNE_PROGRESS_SIZE and TUNE_PROGRESS_OFFSETS are tc_tune_progress's C layout. */
static void test_julia_tune_progress_layout(void **state) {
  (void)state;
  /* tc.h's layout on the 64-bit ABIs libtc builds for (x86-64, AArch64). */
  assert_int_equal(sizeof(tc_tune_progress), 64);
  const size_t c_offsets[NUM_PROGRESS_FIELDS] = {0, 4, 8, 16, 24, 32, 40, 48, 56};
  for (int i = 0; i < NUM_PROGRESS_FIELDS; ++i) assert_int_equal(progress_fields[i].offset, c_offsets[i]);

  char *jl = read_file(TC_JULIA_SOURCE);
  const char *body = line_after(jl, "struct TuneProgress");
  assert_non_null(body);
  for (int i = 0; i < NUM_PROGRESS_FIELDS; ++i) {
    body = strchr(body, '\n') + 1;
    while (*body == ' ') ++body;
    char name[64] = "", type[64] = "";
    assert_int_equal(sscanf(body, "%63[a-z_]::%63[A-Za-z0-9]", name, type), 2);
    if (strcmp(name, progress_fields[i].name) != 0 || strcmp(type, progress_fields[i].julia_type) != 0)
      print_error("Julia field %d is %s::%s, C has %s (%s)\n", i + 1, name, type, progress_fields[i].name,
                  progress_fields[i].julia_type);
    assert_string_equal(name, progress_fields[i].name);
    assert_string_equal(type, progress_fields[i].julia_type);
  }
  body = strchr(body, '\n') + 1;
  while (*body == ' ') ++body;
  assert_true(strncmp(body, "end", 3) == 0); /* no further fields */

  const char *size_text = line_after(jl, "const TUNE_PROGRESS_SIZE = ");
  assert_non_null(size_text);
  assert_int_equal(strtol(size_text, NULL, 10), sizeof(tc_tune_progress));
  const char *offsets_text = line_after(jl, "const TUNE_PROGRESS_OFFSETS = (");
  assert_non_null(offsets_text);
  for (int i = 0; i < NUM_PROGRESS_FIELDS; ++i) {
    char *end = NULL;
    long offset = strtol(offsets_text, &end, 10);
    assert_true(end != offsets_text);
    assert_int_equal(offset, progress_fields[i].offset);
    offsets_text = end;
    while (*offsets_text == ',' || *offsets_text == ' ') ++offsets_text;
  }
  assert_int_equal(*offsets_text, ')'); /* exactly one offset per field */
  free(jl);
}

/* tune_inputs(): 48×32 and 32×40 column-major Float32 matrices of small integers. */
enum { TM = 48, TK = 32, TN = 40 };
typedef struct {
  float A[TM * TK], B[TK * TN], want[TM * TN];
  int64_t a_size[2], a_strides[2], b_size[2], b_strides[2];
  DLTensor in[2];
  tc_program *prog;
  char dir[64]; /* mktempdir(): mode 0700 */
} tune_case;

static tune_case *tune_case_new(void) {
  tune_case *c = calloc(1, sizeof *c);
  assert_non_null(c);
  for (int i = 1; i <= TM; ++i)
    for (int j = 1; j <= TK; ++j) c->A[(i - 1) + TM * (j - 1)] = (float)((3 * i + 7 * j) % 9 - 4);
  for (int i = 1; i <= TK; ++i)
    for (int j = 1; j <= TN; ++j) c->B[(i - 1) + TK * (j - 1)] = (float)((5 * i + 2 * j) % 7 - 3);
  for (int i = 0; i < TM; ++i) /* A * B, column-major: exact (small integers) */
    for (int j = 0; j < TN; ++j) {
      float s = 0;
      for (int q = 0; q < TK; ++q) s += c->A[i + TM * q] * c->B[q + TK * j];
      c->want[i + TM * j] = s;
    }
  c->a_size[0] = TM, c->a_size[1] = TK, c->b_size[0] = TK, c->b_size[1] = TN;
  column_major_strides(2, c->a_size, c->a_strides);
  column_major_strides(2, c->b_size, c->b_strides);
  c->in[0] = make_tensor(c->A, dt_f32(), 2, c->a_size, c->a_strides);
  c->in[1] = make_tensor(c->B, dt_f32(), 2, c->b_size, c->b_strides);
  assert_tc_ok(tc_define(&c->prog, JULIA_MM));
  strcpy(c->dir, "/tmp/tc-julia-tune-XXXXXX");
  assert_non_null(mkdtemp(c->dir));
  return c;
}

static void tune_case_free(tune_case *c) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
  assert_int_equal(system(cmd), 0);
  tc_program_destroy(c->prog);
  free(c);
}

/* The progress function of a testset, as tune_callback sees it; tune's TuneState is `user`. */
typedef struct {
  int calls;
  tc_tune_progress seen[64];
  bool stop;  /* the function returns true (or throws): tune_callback returns 1 */
  bool quiet; /* progress=false: no callback (C_NULL), the state pointer still passed as user */
} progress_log;

static int julia_tune_callback(const tc_tune_progress *p, void *user) {
  progress_log *log = user;
  if (log->calls < 64) log->seen[log->calls] = *p; /* unsafe_load(progress) */
  log->calls++;
  return log->stop ? 1 : 0;
}

/* tune(prog, "mm", A, B; budget=30, progress=f, cache=cache, BAD_START...): the keyword
 * options in call order, then tune.budget. */
static int julia_tune(tc_kernel **k, tune_case *c, const char *cache, progress_log *log) {
  const char *const options[] = {"cache", cache, "cpu.vectorize", "1", "cpu.tile", "1x1", "cpu.unroll", "1",
                                 "threads", "1", "tune.population", "4", "tune.generations", "2",
                                 "tune.budget", "30", NULL};
  tc_options *opts = NULL;
  int rc = tc_options_create(&opts);
  if (rc != TC_OK) return rc;
  for (const char *const *kv = options; kv[0]; kv += 2)
    if ((rc = tc_options_set(opts, kv[0], kv[1])) != TC_OK) break;
  if (rc == TC_OK) rc = tc_tune(k, c->prog, "mm", c->in, 2, opts, log->quiet ? NULL : julia_tune_callback, log);
  tc_options_destroy(opts);
  return rc;
}

/* compile(prog, "mm", A, B; cache=cache) -> cache_hit(kernel), after checking run(k, A, B). */
static int julia_compile_hit(tune_case *c, const char *cache) {
  tc_kernel *k = NULL;
  const char *const options[] = {"cache", cache, NULL};
  assert_tc_ok(julia_compile(&k, c->prog, "mm", c->in, 2, options));
  tc_tensor_info info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
  assert_int_equal(julia_kernel_outputs(k, info, 1), 1);
  int hit = -1;
  assert_tc_ok(tc_kernel_cache_hit(k, &hit));
  tc_kernel_destroy(k);
  return hit;
}

/* run(k, A, B) == A * B */
static void assert_runs_mm(tune_case *c, const tc_kernel *k) {
  float C[TM * TN] = {0}; /* zeros(Float32, 48, 40) */
  int64_t c_size[2] = {TM, TN}, c_strides[2];
  column_major_strides(2, c_size, c_strides);
  DLTensor out = make_tensor(C, dt_f32(), 2, c_size, c_strides);
  assert_tc_ok(tc_run(k, c->in, 2, &out, 1));
  for (int i = 0; i < TM * TN; ++i) assert_true(C[i] == c->want[i]);
}

/* @testset "tune, then compile hits the cache" */
static void test_julia_tune(void **state) {
  (void)state;
  tune_case *c = tune_case_new();
  char cache[96];
  snprintf(cache, sizeof cache, "%s/cache", c->dir);
  progress_log log = {0};
  tc_kernel *k = NULL;
  assert_tc_ok(julia_tune(&k, c, cache, &log));
  tc_tensor_info info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
  assert_int_equal(julia_kernel_outputs(k, info, 1), 1); /* Kernel(out[], "mm") */
  assert_runs_mm(c, k);
  assert_true(log.calls >= 1 && log.calls <= 64);
  for (int i = 0; i < log.calls; ++i) {
    const tc_tune_progress *p = &log.seen[i];
    assert_int_equal(p->generations, 2);
    assert_true(p->generation >= 1 && p->generation <= p->generations);
    /* Once more at the end, the count unchanged, where the final comparison gives the result
       back to the start: its best is then the default's, which may be above the search's best. */
    int again = i > 0 && i + 1 == log.calls && p->candidates_done == log.seen[i - 1].candidates_done;
    if (again) assert_true(p->best_ms == p->default_ms);
    assert_int_equal(p->candidates_done, again ? i : i + 1);
    assert_true(p->candidates_done <= p->candidates_planned);
    assert_true(p->best_ms > 0 && p->best_ms <= p->default_ms);
    assert_true(p->budget_s == 30 && p->elapsed_s >= 0);
    if (i > 0 && !again) assert_true(p->best_ms <= log.seen[i - 1].best_ms);
  }
  assert_int_equal(julia_compile_hit(c, "off"), 0);
  assert_int_equal(julia_compile_hit(c, cache), 1);
  tc_kernel_destroy(k);
  tune_case_free(c);
}

/* @testset "tune: stopping, ..." (the calls that reach libtc) */
static void test_julia_tune_stops(void **state) {
  (void)state;
  tune_case *c = tune_case_new();
  progress_log log = {0};
  log.stop = true; /* progress=p -> (n[] += 1; true), or a function that throws */
  tc_kernel *k = NULL;
  assert_tc_ok(julia_tune(&k, c, c->dir, &log));
  assert_int_equal(log.calls, 1);
  assert_runs_mm(c, k); /* the starting point: returned (or destroyed when the function threw) */
  tc_kernel_destroy(k);
  assert_int_equal(julia_compile_hit(c, c->dir), 1); /* the starting point, measured and stored first */

  /* progress=false: a NULL callback; the state pointer as user, which libtc then never reads */
  progress_log quiet_log = {0};
  quiet_log.quiet = true;
  tc_kernel *quiet = NULL;
  assert_tc_ok(julia_tune(&quiet, c, "off", &quiet_log));
  assert_int_equal(quiet_log.calls, 0);
  assert_runs_mm(c, quiet);
  tc_kernel_destroy(quiet);

  /* Symbol("tune.population") => 0 fails at tc_options_set; an unknown entry at tc_tune */
  tc_options *opts = NULL;
  assert_tc_ok(tc_options_create(&opts));
  assert_fails_with(tc_options_set(opts, "tune.population", "0"), TC_ERROR_INVALID_ARGUMENT);
  assert_tc_ok(tc_options_set(opts, "cache", "off"));
  tc_kernel *none = NULL;
  assert_fails_with(tc_tune(&none, c->prog, "nope", c->in, 2, opts, NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
  assert_null(none);
  tc_options_destroy(opts);
  tune_case_free(c);
}

/* @testset "cache_export, then cache_import into an empty cache" */
static void test_julia_cache_export_import(void **state) {
  (void)state;
  tune_case *c = tune_case_new();
  char tuned[96], other[96], file[96], junk[96];
  snprintf(tuned, sizeof tuned, "%s/tuned", c->dir);
  snprintf(other, sizeof other, "%s/other", c->dir);
  snprintf(file, sizeof file, "%s/tuned.tccache", c->dir);
  snprintf(junk, sizeof junk, "%s/junk.tccache", c->dir);
  progress_log quiet_log = {0};
  quiet_log.quiet = true; /* progress=false */
  tc_kernel *k = NULL;
  assert_tc_ok(julia_tune(&k, c, tuned, &quiet_log));
  tc_tensor_info info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
  julia_kernel_outputs(k, info, 1);
  tc_kernel_destroy(k);
  assert_int_equal(julia_compile_hit(c, tuned), 1);
  assert_int_equal(julia_compile_hit(c, other), 0);
  assert_tc_ok(tc_cache_export(tuned, file)); /* cache_export(file; cache_dir=tuned) */
  struct stat st;
  assert_int_equal(stat(file, &st), 0);
  assert_tc_ok(tc_cache_import(other, file));
  assert_int_equal(julia_compile_hit(c, other), 1);

  FILE *f = fopen(junk, "w");
  assert_non_null(f);
  for (int i = 0; i < 10; ++i) fputs("this is not a libtc cache export\n", f);
  fclose(f);
  assert_fails_with(tc_cache_import(other, junk), TC_ERROR_CACHE);
  assert_non_null(strstr(tc_last_error_message(), "junk.tccache"));
  tune_case_free(c);
}

/* A loopback socket on a free port (listenany); *port set. */
static int loopback_socket(int *port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, (struct sockaddr *)&a, sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, (struct sockaddr *)&a, &len);
  *port = ntohs(a.sin_port);
  return s;
}

/* run(`redis-server --port $port ...`; wait=false), then wait until it accepts connections. */
static pid_t start_redis(const char *dir, int port) {
  char port_text[16], log[128];
  snprintf(port_text, sizeof port_text, "%d", port);
  snprintf(log, sizeof log, "%s/redis.log", dir);
  pid_t pid = fork();
  if (pid == 0) {
    execlp("redis-server", "redis-server", "--port", port_text, "--bind", "127.0.0.1", "--dir", dir, "--save", "",
           "--appendonly", "no", "--logfile", log, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 200; ++i) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    int ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    if (ok) return pid;
    struct timespec wait = {0, 25 * 1000 * 1000};
    nanosleep(&wait, NULL);
  }
  fail_msg("redis-server on port %d does not answer (tools/install-deps.sh installs it)", port);
  return pid;
}

/* cache_push / cache_pull(url, key; cache_dir=dir): the records the other side stored. */
static int julia_remote_transfer(int (*call)(const char *, const tc_options *, size_t *), const char *url,
                                 const char *key, const char *dir, size_t *stored) {
  tc_options *opts = NULL;
  int rc = tc_options_create(&opts);
  if (rc != TC_OK) return rc;
  if ((rc = tc_options_set(opts, "cache.remote", url)) == TC_OK && (rc = tc_options_set(opts, "cache.remote_key", key)) == TC_OK)
    rc = call(dir, opts, stored);
  tc_options_destroy(opts);
  return rc;
}

/* @testset "cache_push, cache_pull and cache_tier with a redis-server" */
static void test_julia_remote_cache(void **state) {
  (void)state;
  tune_case *c = tune_case_new();
  int port = 0;
  close(loopback_socket(&port));
  pid_t server = start_redis(c->dir, port);
  char url[64], key[96], tuned[96], other[96], pulled[96];
  snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
  snprintf(key, sizeof key, "%s/key", c->dir);
  snprintf(tuned, sizeof tuned, "%s/tuned", c->dir);
  snprintf(other, sizeof other, "%s/other", c->dir);
  snprintf(pulled, sizeof pulled, "%s/pulled", c->dir);
  FILE *f = fopen(key, "w");
  assert_non_null(f);
  fputs("a secret of at least sixteen bytes\n", f);
  fclose(f);
  assert_int_equal(chmod(key, 0600), 0);

  progress_log quiet_log = {0};
  quiet_log.quiet = true;
  tc_kernel *k = NULL;
  assert_tc_ok(julia_tune(&k, c, tuned, &quiet_log));
  tc_kernel_destroy(k);
  size_t stored = 0;
  assert_tc_ok(julia_remote_transfer(tc_cache_push, url, key, tuned, &stored));
  assert_int_equal(stored, 2); /* the kernel and the shared code */
  /* compile(prog, "mm", A, B; cache=other, remote...) */
  const char *const with_remote[] = {"cache", other, "cache.remote", url, "cache.remote_key", key,
                                     "cache.remote_timeout", "5000", NULL};
  assert_tc_ok(julia_compile(&k, c->prog, "mm", c->in, 2, with_remote));
  tc_tensor_info info[1] = {TC_STRUCT_INIT(tc_tensor_info)};
  julia_kernel_outputs(k, info, 1);
  int hit = -1;
  assert_tc_ok(tc_kernel_cache_hit(k, &hit));
  assert_int_equal(hit, TC_CACHE_HIT_REMOTE); /* cache_tier(k) == :remote */
  assert_runs_mm(c, k);
  tc_kernel_destroy(k);
  assert_int_equal(julia_compile_hit(c, other), TC_CACHE_HIT_LOCAL);
  assert_int_equal(julia_compile_hit(c, "off"), TC_CACHE_MISS);
  assert_tc_ok(julia_remote_transfer(tc_cache_pull, url, key, pulled, &stored));
  assert_int_equal(stored, 2);
  assert_int_equal(julia_compile_hit(c, pulled), TC_CACHE_HIT_LOCAL);
  assert_int_equal(chmod(key, 0644), 0);
  assert_fails_with(julia_remote_transfer(tc_cache_pull, url, key, pulled, &stored), TC_ERROR_CACHE);
  assert_non_null(strstr(tc_last_error_message(), "can be read or written by group or others"));

  kill(server, SIGKILL);
  waitpid(server, NULL, 0);
  tune_case_free(c);
}

/* @testset "an unsafe cache directory is the cache error" */
static void test_julia_unsafe_cache(void **state) {
  (void)state;
  tune_case *c = tune_case_new();
  assert_int_equal(chmod(c->dir, 0770), 0);
  progress_log log = {0};
  tc_kernel *k = NULL;
  assert_fails_with(julia_tune(&k, c, c->dir, &log), TC_ERROR_CACHE);
  assert_non_null(strstr(tc_last_error_message(), "writable by group or others"));
  assert_null(k);
  assert_int_equal(log.calls, 0); /* checked before any tuning */
  assert_int_equal(julia_compile_hit(c, c->dir), 0);
  tune_case_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_julia_matmul),
      cmocka_unit_test(test_julia_views),
      cmocka_unit_test(test_julia_scalar_and_several_outputs),
      cmocka_unit_test(test_julia_accumulate),
      cmocka_unit_test(test_julia_errors),
      cmocka_unit_test(test_julia_kernel_outlives_program),
      cmocka_unit_test(test_julia_tune_progress_layout),
      cmocka_unit_test(test_julia_tune),
      cmocka_unit_test(test_julia_tune_stops),
      cmocka_unit_test(test_julia_cache_export_import),
      cmocka_unit_test(test_julia_unsafe_cache),
      cmocka_unit_test(test_julia_remote_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
