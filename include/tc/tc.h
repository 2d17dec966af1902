/*
 * tc.h — the C API of libtc, a compiler for Tensor Comprehensions.
 *
 * A Tensor Comprehension (TC) is a tensor program in Einstein notation:
 *
 *     def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }
 *
 * The pipeline, one call per stage:
 *
 *     tc_define         parse, check, infer index ranges      -> tc_program
 *     tc_infer_outputs  output shapes for concrete inputs     -> tc_tensor_info[]
 *     tc_compile        specialise one def to input shapes    -> tc_kernel
 *     tc_run            validate tensors, execute the kernel
 *
 * Tensors are exchanged as DLPack DLTensors and are never copied or retained.
 *
 * Conventions (as in SQLite and LMDB):
 *   - Every function that can fail returns a status: TC_OK (0) or a negative TC_ERROR_*.
 *   - On failure, tc_last_error_message() returns a thread-local description of this thread's
 *     most recent failure, naming the place: "<name>:<line>:<col>: error: ..." followed by the
 *     source line and a caret for source errors; tensor, dimension, expected and got for shape
 *     errors. A successful call does not clear it.
 *   - Output pointers are written only on success (except *num_outputs, see tc_infer_outputs).
 *   - Every handle created by tc_X_create/tc_define/tc_compile/tc_tune/tc_cache_list is freed
 *     by its tc_X_destroy (tc_kernel_destroy, tc_cache_listing_destroy);
 *     destroying NULL is a no-op. Strings returned by the library are owned by the handle they
 *     came from and stay valid until that handle is destroyed; static strings live forever.
 *   - No C++ exception ever crosses this API.
 *   - Every struct the library fills (tc_tensor_info, tc_param_info, tc_tune_progress,
 *     tc_cache_entry, tc_cache_history_entry) starts with `uint32_t size`, so that later
 *     versions can add fields at the end. Before a call that fills one, set its size to
 *     sizeof(the struct) as your header declares it (TC_STRUCT_INIT does); the library writes
 *     the fields that fit in that many bytes and sets size to the bytes it wrote (a library
 *     older than your header writes fewer: read only the fields below the size it gives back).
 *     A size smaller than this version's struct is TC_ERROR_INVALID_ARGUMENT, naming the struct.
 *     The library sets the size of a tc_tune_progress it passes to a callback.
 *
 * Thread safety:
 *   - tc_program and tc_kernel are immutable once created: any number of threads may use the
 *     same program or kernel at once (tc_infer_outputs, tc_compile, tc_run, the query calls).
 *     tc_run keeps all its scratch state (temporaries) per call. A program with a
 *     rank-polymorphic def (`...`) builds that def's instance for a rank on first use and keeps
 *     it (under a lock inside the program): concurrent calls are still safe.
 *   - tc_cache_listing is immutable too; the tc_cache_* calls may run in any thread and
 *     process while others use the same cache (LMDB transactions) or the same remote tier
 *     (option cache.remote: each call uses a connection of its own from a per-process pool, and
 *     records are written with Redis transactions).
 *   - tc_options is mutable: do not call tc_options_set on an options object while another
 *     thread uses it. tc_compile only reads options, and the kernel keeps its own copy.
 *   - Destroying a handle while another thread uses it is undefined behaviour.
 *   - The last-error message is per thread.
 */
#ifndef TC_TC_H
#define TC_TC_H

#include <stddef.h>
#include <stdint.h>
#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TC_BUILDING_LIBRARY)
#  define TC_API __attribute__((visibility("default")))
#else
#  define TC_API
#endif

/* LIBTC_VERSION_MAJOR, _MINOR, _PATCH, _STRING, _NUMBER (generated from CMakeLists.txt). */
#include "tc/tc_version.h"

/* Highest rank of any tensor. */
#define TC_MAX_NDIM 16

/* DLPack's type code for bool (kDLBool since DLPack 0.8); bool tensors are {TC_DL_BOOL, 8, 1}. */
#define TC_DL_BOOL 6

