// object_loader.cpp — see object_loader.h. One LLJIT for the process, never destroyed (kernels
// may outlive any static destructor): a JITDylib "tc-runtime" holds the runtime object and
// resolves what it lacks in the process; each kernel object gets its own JITDylib (two kernels
// of one def define the same names) linked against the runtime's, removed with its object.
#include "backends/cpu/object_loader.h"

#include <atomic>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include "support/error.h"

namespace tc::backends::cpu {
namespace {

std::string message_of(llvm::Error e) { return llvm::toString(std::move(e)); }

struct Process {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  llvm::orc::JITDylib* runtime = nullptr;  // set once the runtime object is linked
  std::mutex mu;                           // guards linking the runtime
  std::atomic<uint64_t> next_id{0};
};

Process& process() {
  static Process* p = [] {
    auto* made = new Process;
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit) fail(TC_ERROR_INTERNAL, "cpu backend: cannot start LLVM's JIT: " + message_of(jit.takeError()));
    made->jit = std::move(*jit);
    return made;
  }();
  return *p;
}

void* lookup(llvm::orc::JITDylib& jd, const std::string& name, const std::string& what) {
  auto sym = process().jit->lookup(jd, name);
  if (!sym) fail(TC_ERROR_INTERNAL, "cpu backend: cannot link " + what + ": " + message_of(sym.takeError()));
  return reinterpret_cast<void*>(static_cast<uintptr_t>(sym->getAddress()));
}

// The runtime's JITDylib; fails if the runtime is not linked yet (callers link it first).
llvm::orc::JITDylib* linked_runtime(Process& p) {
  std::lock_guard<std::mutex> lock(p.mu);
  if (!p.runtime) fail(TC_ERROR_INTERNAL, "cpu backend: Halide's runtime is not linked (a libtc bug)");
  return p.runtime;
}

}  // namespace

struct LinkedObject::Impl {
  llvm::orc::JITDylib* dylib = nullptr;
  void* entry = nullptr;
};

LinkedObject::LinkedObject(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LinkedObject::~LinkedObject() {
  if (impl_ && impl_->dylib) llvm::consumeError(process().jit->getExecutionSession().removeJITDylib(*impl_->dylib));
}

void* LinkedObject::entry() const { return impl_->entry; }

void link_runtime(const std::string& object) {
  Process& p = process();
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.runtime) return;
  auto& es = p.jit->getExecutionSession();
  auto jd = es.createJITDylib("tc-runtime");
  if (!jd) fail(TC_ERROR_INTERNAL, "cpu backend: cannot link Halide's runtime: " + message_of(jd.takeError()));
  auto host = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(p.jit->getDataLayout().getGlobalPrefix());
  if (!host) fail(TC_ERROR_INTERNAL, "cpu backend: cannot link Halide's runtime: " + message_of(host.takeError()));
  jd->addGenerator(std::move(*host));
  if (llvm::Error e = p.jit->addObjectFile(*jd, llvm::MemoryBuffer::getMemBufferCopy(object, "halide-runtime.o"))) {
    llvm::consumeError(es.removeJITDylib(*jd));
    fail(TC_ERROR_INTERNAL, "cpu backend: cannot link Halide's runtime: " + message_of(std::move(e)));
  }
  try {
    lookup(*jd, "halide_malloc", "Halide's runtime");  // links it now: a bad object fails here
  } catch (...) {
    llvm::consumeError(es.removeJITDylib(*jd));
    throw;
  }
  p.runtime = &*jd;
}

void* runtime_symbol(const std::string& name) {
  Process& p = process();
  llvm::orc::JITDylib* rt = linked_runtime(p);
  return lookup(*rt, name, "Halide's runtime symbol '" + name + "'");
}

std::unique_ptr<LinkedObject> link_object(const std::string& object, const std::string& entry,
                                          const std::string& what) {
  Process& p = process();
  llvm::orc::JITDylib* rt = linked_runtime(p);
  auto& es = p.jit->getExecutionSession();
  auto jd = es.createJITDylib("tc-kernel-" + std::to_string(p.next_id++));
  if (!jd) fail(TC_ERROR_INTERNAL, "cpu backend: cannot link " + what + ": " + message_of(jd.takeError()));
  auto impl = std::make_unique<LinkedObject::Impl>();
  LinkedObject::Impl* linking = impl.get();
  linking->dylib = &*jd;
  auto linked = std::make_unique<LinkedObject>(std::move(impl));  // unlinks on any failure below
  jd->addToLinkOrder(*rt);
  if (llvm::Error e = p.jit->addObjectFile(*jd, llvm::MemoryBuffer::getMemBufferCopy(object, what)))
    fail(TC_ERROR_INTERNAL, "cpu backend: cannot link " + what + ": " + message_of(std::move(e)));
  linking->entry = lookup(*jd, entry, what);
  return linked;
}

}  // namespace tc::backends::cpu
