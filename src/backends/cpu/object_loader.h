// object_loader.h — links relocatable object files into this process with LLVM 14's ORC JIT
// (the LLVM that libHalide already loads): Halide's runtime object once per process, then each
// kernel's object in a JITDylib of its own whose undefined symbols resolve against that runtime
// and the process (libc, libm). Linking a kernel object takes a fraction of a millisecond where
// compiling it takes 0.1-1 s, which is what makes a cache hit fast (the cache keeps objects).
// It knows nothing of Halide's IR or of kernels' arguments: bytes in, addresses out.
// Thread-safe: objects are linked, used and released from any thread. LLVM's target registry
// must be initialised before the first call (jit.cpp has Halide do it, under Halide's own
// once-flag, so that the two never register targets concurrently).
#pragma once

#include <memory>
#include <string>

namespace tc::backends::cpu {

// One kernel object linked into the process; destroying it unlinks the object and frees its
// code (no call of its entry may be running then).
class LinkedObject {
 public:
  struct Impl;
  explicit LinkedObject(std::unique_ptr<Impl> impl);
  ~LinkedObject();
  void* entry() const;  // the address of the symbol named at link time

 private:
  std::unique_ptr<Impl> impl_;
};

// Links the runtime object if none is linked yet (a second call does nothing). Throws
// TC_ERROR_INTERNAL with LLVM's reason when it cannot be linked (not an object, a missing
// symbol); then nothing is linked and another object may be tried.
void link_runtime(const std::string& object);
// The address of a symbol the runtime defines; throws if it is not linked or lacks the symbol.
void* runtime_symbol(const std::string& name);
// Links a kernel object against the runtime (which must be linked first) and resolves `entry`
// in it. `what` names the object in errors. Throws TC_ERROR_INTERNAL with LLVM's reason.
std::unique_ptr<LinkedObject> link_object(const std::string& object, const std::string& entry,
                                          const std::string& what);

}  // namespace tc::backends::cpu