/* Status codes. */
enum {
  TC_OK = 0,
  TC_ERROR_INVALID_ARGUMENT = -1, /* NULL where a value is needed, bad count, unknown option/entry */
  TC_ERROR_SYNTAX = -2,           /* the source does not parse */
  TC_ERROR_SEMANTIC = -3,         /* parses, but is not a valid TC (types, names, inference) */
  TC_ERROR_SHAPE = -4,            /* tensors do not match the def (rank, dtype, sizes, strides) */
  TC_ERROR_UNSUPPORTED = -5,      /* valid, but this backend/build cannot do it */
  TC_ERROR_COMPILE = -6,          /* the backend failed to compile the kernel */
  TC_ERROR_RUNTIME = -7,          /* execution failed (e.g. a gather index out of range) */
  TC_ERROR_CACHE = -8,            /* the kernel cache failed */
  TC_ERROR_NO_MEMORY = -9,        /* an allocation failed */
  TC_ERROR_INTERNAL = -10         /* a bug in libtc: please report it with the message */
};

typedef struct tc_program tc_program; /* parsed and checked source: one or more defs; immutable */
typedef struct tc_kernel tc_kernel;   /* one def compiled for one input signature; immutable */
typedef struct tc_options tc_options; /* string key/value options */

/* A struct the library fills, with its size set and every other field zero, in C and C++:
 * `tc_tensor_info info = TC_STRUCT_INIT(tc_tensor_info);`. */
#ifdef __cplusplus
#define TC_STRUCT_INIT(type) ([] { type value_{}; value_.size = sizeof(type); return value_; }())
#else
#define TC_STRUCT_INIT(type) {.size = (uint32_t)sizeof(type)}
#endif

/* Type and shape of one tensor. */
typedef struct tc_tensor_info {
  uint32_t size; /* sizeof(tc_tensor_info): set by the caller (see the conventions above) */
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[TC_MAX_NDIM];
} tc_tensor_info;

/* A parameter of a def, as written in its signature: dims are size names ("M"), integer
 * literals ("3") or, for outputs and temporaries, the inferred extent expression in terms of
 * size names ("M", "(I + 1)/2"). Strings are owned by the program.
 * Rank-polymorphic defs: a parameter whose rank depends on `...` ("float(N, ...) X", or an
 * output written as "O(n, ...)") has ndim -1, and dims lists its dimensions as written with
 * "..." at the place of the ellipsis ("N", "..."), followed by NULL. A call binds `...` to
 * the inputs' extra dimensions (docs/guide/language.md). */
typedef struct tc_param_info {
  uint32_t size; /* sizeof(tc_param_info): set by the caller */
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  const char *dims[TC_MAX_NDIM];
} tc_param_info;

/* ---- version and errors ---------------------------------------------------------------- */

TC_API int tc_version_number(void);          /* MAJOR*10000 + MINOR*100 + PATCH */
TC_API const char *tc_version_string(void);  /* "MAJOR.MINOR.PATCH", static */
TC_API const char *tc_strerror(int status);  /* static, never NULL ("unknown status" if unknown) */
TC_API const char *tc_last_error_message(void); /* thread-local; "" if this thread had none */

/* ---- programs ---------------------------------------------------------------------------- */

/* Parses and checks `source` (one or more defs) and infers every index range symbolically.
 * Errors are reported as "<def>:<line>:<col>: error: ..." where <def> is the def the error is
 * in (or "<source>" outside any def) and line/col count from the start of `source`. */
TC_API int tc_define(tc_program **out, const char *source);

/* As tc_define, but diagnostics start with `source_name` (e.g. a file name "mm.tc") instead of
 * the def name. source_name NULL behaves as tc_define. */
TC_API int tc_define_named(tc_program **out, const char *source, const char *source_name);

TC_API void tc_program_destroy(tc_program *program); /* NULL is a no-op */

/* Number of defs and their names, in source order. */
TC_API int tc_program_num_defs(const tc_program *program, size_t *count);
TC_API int tc_program_def_name(const tc_program *program, size_t index, const char **name);

/* Number of inputs and outputs of a def (entry NULL: the only def). */
TC_API int tc_program_num_params(const tc_program *program, const char *entry, size_t *num_inputs,
                                 size_t *num_outputs);
/* The index-th input or output of a def as written (outputs: dtype and extents inferred). */
TC_API int tc_program_input_info(const tc_program *program, const char *entry, size_t index,
                                 tc_param_info *info);
TC_API int tc_program_output_info(const tc_program *program, const char *entry, size_t index,
                                  tc_param_info *info);

