// dynamic_library.cpp — see dynamic_library.h.
#include "support/dynamic_library.h"

namespace tc {

std::optional<LoadedLibrary> load_first(const std::vector<std::string>& candidates,
                                        const std::function<void(void*, std::string&)>& bind, std::string& tried) {
  for (const std::string& c : candidates) {
    void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      tried += "\n  " + c + ": " + (why ? why : "not loaded");
      continue;
    }
    std::string missing;
    bind(lib, missing);
    if (!missing.empty()) {
      tried += "\n  " + c + ": lacks " + missing;
      dlclose(lib);
      continue;
    }
    return LoadedLibrary{lib, c};
  }
  return std::nullopt;
}

}  // namespace tc
