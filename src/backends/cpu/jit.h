// jit.h — a scheduled Halide pipeline compiled to machine code in this process (Halide's
// LLVM JIT), and calls of it on caller memory: no realize(), no bounds queries, no copies —
// one call through the generated argv entry point with halide_buffer_t views of the tensors.
// Halide's compile-time warnings and errors never reach the host's stderr: errors become
// exceptions here, warnings are dropped. What a failed call reports (the runtime's message,
// an allocation that failed, a worker thread that could not start) comes back as a CallOutcome.
#pragma once

#include <string>
#include <vector>

#include <Halide.h>

namespace tc::backends::cpu {

// This machine as the JIT's target, with IEEE arithmetic (Halide's StrictFloat), never with
// instructions the CPU lacks.
Halide::Target jit_target();

// Installs (once) the process-wide reporter that turns Halide's compile-time errors into
// exceptions and drops its warnings. The cpu backend's compile() calls it before anything
// builds Halide IR (lowering can report too, and the pointer must be set before threads read
// it); JitFunction relies on that.
void quiet_halide_reporter();

// "; Halide: <what>" when the environment sets TC_DEBUG_HALIDE (to anything but 0), else "":
// Halide's own text, with its internal names, is appended to a libtc message only on request.
std::string halide_detail(const std::string& what);

struct CallOutcome {
  int status = 0;                 // the generated code's: 0 on success
  std::string error;              // the runtime's first error message
  size_t failed_allocation = 0;   // bytes of an internal buffer that could not be allocated, or 0
  std::string thread_failure;     // why a worker thread could not be started, or empty
};

class JitFunction {
 public:
  // Compiles `outputs` as one pipeline taking `inputs` (then one buffer per output).
  // Throws TC_ERROR_INTERNAL on failure (every valid program must compile: a failure is a
  // libtc bug); Halide's own text is appended only when TC_DEBUG_HALIDE is set.
  JitFunction(std::vector<Halide::Func> outputs, const std::vector<Halide::Argument>& inputs,
              const Halide::Target& target, const std::string& def_name);

  // buffers: the inputs, then the outputs, in the order given at construction.
  CallOutcome call(const std::vector<halide_buffer_t*>& buffers, int threads) const;

 private:
  Halide::Internal::JITModule module_;
  int (*entry_)(const void**) = nullptr;
  Halide::JITHandlers handlers_;  // error, print, malloc and parallel-for hooks, filled in once
};

}  // namespace tc::backends::cpu