/* A human-readable description of a def's inference results: every tensor's extents and every
 * statement's index ranges in terms of the size names. Owned by the program. */
TC_API int tc_program_describe(const tc_program *program, const char *entry, const char **text);

/* The TC source of a program: the text given to tc_define, byte for byte (a program libtc
 * generates, such as a gradient, will give its generated, readable source here). Owned by
 * the program, valid until tc_program_destroy. */
TC_API int tc_program_source(const tc_program *program, const char **text);

/* Reverse-mode differentiation, TC -> TC (docs/guide/language.md "Gradients"). *out becomes a new
 * program holding one def, "<entry>_grad": its inputs are entry's inputs followed by one
 * gradient per floating-point output ("d_<output>", the output's dtype and shape); its
 * outputs are the gradients of entry's floating-point inputs ("d_<input>", the input's dtype
 * and shape), in the order of those inputs. Integer inputs and outputs carry no gradient.
 * tc_program_source(*out) gives the generated source. entry NULL: the only def.
 * TC_ERROR_UNSUPPORTED, naming the statement and the reason, where a gradient cannot be
 * expressed (a '*=' reduction, a value that depends on an output's initial content, a
 * rank-polymorphic def, no floating-point input or output); never a wrong gradient.
 * The new program is independent of `program` (either may be destroyed first) and is freed
 * with tc_program_destroy. Thread-safe on a shared program. */
TC_API int tc_gradient(tc_program **out, const tc_program *program, const char *entry);

/* Output dtypes and shapes of `entry` for the given inputs (only their dtype, ndim and shape
 * are read; data may be NULL). outputs[0].size is the size of each element of the array (set
 * it to sizeof(tc_tensor_info)); every element written gets its size set. Capacity rules:
 * *num_outputs is the capacity of `outputs` on entry and the number of outputs on return. outputs == NULL with *num_outputs == 0 queries
 * the count and returns TC_OK. A capacity smaller than the count sets *num_outputs to the
 * count and returns TC_ERROR_INVALID_ARGUMENT, writing nothing else. */
TC_API int tc_infer_outputs(const tc_program *program, const char *entry, const DLTensor *inputs,
                            size_t num_inputs, tc_tensor_info *outputs, size_t *num_outputs);

/* ---- options ----------------------------------------------------------------------------- */

/* Options are string key/value pairs. The keys this build knows, their allowed values, defaults
 * and help are listed by tc_option_info (and by `tc options`): the general keys (backend,
 * checked, threads) first, then each backend's knobs ("cpu.tile", ...). An unknown key or a
 * value the key does not allow is TC_ERROR_INVALID_ARGUMENT at tc_options_set, naming the key
 * and the allowed values. tc_kernel_describe shows what "auto" chose for a compiled kernel. */

/* The index-th option key known to this build (general keys first, then each backend's
 * knobs): its key, its allowed values as text ("cpu|reference", "auto|1..64",
 * "auto|1..4096x1..4096"), its default, and one line of help. Strings are static. Any output
 * pointer may be NULL. Past the end: TC_ERROR_INVALID_ARGUMENT, so a loop from 0 until it
 * fails lists every option. Thread-safe. */
TC_API int tc_option_info(size_t index, const char **key, const char **values,
                          const char **default_value, const char **help);

TC_API int tc_options_create(tc_options **out);
TC_API int tc_options_set(tc_options *options, const char *key, const char *value);
/* *value is owned by options and valid until the key is set again or options is destroyed;
 * an unset key yields its default. */
TC_API int tc_options_get(const tc_options *options, const char *key, const char **value);
TC_API void tc_options_destroy(tc_options *options); /* NULL is a no-op */

/* ---- kernels ----------------------------------------------------------------------------- */

