// jit.cpp — see jit.h.
#include "backends/cpu/jit.h"

#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <mutex>
#include <new>

#include <unistd.h>

#include "backends/cpu/lowering_passes.h"
#include "backends/kept_code.h"
#include "runtime/thread_pool.h"
#include "support/error.h"

namespace tc::backends::cpu {
namespace {

// What one call passes to the runtime hooks as Halide's user_context: where to report, how
// many threads to use. The hooks may run on several threads at once (inside parallel loops).
struct CallContext {
  CallOutcome* outcome = nullptr;
  std::mutex* mu = nullptr;
  int threads = 1;
};

void on_error(void* ctx, const char* message) {
  auto* c = static_cast<CallContext*>(ctx);
  try {
    std::lock_guard<std::mutex> lock(*c->mu);
    if (c->outcome->error.empty()) c->outcome->error = message;
  } catch (...) {  // no memory for the message: the status still says the call failed
  }
}

void on_print(void*, const char*) {}

// Halide asks for 32-byte alignment and may read a few bytes either side of a block:
// blocks are 64-byte aligned with 64 bytes of slack each side; the offset to the start of the
// underlying allocation sits just before the block.
constexpr size_t kAlign = 64;

void* on_malloc(void* ctx, size_t bytes) {
  void* raw = bytes <= SIZE_MAX - 3 * kAlign ? std::malloc(bytes + 3 * kAlign) : nullptr;
  if (raw == nullptr) {
    auto* c = static_cast<CallContext*>(ctx);
    std::lock_guard<std::mutex> lock(*c->mu);
    if (c->outcome->failed_allocation == 0) c->outcome->failed_allocation = bytes;
    return nullptr;
  }
  auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t block = (start + 2 * kAlign) & ~(kAlign - 1);
  reinterpret_cast<uintptr_t*>(block)[-1] = block - start;
  return reinterpret_cast<void*>(block);
}

void on_free(void*, void* block) {
  if (block == nullptr) return;
  auto b = reinterpret_cast<uintptr_t>(block);
  std::free(reinterpret_cast<void*>(b - reinterpret_cast<uintptr_t*>(b)[-1]));
}

int on_par_for(void* ctx, runtime::Task task, int min, int extent, uint8_t* closure) {
  auto* c = static_cast<CallContext*>(ctx);
  int status = runtime::parallel_for(c->threads, task, ctx, min, extent, closure);
  if (status == runtime::kThreadStartFailed) {
    try {
      std::lock_guard<std::mutex> lock(*c->mu);
      if (c->outcome->thread_failure.empty()) c->outcome->thread_failure = runtime::thread_start_failure();
    } catch (...) {
    }
  }
  return status;
}

// Halide reports compile-time problems through one process-wide reporter; the default writes
// to stderr. This one drops warnings and turns errors into exceptions (caught below).
class QuietReporter : public Halide::CompileTimeErrorReporter {
 public:
  void warning(const char*) override {}
  void error(const char* msg) override { throw Halide::CompileError(msg); }
};


// Compilations run in parallel without a lock of libtc's (an autotuner compiles candidates from
// several threads; measured: 8 kernels from 4 threads 1.8x faster than with a
// global mutex on 2 cores). Each compilation has its own Funcs, Params, Pipeline, and
// Module::compile_to_buffer its own LLVMContext and TargetMachine; what they share
// process-wide is synchronised inside Halide and LLVM: name counters and IR reference counts
// are atomics (Util.cpp:173, IntrusivePtr.h:20), LLVM's targets are initialised under
// call_once (CodeGen_LLVM.cpp:264), the associativity tables under their own lock
// (AssociativeOpsTable.cpp:372), and lazily built tables are function-local statics. Linking
// is ORC's, which is thread-safe; the runtime is built and linked once, under the lock below.
// Stress test: tests/abi/test_parallel_compile.c.

// Halide compiles on a stack it maps itself; when the process is out of address space that
// fails with an internal error rather than bad_alloc.
bool out_of_memory(const std::string& halide_message) {
  for (const char* sign : {"mprotect failed", "mmap failed", "bad_alloc", "out of memory", "Out of memory"})
    if (halide_message.find(sign) != std::string::npos) return true;
  return false;
}

}  // namespace

void quiet_halide_reporter() {
  static QuietReporter reporter;
  static std::once_flag once;
  std::call_once(once, [] { Halide::set_custom_compile_time_error_reporter(&reporter); });
}

std::string halide_detail(const std::string& what) {
  const char* debug = std::getenv("TC_DEBUG_HALIDE");
  return debug && *debug && std::strcmp(debug, "0") != 0 ? "; Halide: " + what : std::string();
}

// See jit.h. IEEE arithmetic (StrictFloat: NaN, infinities and
// signed zeros as the reference computes them, no contraction into FMA; Halide's default
// fast-math assumes there are no NaNs). Halide 14 takes a CPU with AVX512-BF16 for a Sapphire
// Rapids, whose LLVM CPU model includes AVX512-FP16; without that extension the code would
// contain instructions this CPU cannot execute (vmovw), so the feature is dropped then.
Halide::Target jit_target() {
  Halide::Target t = Halide::get_host_target().with_feature(Halide::Target::StrictFloat);
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  bool fp16 = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 23)) != 0;
  if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && !fp16)
    t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
  return t;
}

