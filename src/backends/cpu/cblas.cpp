// cblas.cpp — see cblas.h.
#include "backends/cpu/cblas.h"

#include <cstdlib>

#include "support/dynamic_library.h"
#include "support/error.h"

namespace tc::backends::cpu {

std::vector<std::string> Cblas::default_candidates() {
  const char* chosen = std::getenv("TC_CBLAS");
  if (chosen && *chosen) return {chosen};
  return {"libopenblas.so.0", "libblis.so.4", "libblas.so.3"};
}

Cblas::Cblas(const std::vector<std::string>& candidates) {
  std::string tried;
  auto lib = load_first(
      candidates,
      [&](void* h, std::string& missing) {
        bind_function(h, "cblas_sgemm", sgemm, missing);
        bind_function(h, "cblas_dgemm", dgemm, missing);
      },
      tried);
  if (!lib) fail(TC_ERROR_UNSUPPORTED, "cpu backend: no CBLAS library could be loaded:" + tried);
  set_threads = reinterpret_cast<void (*)(int)>(dlsym(lib->handle, "openblas_set_num_threads"));
  path = lib->path;
}

const Cblas* cblas(std::string* why) {
  try {
    return &load_once<Cblas>();
  } catch (const Error& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace tc::backends::cpu