/* Specialises `entry` to the inputs' dtypes and shapes (data may be NULL) with `options`
 * (NULL: defaults). The kernel keeps what it needs: program and options may be destroyed.
 * Unless option cache=off, or the caller set one of the backend's knobs, tc_compile first looks
 * the def, shapes, backend, target and `checked` up in the compilation cache, then (option
 * cache.remote) in the remote tier shared by many machines, whose records must carry a valid
 * signature; on a hit it links
 * the tuned kernel's stored machine code into the process (about a millisecond; a cache is
 * therefore code that this process runs: see the safety rules in docs/guide/tuning-and-cache.md), or
 * compiles with the tuned knob values when that code cannot be used here. A cache that cannot
 * be used (missing, damaged, unsafe permissions, another libtc; a remote that is down, slow,
 * full or answering garbage, or a record whose signature does not verify) never makes tc_compile
 * fail: it compiles the default, and tc_kernel_describe says why. Each remote call waits at
 * most cache.remote_timeout ms, and after a failure to reach the server lookups skip it for
 * 30 s. tc_compile writes the local cache only to keep a record the remote tier served (and the
 * backend's shared code, for the next process's warm start). */
TC_API int tc_compile(tc_kernel **out, const tc_program *program, const char *entry,
                      const DLTensor *inputs, size_t num_inputs, const tc_options *options);

/* ---- tuning ------------------------------------------------------------------------------ */

typedef struct tc_tune_progress {
  uint32_t size;                         /* set by the library: read only fields below it */
  int32_t generation, generations;       /* 1-based current generation, planned total */
  int64_t candidates_done, candidates_planned;
  double best_ms, default_ms;            /* median time of the best so far, of the default */
  double elapsed_s, budget_s;
} tc_tune_progress;
/* Called after every measured candidate; return non-zero to stop (the best so far is kept). Called
 * once more after the search when the final comparison gives the result back to the starting
 * point (best_ms then is the start's time; a non-zero return changes nothing). */
typedef int (*tc_tune_callback)(const tc_tune_progress *progress, void *user);
/* Tunes `entry` for these inputs (their data is used to measure and check candidates), stores
 * the best in the cache named by the options, and returns it as a compiled kernel. The search
 * covers the knobs the backend declares (tc_option_info), starting from the values `options`
 * sets (the "default"), with options tune.strategy, tune.population, tune.generations (a cap),
 * tune.budget (seconds), tune.patience (generations in a row without a kernel 2% faster that end
 * the search; the progress's `generations` then drops to the generation it ended in),
 * tune.threads (threads compiling candidates), tune.isolation and tune.timeout. The kernel's
 * description says why the search ended. Each candidate's outputs are compared with the default's; one that differs,
 * fails to compile or fails to run is skipped, never stored. Outputs are allocated by libtc on
 * the inputs' device; inputs are only read. Candidates are measured one at a time: run nothing
 * else on the machine meanwhile. tune.isolation=process measures them in a child process (the
 * candidate runner, tc/candidate-runner beside libtc, or $TC_CANDIDATE_RUNNER), where one that
 * crashes or runs past tune.timeout seconds fails alone, and one that has had what a candidate
 * 5 times slower than the best so far needs is killed and counted cut off; auto (the default)
 * does so for GPU tensors, and for host tensors where the default's call takes a second or
 * more (so that a slow candidate cannot outlast tune.budget many times over); process without
 * a runner is TC_ERROR_UNSUPPORTED. A cache that cannot
 * be written (unsafe or unwritable directory, damaged database) is TC_ERROR_CACHE before any
 * tuning; cache=off tunes without storing. Not cancellable except through the callback. */
TC_API int tc_tune(tc_kernel **out, const tc_program *program, const char *entry,
                   const DLTensor *inputs, size_t num_inputs, const tc_options *options,
                   tc_tune_callback callback, void *user);

/* Copies every record of a cache (cache_dir NULL: the default of option cache=auto) into one
 * portable file, written whole or not at all; import merges such a file into a cache (created
 * 0700 if missing), keeping the faster entry per key. Records tuned for another target are kept
 * and never used on this one. TC_ERROR_CACHE names the path and the problem. */
TC_API int tc_cache_export(const char *cache_dir, const char *file);
TC_API int tc_cache_import(const char *cache_dir, const char *file);

/* ---- the remote tier ------------------------------------------------------------------- */

/* Copies every sound record and tuning history entry of a local cache (cache_dir NULL: the
 * default of option cache=auto) to the remote tier that `options` name (cache.remote,
 * cache.remote_key, cache.remote_timeout), which keeps the faster record per key (a
 * compare-and-set: no lost update when machines write at once) and replaces history entries of
 * the same key and knobs. *records (may be NULL) is set to the number of records the remote
 * stored. tc_cache_pull is the other way: the remote's records whose signature verifies into the
 * local cache (created 0700 if missing), keeping the faster per key. cache.remote=off is
 * TC_ERROR_INVALID_ARGUMENT; a refused key file, a server that cannot be reached or used, or a
 * local cache that cannot be is TC_ERROR_CACHE naming it. Any thread, any process. */