namespace {

// The target kernels and the runtime are compiled for: the user context (a CallContext) is
// the generated functions' first argument and reaches every runtime hook.
Halide::Target code_target(const Halide::Target& target) { return target.with_feature(Halide::Target::UserContext); }

struct Runtime {
  std::mutex mu;
  std::string object;  // empty until one is in place
};

Runtime& the_runtime() {
  static Runtime* r = new Runtime;  // never destroyed: kernels may run during static destruction
  return *r;
}

template <class Fn>
void set_hook(const char* setter, Fn hook) {
  reinterpret_cast<Fn (*)(Fn)>(runtime_symbol(setter))(hook);
}

// Links `object` as the runtime and routes its hooks here; the caller holds r.mu. The hooks
// are process-wide in the runtime: each call's CallContext arrives as their user_context.
void install_runtime(Runtime& r, std::string object) {
  // Halide initialises LLVM's targets under its own once-flag; the loader must not do it
  // concurrently with a Halide compilation on another thread.
  Halide::Internal::CodeGen_LLVM::initialize_llvm();
  link_runtime(object);
  set_hook("halide_set_error_handler", &on_error);
  set_hook("halide_set_custom_print", &on_print);
  set_hook("halide_set_custom_malloc", &on_malloc);
  set_hook("halide_set_custom_free", &on_free);
  set_hook("halide_set_custom_do_par_for", &on_par_for);
  r.object = std::move(object);
}

std::string bytes_of(const Halide::Buffer<uint8_t>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), static_cast<size_t>(b.number_of_elements()));
}

std::string build_runtime_object() {
  // An empty module for a target without NoRuntime is the runtime alone (what Halide's
  // compile_standalone_runtime writes to a file).
  return bytes_of(Halide::Module("tc_runtime", code_target(jit_target())).compile_to_buffer());
}

// Runtime objects kept for every process of this user (kept_code.h), keyed by what the object
// depends on: the target and Halide's version. A process that compiles for the cpu without a
// cache that holds one takes it from there instead of building it (0.8 s).
const KeptCode& kept_runtimes() {
  static const KeptCode kept("tc-cpu-runtime-kept-" + std::to_string(getuid()));
  return kept;
}

std::string runtime_key() { return "halide runtime object for " + target_key(); }

}  // namespace

std::string target_key() { return jit_target().to_string() + " halide " + TC_HALIDE_VERSION; }

std::string runtime_object() {
  Runtime& r = the_runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.object.empty()) {
    try {
      kept_runtimes().use_or_make(
          runtime_key(), [&](std::string kept) { install_runtime(r, std::move(kept)); },
          [&] {
            install_runtime(r, build_runtime_object());
            return r.object;
          });
    } catch (const std::bad_alloc&) {
      fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory building Halide's runtime");
    } catch (const Halide::Error& e) {
      fail(TC_ERROR_INTERNAL, "cpu backend: could not build Halide's runtime (a libtc bug)" + halide_detail(e.what()));
    }
  }
  return r.object;
}

bool has_runtime_object() {
  Runtime& r = the_runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  return !r.object.empty();
}

