// jit.cpp — see jit.h.
#include "backends/cpu/jit.h"

#include <mutex>

#include "backends/cpu/thread_pool.h"
#include "support/error.h"

namespace tc::backends::cpu {
namespace {

// What one call passes to the runtime hooks: where to put errors, how many threads to use.
struct CallContext : Halide::JITUserContext {
  std::string* error = nullptr;
  int threads = 1;
};

void on_error(Halide::JITUserContext* ctx, const char* message) {
  auto* c = static_cast<CallContext*>(ctx);
  if (c->error && c->error->empty()) *c->error = message;
}

void on_print(Halide::JITUserContext*, const char*) {}

int on_par_for(Halide::JITUserContext* ctx, int (*task)(Halide::JITUserContext*, int, uint8_t*), int min, int extent,
               uint8_t* closure) {
  auto* c = static_cast<CallContext*>(ctx);
  return parallel_for(c->threads, reinterpret_cast<Task>(task), ctx, min, extent, closure);
}

// Halide's lowering and LLVM code generation share process-wide state (the JIT runtime, name
// counters); one compilation at a time keeps concurrent tc_compile calls safe.
std::mutex& compile_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

JitFunction::JitFunction(std::vector<Halide::Func> outputs, const std::vector<Halide::Argument>& inputs,
                         const Halide::Target& target, const std::string& def_name) {
  std::string name = "tc_" + def_name;  // TC identifiers are valid C identifiers
  std::lock_guard<std::mutex> lock(compile_mutex());
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
    ctx.handlers.custom_do_par_for = on_par_for;
    Halide::Internal::JITSharedRuntime::populate_jit_handlers(&ctx, Halide::JITHandlers{});
    handlers_ = ctx.handlers;
  } catch (const Halide::Error& e) {
    fail(TC_ERROR_COMPILE, "cpu backend: Halide could not compile '" + def_name + "': " + e.what());
  }
  if (entry_ == nullptr) fail(TC_ERROR_COMPILE, "cpu backend: the JIT produced no entry point for '" + def_name + "'");
}

int JitFunction::call(const std::vector<halide_buffer_t*>& buffers, int threads, std::string& error) const {
  CallContext ctx;
  ctx.error = &error;
  ctx.threads = threads;
  ctx.handlers = handlers_;
  Halide::JITUserContext* ctx_ptr = &ctx;
  std::vector<const void*> args;
  args.reserve(buffers.size() + 1);
  args.push_back(&ctx_ptr);
  for (halide_buffer_t* b : buffers) args.push_back(b);
  return entry_(args.data());
}

}  // namespace tc::backends::cpu