TC_API int tc_cache_push(const char *cache_dir, const tc_options *options, size_t *records);
TC_API int tc_cache_pull(const char *cache_dir, const tc_options *options, size_t *records);

/* ---- the cache's contents ---------------------------------------------------------------- */

/* A snapshot of a cache: its records, each with its tuning history, and every damaged entry.
 * Immutable: any number of threads may read one listing at once. */
typedef struct tc_cache_listing tc_cache_listing;

/* One record: the tuned knob values (and compiled code) of one def at one input signature for
 * one backend, target and `checked`; or, with def "(shared code)" and candidates 0, the code
 * every kernel of a backend and target links against (cpu: Halide's runtime object), which
 * the tuner stores so that later processes need not build it. Strings are owned by the listing
 * and valid until it is destroyed. */
typedef struct tc_cache_entry {
  uint32_t size;           /* sizeof(tc_cache_entry): set by the caller */
  const char *key_hash;    /* the record's database key: the SHA-256 of `key`, hex */
  const char *key;         /* the full key text (schema, libtc, backend, target, checked, IR) */
  const char *def;         /* the def's name when it was tuned ("mm") */
  const char *sizes;       /* its sizes ("M=64 K=32 N=48") */
  const char *backend;     /* "cpu" */
  const char *target;      /* the backend's target key (cpu: Halide's target and version) */
  const char *knobs;       /* the tuned knob values, as tc_options_set takes them */
  double best_ms;          /* median time with `knobs` */
  double default_ms;       /* median time of the starting point, measured alongside */
  int64_t candidates;      /* candidates measured to find it */
  const char *date;        /* when it was stored, UTC, ISO 8601 */
  const char *libtc;       /* the libtc version that stored it */
  const char *family;      /* shared by the records of the same def at other sizes (hex) */
  int64_t artefact_bytes;  /* size of the stored compiled code; 0: compiled from the knobs */
  int64_t history_count;   /* entries of the tuning history for this key */
} tc_cache_entry;

/* One candidate of a key's tuning history. Strings are owned by the listing. */
typedef struct tc_cache_history_entry {
  uint32_t size;        /* sizeof(tc_cache_history_entry): set by the caller */
  const char *knobs;    /* every tuned knob's value */
  const char *outcome;  /* "measured", "cut-off" (its first run was over 5x the best then, and
                           it was not run again), "compile-failed", "run-failed", "wrong-result"
                           (its outputs differed from the starting point's) */
  double ms;            /* measured: the median; cut-off: its one run; failures: 0 */
  const char *why;      /* a cut-off's or failure's message; "" when measured */
  const char *date;     /* UTC, ISO 8601 */
} tc_cache_history_entry;

/* Reads every record and history entry of a cache (cache_dir NULL: the default of option
 * cache=auto) and checks each as tc_compile does: its checksum, its encoding, its schema, and
 * that it is stored under its own key's hash. Sound records are the entries (in key-hash
 * order); the others are the damage, which `tc cache verify` reports. A directory without a
 * cache is TC_ERROR_CACHE ("no cache at '<dir>'"), and nothing is created; so is an unsafe
 * directory. Writers (other threads, other processes) may run meanwhile: the listing shows the
 * cache as it was at some moment of the call, per table. Free it with tc_cache_listing_destroy. */
TC_API int tc_cache_list(tc_cache_listing **out, const char *cache_dir);
/* The same snapshot of the remote tier that `options` name: its records whose signature
 * verifies, with their history; every other entry is damage ("signature does not verify (signed
 * with another key, or changed since it was signed)", "not a signed libtc record ..."), which
 * `tc cache verify --remote` reports. Errors as tc_cache_push. */
TC_API int tc_cache_list_remote(tc_cache_listing **out, const tc_options *options);
TC_API void tc_cache_listing_destroy(tc_cache_listing *listing); /* NULL is a no-op */
TC_API int tc_cache_listing_count(const tc_cache_listing *listing, size_t *count);
/* The index-th record. Past the end: TC_ERROR_INVALID_ARGUMENT. */
TC_API int tc_cache_listing_entry(const tc_cache_listing *listing, size_t index, tc_cache_entry *entry);
/* The index-th history entry of the entry-th record (index < its history_count): measured and
 * cut-off entries fastest first, then the failures. */