void use_runtime_object(const std::string& object) {
  Runtime& r = the_runtime();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.object.empty()) install_runtime(r, object);
}

namespace {

// The pipeline of `outputs` with libtc's lowering passes, and the target its code is made
// for (no runtime: one per process is linked separately): the same for the machine code and
// for the loop nest tc_kernel_code shows.
Halide::Pipeline tc_pipeline(const std::vector<Halide::Func>& outputs) {
  Halide::Pipeline pipeline(outputs);
  pipeline.add_custom_lowering_pass(new_argument_checks_pass());
  pipeline.add_custom_lowering_pass(new_vector_check_fast_path_pass());
  pipeline.add_custom_lowering_pass(new_constant_base_alignment_pass());
  pipeline.add_custom_lowering_pass(new_strided_loads_in_bounds_pass());
  pipeline.add_custom_lowering_pass(new_strict_calls_pass());
  return pipeline;
}

// NoBoundsQuery: libtc calls a kernel with every buffer's bounds and memory in place and never
// asks it for bounds, so the query's code (generated for every buffer argument) would only be
// compiled (6% of LLVM's time) and then skipped on every call.
Halide::Target object_target(const Halide::Target& target) {
  return code_target(target).with_feature(Halide::Target::NoRuntime).with_feature(Halide::Target::NoBoundsQuery);
}

}  // namespace

std::string lowered_loop_nest(const std::vector<Halide::Func>& outputs, const std::vector<Halide::Argument>& inputs,
                              const Halide::Target& target, const std::string& def_name) {
  // Halide prints the statement only into a file: a private temporary one, read and removed.
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/tc-loop-nest-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) fail(TC_ERROR_INTERNAL, "cpu backend: no temporary file for the loop nest of '" + def_name + "'");
  close(fd);
  std::string text;
  try {
    tc_pipeline(outputs).compile_to_lowered_stmt(path, inputs, Halide::Text, object_target(target));
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  } catch (const Halide::Error& e) {
    unlink(path.c_str());
    fail(TC_ERROR_INTERNAL, "cpu backend: could not lower '" + def_name + "' (a libtc bug)" + halide_detail(e.what()));
  }
  unlink(path.c_str());
  return text;
}

JitFunction::JitFunction(std::vector<Halide::Func> outputs, const std::vector<Halide::Argument>& inputs,
                         const Halide::Target& target, const std::string& def_name) {
  std::string name = "tc_" + def_name;  // TC identifiers are valid C identifiers
  runtime_object();  // in place before the first kernel links
  try {
    object_ = bytes_of(tc_pipeline(outputs).compile_to_module(inputs, name, object_target(target)).compile_to_buffer());
  } catch (const std::bad_alloc&) {
    fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory compiling '" + def_name + "'");
  } catch (const Halide::Error& e) {
    if (out_of_memory(e.what())) fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory compiling '" + def_name + "'");
    fail(TC_ERROR_INTERNAL, "cpu backend: could not compile '" + def_name +
                                "' (a libtc bug: please report it with the program; backend=reference runs it)" +
                                halide_detail(e.what()));
  }
  link(def_name);
}

JitFunction::JitFunction(std::string object, const std::string& def_name) : object_(std::move(object)) {
  if (!has_runtime_object()) runtime_object();
  link(def_name);
}

void JitFunction::link(const std::string& def_name) {
  entry_def_ = def_name;
  linked_ = link_object(object_, "tc_" + def_name + "_argv", "the code of '" + def_name + "'");
  entry_ = reinterpret_cast<int (*)(void**)>(linked_->entry());
}

CallOutcome JitFunction::call(const std::vector<halide_buffer_t*>& buffers, int threads) const {
  CallOutcome outcome;
  std::mutex mu;
  CallContext ctx;
  ctx.outcome = &outcome;
  ctx.mu = &mu;
  ctx.threads = threads;
  void* ctx_ptr = &ctx;
  std::vector<void*> args;
  args.reserve(buffers.size() + 1);
  args.push_back(&ctx_ptr);
  for (halide_buffer_t* b : buffers) args.push_back(b);
  outcome.status = entry_(args.data());
  return outcome;
}

}  // namespace tc::backends::cpu
