// jit.cpp — see jit.h.
#include "backends/cpu/jit.h"

#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "runtime/thread_pool.h"
#include "support/error.h"

namespace tc::backends::cpu {
namespace {

// What one call passes to the runtime hooks: where to report, how many threads to use. The
// hooks may run on several threads at once (inside parallel loops).
struct CallContext : Halide::JITUserContext {
  CallOutcome* outcome = nullptr;
  std::mutex* mu = nullptr;
  int threads = 1;
};

void on_error(Halide::JITUserContext* ctx, const char* message) {
  auto* c = static_cast<CallContext*>(ctx);
  try {
    std::lock_guard<std::mutex> lock(*c->mu);
    if (c->outcome->error.empty()) c->outcome->error = message;
  } catch (...) {  // no memory for the message: the status still says the call failed
  }
}

void on_print(Halide::JITUserContext*, const char*) {}

// Halide asks for 32-byte alignment and may read a few bytes either side of a block:
// blocks are 64-byte aligned with 64 bytes of slack each side; the offset to the start of the
// underlying allocation sits just before the block.
constexpr size_t kAlign = 64;

void* on_malloc(Halide::JITUserContext* ctx, size_t bytes) {
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

void on_free(Halide::JITUserContext*, void* block) {
  if (block == nullptr) return;
  auto b = reinterpret_cast<uintptr_t>(block);
  std::free(reinterpret_cast<void*>(b - reinterpret_cast<uintptr_t*>(b)[-1]));
}

int on_par_for(Halide::JITUserContext* ctx, int (*task)(Halide::JITUserContext*, int, uint8_t*), int min, int extent,
               uint8_t* closure) {
  auto* c = static_cast<CallContext*>(ctx);
  int status = runtime::parallel_for(c->threads, reinterpret_cast<runtime::Task>(task), ctx, min, extent, closure);
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
// several threads; measured: 8 kernels from 4 threads 1.8x faster than with the former global
// mutex on 2 cores). Each compilation has its own Funcs, Params, Pipeline and LLVMContext
// (JITModule.cpp:136 in Halide 14.0.0); what they share process-wide is synchronised inside
// Halide and LLVM: name counters and IR reference counts are atomics (Util.cpp:173,
// IntrusivePtr.h:20), LLVM's targets are initialised under call_once (CodeGen_LLVM.cpp:264),
// the shared JIT runtime is built and its hooks installed under shared_runtimes_mutex
// (JITModule.cpp:891), the associativity tables under their own lock (AssociativeOpsTable.cpp:
// 372), and lazily built tables are function-local statics. populate_jit_handlers below reads
// Halide's global handler table unlocked (JITModule.cpp:950); that table is written only while
// the shared runtime is built, under that mutex, which the JITModule constructor has taken
// before (JITModule.cpp:237). So libtc must never call JITSharedRuntime::set_default_handlers
// or release_all, which rewrite it unlocked. Stress test: tests/abi/test_parallel_compile.c
// (issue 10: 30,240 compilations of 10 kernels from 4, 8 and 16 threads, all results correct).

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

JitFunction::JitFunction(std::vector<Halide::Func> outputs, const std::vector<Halide::Argument>& inputs,
                         const Halide::Target& target, const std::string& def_name) {
  std::string name = "tc_" + def_name;  // TC identifiers are valid C identifiers
  try {
    Halide::Pipeline pipeline(outputs);
    Halide::Target t = target.with_feature(Halide::Target::JIT).with_feature(Halide::Target::UserContext);
    Halide::Module m = pipeline.compile_to_module(inputs, name, t).resolve_submodules();
    module_ = Halide::Internal::JITModule(m, m.get_function_by_name(name), {});
    entry_ = module_.argv_function();
    // The runtime hooks every call uses, resolved once here rather than in each tc_run.
    Halide::JITUserContext ctx;
    ctx.handlers.custom_error = on_error;
    ctx.handlers.custom_print = on_print;
    ctx.handlers.custom_malloc = on_malloc;
    ctx.handlers.custom_free = on_free;
    ctx.handlers.custom_do_par_for = on_par_for;
    Halide::Internal::JITSharedRuntime::populate_jit_handlers(&ctx, Halide::JITHandlers{});
    handlers_ = ctx.handlers;
  } catch (const std::bad_alloc&) {
    fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory compiling '" + def_name + "'");
  } catch (const Halide::Error& e) {
    if (out_of_memory(e.what())) fail(TC_ERROR_NO_MEMORY, "cpu backend: out of memory compiling '" + def_name + "'");
    fail(TC_ERROR_INTERNAL, "cpu backend: could not compile '" + def_name +
                                "' (a libtc bug: please report it with the program; backend=reference runs it)" +
                                halide_detail(e.what()));
  }
  if (entry_ == nullptr) fail(TC_ERROR_INTERNAL, "cpu backend: the JIT produced no entry point for '" + def_name + "'");
}

CallOutcome JitFunction::call(const std::vector<halide_buffer_t*>& buffers, int threads) const {
  CallOutcome outcome;
  std::mutex mu;
  CallContext ctx;
  ctx.outcome = &outcome;
  ctx.mu = &mu;
  ctx.threads = threads;
  ctx.handlers = handlers_;
  Halide::JITUserContext* ctx_ptr = &ctx;
  std::vector<const void*> args;
  args.reserve(buffers.size() + 1);
  args.push_back(&ctx_ptr);
  for (halide_buffer_t* b : buffers) args.push_back(b);
  outcome.status = entry_(args.data());
  return outcome;
}

}  // namespace tc::backends::cpu
