// instrumentation.cpp — see instrumentation.h.
#include "backends/cuda/profile/instrumentation.h"

namespace tc::backends::cuda::profile {
namespace {

// After the emulation header (emulate.cpp), before the prelude. tc_prof is the sink of the
// launch being profiled; accesses to the builtins (threadIdx, ...) and to the running
// thread's stack (its locals: at -O0 every variable lives there) are not the kernel's traffic.
constexpr const char* kHeader = R"(// libtc's profiling hooks (src/backends/cuda/profile/instrumentation.cpp)
struct tc_prof_sink {
  void* recorder;
  void (*access)(void*, const void*, const void*, unsigned, int, unsigned);
  void (*statement)(void*, unsigned);
  void (*fma)(void*, unsigned);
  void (*warp_done)(void*, unsigned);
  void (*block_done)(void*);
};
inline thread_local const tc_prof_sink* tc_prof = nullptr;
template <typename T> TC_EMU_FN inline int tc_prof_in(const char* p, const T& v) {
  return p >= (const char*)&v && p < (const char*)(&v + 1);
}
TC_EMU_FN inline void tc_prof_access(const void* site, const void* address, unsigned size, int write) {
  if (!tc_prof || !tc_emu) return;
  const char* p = (const char*)address;
  const char* stack = tc_emu->stacks + (unsigned long)tc_emu->current * tc_emu->stack_size;
  if ((p >= stack && p < stack + tc_emu->stack_size) || tc_prof_in(p, blockIdx) || tc_prof_in(p, threadIdx) ||
      tc_prof_in(p, gridDim) || tc_prof_in(p, blockDim))
    return;
  tc_prof->access(tc_prof->recorder, site, address, size, write, tc_emu->current);
}
TC_EMU_FN inline void tc_prof_statement() {
  if (tc_prof && tc_emu) tc_prof->statement(tc_prof->recorder, tc_emu->current);
}
TC_EMU_FN inline void tc_prof_fma() {
  if (tc_prof && tc_emu) tc_prof->fma(tc_prof->recorder, tc_emu->current);
}
// Hidden: the kernel's calls bind to these, even in a process with a ThreadSanitizer runtime.
#define TC_PROF_HOOK extern "C" __attribute__((no_sanitize("thread"), visibility("hidden")))
TC_PROF_HOOK void __tsan_init() {}
TC_PROF_HOOK void __tsan_func_entry(void*) {}
TC_PROF_HOOK void __tsan_func_exit() {}
TC_PROF_HOOK void __tsan_vptr_update(void**, void*) {}
TC_PROF_HOOK void __tsan_vptr_read(void**) {}
TC_PROF_HOOK void __tsan_read_range(void*, unsigned long) {}
TC_PROF_HOOK void __tsan_write_range(void*, unsigned long) {}
TC_PROF_HOOK void* __tsan_memcpy(void* d, const void* s, unsigned long n) { return __builtin_memcpy(d, s, n); }
TC_PROF_HOOK void* __tsan_memmove(void* d, const void* s, unsigned long n) { return __builtin_memmove(d, s, n); }
TC_PROF_HOOK void* __tsan_memset(void* d, int c, unsigned long n) { return __builtin_memset(d, c, n); }
#define TC_PROF_HOOKS(n)                                                                                           \
  TC_PROF_HOOK void __tsan_read##n(void* p) { tc_prof_access(__builtin_return_address(0), p, n, 0); }               \
  TC_PROF_HOOK void __tsan_write##n(void* p) { tc_prof_access(__builtin_return_address(0), p, n, 1); }              \
  TC_PROF_HOOK void __tsan_unaligned_read##n(void* p) { tc_prof_access(__builtin_return_address(0), p, n, 0); }     \
  TC_PROF_HOOK void __tsan_unaligned_write##n(void* p) { tc_prof_access(__builtin_return_address(0), p, n, 1); }    \
  TC_PROF_HOOK void __tsan_volatile_read##n(void* p) { tc_prof_access(__builtin_return_address(0), p, n, 0); }      \
  TC_PROF_HOOK void __tsan_volatile_write##n(void* p) { tc_prof_access(__builtin_return_address(0), p, n, 1); }
TC_PROF_HOOKS(1) TC_PROF_HOOKS(2) TC_PROF_HOOKS(4) TC_PROF_HOOKS(8) TC_PROF_HOOKS(16)
#define TC_STATEMENT() tc_prof_statement()
#define fmaf(a, b, c) (tc_prof_fma(), fmaf(a, b, c))
#define fma(a, b, c) (tc_prof_fma(), fma(a, b, c))
)";

constexpr const char* kMark = "TC_STATEMENT();";

std::string profiled_entry_point(const Launch& l, const std::vector<std::string>& types) {
  return emulated_body(l, types) + "extern \"C\" TC_EMU_FN int " + l.kernel +
         "_profiled(void** a, const unsigned* g, const unsigned* b, const unsigned* blocks, unsigned n, "
         "const tc_prof_sink* sink) {\n"
         "  gridDim = {g[0], g[1], g[2]};\n  blockDim = {b[0], b[1], b[2]};\n  tc_prof = sink;\n"
         "  int stray = tc_emu_grid(g, b, " + l.kernel + "_body, a, blocks, n, sink->warp_done, sink->block_done, sink->recorder);\n"
         "  tc_prof = nullptr;\n  return stray;\n}\n";
}

}  // namespace

std::string without_statement_marks(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    size_t first = text.find_first_not_of(' ', at);
    bool mark = first != std::string::npos && text.compare(first, std::char_traits<char>::length(kMark), kMark) == 0 &&
                first + std::char_traits<char>::length(kMark) + 1 == end;
    if (!mark) out.append(text, at, end - at);
    at = end;
  }
  return out;
}

const EmulationVariant& instrumented() {
  static const EmulationVariant variant{kHeader, "-fsanitize=thread -fno-exceptions", "_profiled", profiled_entry_point};
  return variant;
}

}  // namespace tc::backends::cuda::profile
