// dynamic_library.h — one of several candidate shared libraries loaded with dlopen and its
// functions bound by name, once per process: how the cuda backend reaches NVRTC and the CUDA
// driver, and the cpu backend a CBLAS, which libtc never links (so it builds and runs without
// them). It does not call any of them.
#pragma once

#include <dlfcn.h>

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "support/error.h"

namespace tc {

// Binds `f` to the function `name` of `lib`; a name not found is appended to `missing`.
template <typename F>
void bind_function(void* lib, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (f == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

struct LoadedLibrary {
  void* handle = nullptr;  // stays loaded for the process
  std::string path;        // the candidate that loaded
};

// The first of `candidates` (paths or sonames) that dlopen loads and for which `bind` (given
// the handle and a list to append missing names to) finds every function. nullopt if none
// does; `tried` then says, per candidate, why ("<candidate>: <dlerror>" or "lacks f, g").
std::optional<LoadedLibrary> load_first(const std::vector<std::string>& candidates,
                                        const std::function<void(void* handle, std::string& missing)>& bind,
                                        std::string& tried);

// The process's one `Library` (Nvrtc, Driver, Cblas), made from Library::default_candidates() on the
// first call (thread-safe); a failure to find it is remembered and rethrown on every call. Both
// are kept for the process, like the library they loaded.
template <typename Library>
const Library& load_once() {
  static std::once_flag once;
  static const Library* found = nullptr;
  static Error* failure = nullptr;
  std::call_once(once, [] {
    try {
      found = new Library(Library::default_candidates());
    } catch (const Error& e) {
      failure = new Error(e);
    }
  });
  if (failure) throw *failure;
  return *found;
}

}  // namespace tc