TC_API int tc_cache_listing_history(const tc_cache_listing *listing, size_t entry, size_t index,
                                    tc_cache_history_entry *history);
/* Every sound history entry of the cache, those of keys without a record included. */
TC_API int tc_cache_listing_history_total(const tc_cache_listing *listing, size_t *count);
/* Damaged entries: *id is "record <16 hex digits of its database key>" or "history <16 hex>:<16
 * hex>", *why what is wrong ("record checksum mismatch (the record is damaged)", "record of cache
 * schema 2 (this libtc reads schema 3)", ...). Strings are owned by the listing. */
TC_API int tc_cache_listing_damage_count(const tc_cache_listing *listing, size_t *count);
TC_API int tc_cache_listing_damage(const tc_cache_listing *listing, size_t index, const char **id,
                                   const char **why);

/* Removes every record and history entry of a cache (cache_dir NULL: the default) in one write
 * transaction; the database files stay (mode 0600). Safe while other threads and processes use
 * the cache: they see it whole before, or empty after. A directory without a cache is
 * TC_ERROR_CACHE ("no cache at '<dir>'"). */
TC_API int tc_cache_clear(const char *cache_dir);

/* Outputs of a compiled kernel: count, and dtype/shape of each (what tc_run expects). */
TC_API int tc_kernel_num_outputs(const tc_kernel *kernel, size_t *count);
TC_API int tc_kernel_output_info(const tc_kernel *kernel, size_t index, tc_tensor_info *info);
/* Whether tc_run sets every element of output `index` without reading what it held (1): the
 * caller may pass uninitialised memory (torch.empty rather than torch.zeros). 0: some element's
 * result may depend on its prior contents (a reduction without '!' adds to them, or the output's
 * first writer covers only part of it); pass the memory initialised as the def expects. */
TC_API int tc_kernel_output_overwritten(const tc_kernel *kernel, size_t index, int *overwritten);
/* A description of the compiled kernel: all options with their values, where its knob values
 * came from (a cache hit with its path, tuning date and speed-up over the default; a miss; or
 * why the cache was not used), the backend, and for cpu the target, thread count and the
 * schedule chosen for each stage; for cuda each launch's grid and block and, for a cubin (no GPU
 * needed with cuda.arch=sm_NN), the resources ptxas reports for its kernel and the theoretical
 * occupancy at its block, one line each: "    135 registers, 0 bytes spilled, 0 bytes stack,
 * 16768 bytes shared, occupancy 22% (14 of 64 warps a SM, 7 blocks; limit: registers)" (`tc run
 * --explain` prints it). *text is owned by the kernel and valid until it is destroyed. */
TC_API int tc_kernel_describe(const tc_kernel *kernel, const char **text);
/* The code the kernel runs, as text: for backend=cpu the Halide loop nest after lowering (the
 * statement Halide compiles to machine code: loops, vectorisation, parallel loops, buffers);
 * for backend=cuda the CUDA C text it compiled (NVRTC) or runs emulated (cuda.emulate=1), the
 * same text either way. TC_ERROR_UNSUPPORTED for
 * backend=reference, an interpreter that generates no code. Made on the first call (cpu:
 * about as long as lowering the pipeline again, no machine code is generated), kept: *text is
 * owned by the kernel and valid until it is destroyed. Thread-safe. */
TC_API int tc_kernel_code(const tc_kernel *kernel, const char **text);
/* Where the kernel's knob values came from: *hit = TC_CACHE_MISS (0: not from the cache),
 * TC_CACHE_HIT_LOCAL (1: the local cache) or TC_CACHE_HIT_REMOTE (2: the remote tier, option
 * cache.remote; the record is now in the local cache too). Non-zero means a hit. */
#define TC_CACHE_MISS 0
#define TC_CACHE_HIT_LOCAL 1
#define TC_CACHE_HIT_REMOTE 2
TC_API int tc_kernel_cache_hit(const tc_kernel *kernel, int *hit);

