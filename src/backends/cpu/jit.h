// jit.h — a scheduled Halide pipeline compiled to machine code in this process (Halide's
// LLVM JIT), and calls of it on caller memory: no realize(), no bounds queries, no copies —
// one call through the generated argv entry point with halide_buffer_t views of the tensors.
// Run-time errors of the generated code (a failed gather check, a buffer it cannot address)
// come back as the runtime's message.
#pragma once

#include <string>
#include <vector>

#include <Halide.h>

namespace tc::backends::cpu {

class JitFunction {
 public:
  // Compiles `outputs` as one pipeline taking `inputs` (then one buffer per output).
  // Throws TC_ERROR_COMPILE with Halide's message on failure.
  JitFunction(std::vector<Halide::Func> outputs, const std::vector<Halide::Argument>& inputs,
              const Halide::Target& target, const std::string& def_name);

  // buffers: the inputs, then the outputs, in the order given at construction. Returns the
  // generated code's status; on failure `error` holds the runtime's message.
  int call(const std::vector<halide_buffer_t*>& buffers, int threads, std::string& error) const;

 private:
  Halide::Internal::JITModule module_;
  int (*entry_)(const void**) = nullptr;
  Halide::JITHandlers handlers_;  // error, print and parallel-for hooks, filled in once
};

}  // namespace tc::backends::cpu
