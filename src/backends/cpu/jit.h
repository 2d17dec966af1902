// jit.h — a scheduled Halide pipeline as machine code in this process, and calls of it on
// caller memory: no realize(), no bounds queries, no copies — one call through the generated
// argv entry point with halide_buffer_t views of the tensors.
//
// The code is a relocatable object (Halide's codegen with Target::NoRuntime), linked into the
// process by object_loader.h against one Halide runtime object per process. So the object a
// compile produced can be kept (the compilation cache stores it) and linked again by a later
// process in a fraction of a millisecond instead of being compiled again. The runtime object
// is built once per process (about 0.9 s) unless one from a cache is put in place first.
//
// Halide's compile-time warnings and errors never reach the host's stderr: errors become
// exceptions here, warnings are dropped. What a failed call reports (the runtime's message, an
// allocation that failed, a worker thread that could not start) comes back as a CallOutcome.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <Halide.h>

#include "backends/cpu/object_loader.h"

namespace tc::backends::cpu {

// This machine as the code's target, with IEEE arithmetic (Halide's StrictFloat), never with
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

// What compiled code depends on besides its pipeline, as text: jit_target() and the Halide
// version (with it, LLVM's).
std::string target_key();

// The Halide runtime object this process's kernels link against: the one in place, else the
// one an earlier process kept (kept_code.h), else built now for jit_target(), kept, and put in
// place. Thread-safe; concurrent first calls build it once.
std::string runtime_object();
// Whether a runtime object is in place.
bool has_runtime_object();
// Puts `object` (kept by a cache) in place as the runtime when none is yet; throws
// TC_ERROR_INTERNAL when it cannot be linked here (then a later compile builds one).
void use_runtime_object(const std::string& object);

struct CallOutcome {
  int status = 0;                 // the generated code's: 0 on success
  std::string error;              // the runtime's first error message
  size_t failed_allocation = 0;   // bytes of an internal buffer that could not be allocated, or 0
  std::string thread_failure;     // why a worker thread could not be started, or empty
};

// The loop nest Halide lowers `outputs` to for `target` (with the lowering passes a
// JitFunction's compile uses), as Halide prints it. Throws TC_ERROR_INTERNAL on failure.
std::string lowered_loop_nest(const std::vector<Halide::Func>& outputs, const std::vector<Halide::Argument>& inputs,
                              const Halide::Target& target, const std::string& def_name);

class JitFunction {
 public:
  // Compiles `outputs` as one pipeline taking `inputs` (then one buffer per output) and links
  // it. Throws TC_ERROR_INTERNAL on failure (every valid program must compile: a failure is a
  // libtc bug); Halide's own text is appended only when TC_DEBUG_HALIDE is set.
  JitFunction(std::vector<Halide::Func> outputs, const std::vector<Halide::Argument>& inputs,
              const Halide::Target& target, const std::string& def_name);
  // Links an object that object() gave for the same pipeline (from a cache); `def_name`: the
  // entry_def() it was compiled under (its entry point's name; a renamed def's may differ).
  // Throws TC_ERROR_INTERNAL when it cannot be linked here.
  JitFunction(std::string object, const std::string& def_name);

  // buffers: the inputs, then the outputs, in the order given at construction.
  CallOutcome call(const std::vector<halide_buffer_t*>& buffers, int threads) const;
  // The relocatable object this function runs (ELF, for this machine's runtime object).
  const std::string& object() const { return object_; }
  // The def name the object's entry point is named after (tc_<name>_argv).
  const std::string& entry_def() const { return entry_def_; }

 private:
  void link(const std::string& def_name);

  std::string object_, entry_def_;
  std::unique_ptr<LinkedObject> linked_;
  int (*entry_)(void**) = nullptr;
};

}  // namespace tc::backends::cpu