/* Runs the kernel. Inputs must have the dtypes and shapes the kernel was compiled for; outputs
 * are caller-allocated with the shapes tc_infer_outputs reports. Any non-negative strides
 * (NULL: row-major) and byte_offset are honoured; every tensor must be in memory of a device
 * type the kernel's backend accepts (cpu and reference: kDLCPU; cuda: kDLCUDA, all on one
 * device, dense row-major — kDLCPU, any strides, for kernels compiled with cuda.emulate=1;
 * a tensor in other memory is TC_ERROR_SHAPE naming it). Output elements that
 * no statement writes are set to 0; reductions without '!' accumulate into the outputs'
 * existing contents. Outputs must not share memory, which libtc checks conservatively
 * (TC_ERROR_SHAPE): an output's dimensions sorted by stride must each have a stride at least
 * the span of the faster ones, and an output's byte span [first element, last element] must
 * not intersect another output's or an input's span (so interleaved outputs are rejected).
 * A device type the backend does not accept is TC_ERROR_SHAPE. Equivalent to tc_run_async with
 * a NULL stream. The cpu backend runs parallel loops on the calling thread and on worker
 * threads of one process-wide pool (at most the kernel's `threads` in all); the workers are
 * started on first use, live until the process exits, and after each loop spin for up to
 * 200 microseconds before sleeping, so that the next loop finds them running. A cpu kernel on
 * the cpu.blas route (a plain matrix product given to the system's CBLAS) runs on that library's
 * threads instead; with OpenBLAS it sets OpenBLAS's process-wide thread count to the kernel's
 * `threads` before each call. */
TC_API int tc_run(const tc_kernel *kernel, const DLTensor *inputs, size_t num_inputs,
                  DLTensor *outputs, size_t num_outputs);

/* As tc_run, on an execution stream of the kernel's device (a CUstream for backend=cuda);
 * NULL is the device's default stream. Returns once the work is queued; for backends that run
 * on the host (cpu, reference, and cuda kernels compiled with cuda.emulate=1) it returns when
 * the work is done, and stream must be NULL (anything else is TC_ERROR_INVALID_ARGUMENT).
 * Tensors are validated before anything is queued; the same thread-safety rules as tc_run
 * apply. backend=cuda with checked=1 and reads not proven in bounds (gathers) waits for the
 * stream before it returns, to report a bad index (TC_ERROR_RUNTIME, as tc_run). */
TC_API int tc_run_async(const tc_kernel *kernel, const DLTensor *inputs, size_t num_inputs,
                        DLTensor *outputs, size_t num_outputs, void *stream);

/* A GPU profile made without a GPU, for a backend=cuda kernel compiled with cuda.emulate=1:
 * runs its launches on the host on these tensors (validated as tc_run does), each for a sample
 * of its blocks (all of them up to 8; beyond, 8 spread evenly from the first to the last, the
 * counts scaled to the grid), recording each thread's memory accesses and statement instances,
 * and reports per launch, one figure a line ("  key value ..."): blocks_profiled,
 * statement_instances, work_balance (the busiest thread's statement instances / the mean), fma,
 * global_requests (warp-wide accesses of tensors), sectors_per_request (32-byte sectors each
 * touches; 4 is ideal for float32), shared_requests, bank_conflict_ways (1 = no conflicts),
 * dram_bytes and min_dram_bytes (each tensor once), occupancy (from NVRTC's register count
 * where NVRTC loads) and estimated_us, a roofline estimate for the GPU named `gpu` ("h100",
 * "h200", "a100"; NULL: "h100"), then the launches' total; docs/design/cuda-backend.md says how the estimate
 * is made and how far it was from measured times. Not a measurement. Outputs are left as the
 * profiled blocks wrote them. The first call builds the instrumented code (a host compile,
 * kept like the emulation's). TC_ERROR_UNSUPPORTED for any other kernel,
 * TC_ERROR_INVALID_ARGUMENT for an unknown GPU. *text is owned by the kernel and valid until it
 * is destroyed (each call's text is kept). Thread-safe. */
TC_API int tc_kernel_profile(const tc_kernel *kernel, const DLTensor *inputs, size_t num_inputs,
                             DLTensor *outputs, size_t num_outputs, const char *gpu,
                             const char **text);

TC_API void tc_kernel_destroy(tc_kernel *kernel); /* NULL is a no-op */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TC_TC_H */
