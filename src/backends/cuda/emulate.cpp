// emulate.cpp — see emulate.h. The host entry point of each kernel (`<kernel>_emulated`) is
// appended after the CUDA C text; the text itself is compiled unchanged.
#include "backends/cuda/emulate.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "backends/kept_code.h"
#include "support/error.h"
#include "support/sha256.h"

namespace tc::backends::cuda {
namespace {

// CUDA's built-ins for a host compiler: the ids are per host thread, set by the entry points.
// A kernel that synchronises (__syncthreads, __syncwarp, __shfl_down_sync, the named barriers
// of __barrier_sync_count) runs each block's threads as coroutines on one host thread: each
// runs to its next barrier, and a barrier is passed when every live thread it waits for (the
// block's, or the warp's) has reached it, or a named barrier when its count of threads has.
// __shared__ arrays are static thread_local, so a block's threads (one host thread) share them.
constexpr const char* kEmulationHeader = R"(// libtc's CUDA emulation header (src/backends/cuda/emulate.cpp)
// The C library's declarations only: libstdc++'s <math.h> would bring <cmath> and its templates,
// 0.12 s of every 0.2 s compile. The printed text calls the C names (expf, sqrt, fmodf: the
// suffix says the type, as in CUDA C), so it needs no C++ overload.
#define _GLIBCXX_INCLUDE_NEXT_C_HEADERS
#include <math.h>
#include <stdlib.h>
#undef _GLIBCXX_INCLUDE_NEXT_C_HEADERS
#include <ucontext.h>
// The emulation's own functions are not the kernel's code: a profiling build (-fsanitize=thread,
// profile/instrumentation.cpp) records the memory accesses of the kernel's code only.
#define TC_EMU_FN __attribute__((no_sanitize("thread")))
struct tc_dim3 { unsigned x, y, z; };
inline thread_local tc_dim3 blockIdx, threadIdx, gridDim, blockDim;
#define __global__
#define __launch_bounds__(...)
#define __device__
#define __forceinline__ inline
#define __shared__ static thread_local
// CUDA's vector types (64- and 128-bit accesses)
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) double2 { double x, y; };
// Threads run one at a time (no switch inside an atomic): an atomic is a plain read-modify-write.
template <typename T> inline T atomicCAS(T* a, T expected, T value) {
  T old = *a;
  if (old == expected) *a = value;
  return old;
}
template <typename T> inline T atomicAdd(T* a, T value) {
  T old = *a;
  *a = old + value;
  return old;
}
// The coroutines of the block being run (null: the kernel does not synchronise). A thread is
// running, waiting at a __syncthreads (all of the block's live threads must arrive), waiting at
// a warp's sync (__syncwarp, each step of a shuffle: the live threads of its warp, 32
// consecutive ones), waiting at a named barrier (__barrier_sync_count(id, count): `count`
// threads must arrive at barrier `id`), or done.
enum { tc_emu_running, tc_emu_at_block, tc_emu_at_warp, tc_emu_at_named, tc_emu_done };
struct tc_emu_block {
  ucontext_t scheduler;
  ucontext_t* threads;
  int* state;
  unsigned long long* slots;  // a shuffle's values, one per thread
  unsigned* named;            // at a named barrier: its id * 65536 + its count, per thread
  unsigned current;
  void (*body)(void**);       // the kernel, called with the launch's arguments
  void** args;
  char* stacks;               // thread t's stack: stacks + t * stack_size
  size_t stack_size;
};
inline thread_local tc_emu_block* tc_emu = nullptr;
TC_EMU_FN inline void tc_emu_wait(int state) {
  tc_emu->state[tc_emu->current] = state;
  swapcontext(&tc_emu->threads[tc_emu->current], &tc_emu->scheduler);
}
TC_EMU_FN inline void __syncthreads() {
  if (tc_emu) tc_emu_wait(tc_emu_at_block);
}
TC_EMU_FN inline void __syncwarp(unsigned = 0xffffffffu) {
  if (tc_emu) tc_emu_wait(tc_emu_at_warp);
}
TC_EMU_FN inline void __barrier_sync_count(unsigned id, unsigned count) {
  if (!tc_emu) return;
  tc_emu->named[tc_emu->current] = (id % 16u) * 65536u + count;
  tc_emu_wait(tc_emu_at_named);
}
template <typename T> TC_EMU_FN inline T __shfl_down_sync(unsigned, T v, int off) {
  unsigned me = tc_emu->current, lane = me % 32u;
  unsigned long long bits = 0;
  __builtin_memcpy(&bits, &v, sizeof v);
  tc_emu->slots[me] = bits;
  tc_emu_wait(tc_emu_at_warp);  // every lane has written
  if (lane + (unsigned)off < 32u) __builtin_memcpy(&v, &tc_emu->slots[me + (unsigned)off], sizeof v);
  tc_emu_wait(tc_emu_at_warp);  // every lane has read
  return v;
}
TC_EMU_FN inline void tc_emu_thread() {
  tc_emu->body(tc_emu->args);
  tc_emu->state[tc_emu->current] = tc_emu_done;  // returns to uc_link: the scheduler
}
// Releases the threads whose barrier every live thread it waits for has reached: returns how
// many, and sets *stray where a thread ended while others waited for it.
TC_EMU_FN inline unsigned tc_emu_release(unsigned n, int* stray) {
  unsigned live = 0, at_block = 0, released = 0, ended = 0;
  for (unsigned t = 0; t < n; ++t) {
    live += tc_emu->state[t] != tc_emu_done;
    at_block += tc_emu->state[t] == tc_emu_at_block;
    ended += tc_emu->state[t] == tc_emu_done;
  }
  if (live > 0 && at_block == live) {
    if (ended > 0) *stray = 1;
    for (unsigned t = 0; t < n; ++t)
      if (tc_emu->state[t] == tc_emu_at_block) tc_emu->state[t] = tc_emu_running, ++released;
  }
  for (unsigned w = 0; w < n; w += 32) {
    unsigned end = w + 32 < n ? w + 32 : n, waiting = 0, others = 0, gone = 0;
    for (unsigned t = w; t < end; ++t) {
      waiting += tc_emu->state[t] == tc_emu_at_warp;
      others += tc_emu->state[t] == tc_emu_at_block || tc_emu->state[t] == tc_emu_running || tc_emu->state[t] == tc_emu_at_named;
      gone += tc_emu->state[t] == tc_emu_done;
    }
    if (waiting == 0 || others > 0) continue;
    if (gone > 0) *stray = 1;
    for (unsigned t = w; t < end; ++t)
      if (tc_emu->state[t] == tc_emu_at_warp) tc_emu->state[t] = tc_emu_running, ++released;
  }
  // A named barrier passes when its count of threads has arrived, all asking for that count;
  // more threads, or counts that differ, are undefined on a GPU.
  for (unsigned id = 0; id < 16; ++id) {
    unsigned arrived = 0, count = 0, mixed = 0;
    for (unsigned t = 0; t < n; ++t) {
      if (tc_emu->state[t] != tc_emu_at_named || tc_emu->named[t] / 65536u != id) continue;
      unsigned c = tc_emu->named[t] % 65536u;
      mixed += arrived > 0 && c != count;
      count = c;
      ++arrived;
    }
    if (arrived == 0 || arrived < count) continue;
    if (arrived > count || mixed > 0) {
      *stray = 1;
      continue;
    }
    for (unsigned t = 0; t < n; ++t)
      if (tc_emu->state[t] == tc_emu_at_named && tc_emu->named[t] / 65536u == id) tc_emu->state[t] = tc_emu_running, ++released;
  }
  return released;
}
// Runs a synchronising kernel: per block, every running thread runs to its next barrier or its
// end, then the barriers all of whose threads have arrived are passed, until every thread is
// done. Runs every block of the grid in order, or (`only` not null) the `n_only` blocks it
// lists by linear index, calling after_warp(after, w) each time warp w's threads have all run to
// their next barrier or their end, and after_block(after) after each block. Returns 1 if threads ended
// while others waited at a barrier for them, or if threads waited at barriers that can never
// all be reached (undefined or a hang on a GPU).
TC_EMU_FN inline int tc_emu_grid(const unsigned* g, const unsigned* b, void (*body)(void**), void** args,
                                 const unsigned* only = nullptr, unsigned n_only = 0,
                                 void (*after_warp)(void*, unsigned) = nullptr, void (*after_block)(void*) = nullptr,
                                 void* after = nullptr) {
  const size_t stack = 256 * 1024;
  unsigned n = b[0] * b[1] * b[2];
  tc_emu_block block;
  block.threads = (ucontext_t*)calloc(n, sizeof(ucontext_t));
  block.state = (int*)calloc(n, sizeof(int));
  block.slots = (unsigned long long*)calloc(n, sizeof(unsigned long long));
  block.named = (unsigned*)calloc(n, sizeof(unsigned));
  char* stacks = (char*)malloc(n * stack);
  block.body = body;
  block.args = args;
  block.stacks = stacks;
  block.stack_size = stack;
  int stray = 0;
  tc_emu = &block;
  unsigned long long blocks = only ? n_only : (unsigned long long)g[0] * g[1] * g[2];
  for (unsigned long long i = 0; i < blocks && !stray; ++i) {
    unsigned long long id = only ? only[i] : i;
    blockIdx = {(unsigned)(id % g[0]), (unsigned)(id / g[0] % g[1]), (unsigned)(id / g[0] / g[1])};
    for (unsigned t = 0; t < n; ++t) {
      getcontext(&block.threads[t]);
      block.threads[t].uc_stack.ss_sp = stacks + t * stack;
      block.threads[t].uc_stack.ss_size = stack;
      block.threads[t].uc_link = &block.scheduler;
      makecontext(&block.threads[t], tc_emu_thread, 0);
      block.state[t] = tc_emu_running;
    }
    for (;;) {
      for (unsigned t = 0; t < n; ++t) {
        if (block.state[t] == tc_emu_running) {
          threadIdx = {t % b[0], (t / b[0]) % b[1], t / (b[0] * b[1])};
          block.current = t;
          swapcontext(&block.scheduler, &block.threads[t]);
        }
        if (after_warp && (t % 32 == 31 || t == n - 1)) after_warp(after, t / 32);
      }
      unsigned done = 0;
      for (unsigned t = 0; t < n; ++t) done += block.state[t] == tc_emu_done;
      if (done == n) break;
      if (tc_emu_release(n, &stray) == 0) stray = 1;  // no barrier can be passed: a hang on a GPU
      if (stray) break;
    }
    if (after_block) after_block(after);
  }
  tc_emu = nullptr;
  free(stacks);
  free(block.slots);
  free(block.named);
  free(block.state);
  free(block.threads);
  return stray;
}
)";

}  // namespace

// `<kernel>_body(void** a)`: the kernel called with the launch's arguments a[0], ... (not
// instrumented by a profiling build: reading `a` is the emulation's work, not the kernel's).
std::string emulated_body(const Launch& l, const std::vector<std::string>& types) {
  std::string args;
  for (size_t i = 0; i < types.size(); ++i) args += (i ? ", " : "") + std::string("(") + types[i] + ")a[" + std::to_string(i) + "]";
  return "static TC_EMU_FN void " + l.kernel + "_body(void** a) { " + l.kernel + "(" + args + "); }\n";
}

namespace {

// The host entry point of one kernel: every block, every thread, in turn (as coroutines where
// the kernel synchronises). Returns 0, or 1 where the threads of a block diverged at a barrier.
std::string entry_point(const Launch& l, const std::vector<std::string>& types) {
  std::string head = emulated_body(l, types) + "extern \"C\" int " + l.kernel + "_emulated(void** a, const unsigned* g, const unsigned* b) {\n"
                     "  gridDim = {g[0], g[1], g[2]};\n  blockDim = {b[0], b[1], b[2]};\n";
  if (l.synchronises) return head + "  return tc_emu_grid(g, b, " + l.kernel + "_body, a);\n}\n";
  return head +
         "  for (unsigned bz = 0; bz < g[2]; ++bz) for (unsigned by = 0; by < g[1]; ++by) for (unsigned bx = 0; bx < g[0]; ++bx)\n"
         "    for (unsigned tz = 0; tz < b[2]; ++tz) for (unsigned ty = 0; ty < b[1]; ++ty) for (unsigned tx = 0; tx < b[0]; ++tx) {\n"
         "      blockIdx = {bx, by, bz};\n      threadIdx = {tx, ty, tz};\n      " + l.kernel + "_body(a);\n    }\n"
         "  return 0;\n}\n";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) fail(TC_ERROR_COMPILE, "cannot write " + path + " (cuda emulation)");
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string compiler() {
  const char* cxx = std::getenv("CXX");
  return cxx && *cxx ? cxx : "c++";
}

// One set of flags for the precompiled header and every kernel: GCC uses a precompiled header
// only where the flags match. -O0: the emulation runs test-sized launches, where compiling is
// most of the time; -O1 took 45 of the 60 s of the corpus at cuda.reduction=tree (the coroutine
// code), -O0 27 s, and the runs were no slower. IEEE semantics are the same at any level
// (-ffp-contract=off).
constexpr const char* kFlags = "-std=c++17 -O0 -ffp-contract=off -fno-builtin -fPIC -w";

// The flags of a build: kFlags and the variant's.
std::string flags_of(const EmulationVariant* variant) {
  return variant && !variant->flags.empty() ? std::string(kFlags) + " " + variant->flags : kFlags;
}

std::string first_line_of(const std::string& command) {
  std::string line;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof buf, p)) line = buf;
    pclose(p);
  }
  return line;
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// What is precompiled: the emulation header, then the prelude every generated text starts with
// (print_cuda.h; a text's copy is left out when it compiles with this header: 6 of its 46 ms).
std::string precompiled_text(const EmulationVariant* variant) {
  return std::string(kEmulationHeader) + (variant ? variant->header : "") + cuda_prelude();
}

// What the compiled code depends on besides the text: the compiler (the value of $CXX and the
// first line of its --version), the flags and the header; once per compiler, variant and process.
std::string compiler_identity(const std::string& cxx, const EmulationVariant* variant) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;  // compiler -> first line of --version
  std::lock_guard<std::mutex> lock(mutex);
  auto it = versions.find(cxx);
  if (it == versions.end()) it = versions.emplace(cxx, first_line_of(cxx + " --version 2>/dev/null")).first;
  return cxx + "\n" + it->second + flags_of(variant) + "\n" + precompiled_text(variant);
}

// The emulation header, precompiled (GCC's .gch beside it), shared by every kernel of every
// process of this user with this compiler: parsing it was 40-50 ms of a 0.1 s kernel compile.
// In $TMPDIR (else /tmp), one directory per user and compiler identity; made under a temporary
// name and renamed, so a process sees a whole one or none. Empty if it cannot be made: the
// kernel's own directory then gets the header as text (slower, the same code).
std::string precompiled_header(const EmulationVariant* variant) {
  static std::mutex mutex;
  static std::map<std::string, std::string> made;  // compiler identity -> header path ("" = cannot)
  const std::string identity = compiler_identity(compiler(), variant);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = made.find(identity);
  if (it != made.end()) return it->second;
  std::string& header = made[identity];
  const std::string dir = temp_root() + "/tc-cuda-emulation-pch-" + std::to_string(getuid()) + "-" +
                          sha256_hex(identity).substr(0, 16);
  auto ready = [&] { return is_private_dir(dir) && exists(dir + "/tc_cuda_emulation.h.gch"); };
  if (!ready()) {
    const std::string made_dir = make_temp_dir(dir + ".");
    if (made_dir.empty()) return header;
    const std::string text = made_dir + "/tc_cuda_emulation.h";
    std::ofstream(text, std::ios::binary) << precompiled_text(variant);  // a failed write fails the compile below
    const std::string command = compiler() + " " + flags_of(variant) + " -x c++-header '" + text + "' -o '" + text + ".gch' > /dev/null 2>&1";
    if (std::system(command.c_str()) != 0 || std::rename(made_dir.c_str(), dir.c_str()) != 0) {  // or another process was first
      for (const std::string& f : {text, text + ".gch"}) std::remove(f.c_str());
      rmdir(made_dir.c_str());
    }
  }
  if (ready()) header = dir + "/tc_cuda_emulation.h";
  return header;
}

// How a kernel's object is linked: by the compiler's own linker directly, with libm and libgcc,
// where the compiler names all three (-print-prog-name=ld, -print-file-name=libm.so.6,
// -print-libgcc-file-name): `LD -shared` and the libraries; "" where it does not, and the
// compiler links. Through the compiler the link read the C library's linker script and its
// static part: 14 of a small kernel's 60 ms, where ld on its own takes 3 to 5. The C library's
// symbols (swapcontext) bind at load time to the process's, which has it in every case.
std::string direct_link(const std::string& cxx) {
  static std::mutex mutex;
  static std::map<std::string, std::string> links;  // compiler -> link command ("" = through it)
  std::lock_guard<std::mutex> lock(mutex);
  auto it = links.find(cxx);
  if (it != links.end()) return it->second;
  auto ask = [&](const std::string& what) {
    std::string line = first_line_of(cxx + " " + what + " 2>/dev/null");
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return line;
  };
  const std::string ld = ask("-print-prog-name=ld"), libm = ask("-print-file-name=libm.so.6"),
                    libgcc = ask("-print-libgcc-file-name");
  const bool named = !ld.empty() && libm.find('/') != std::string::npos && exists(libm) && exists(libgcc);
  return links[cxx] = named ? "'" + ld + "' -shared" + " '" + libm + "' '" + libgcc + "'" : "";
}

// The kept host objects (kept_code.h), keyed by the compiler's identity and the text. A kept
// file is the object with its checksum after it, which the loader ignores: it is loaded where
// it lies.
const KeptCode& kept_objects() {
  static const KeptCode kept("tc-cuda-emulation-kept-" + std::to_string(getuid()));
  return kept;
}

}  // namespace

std::string kept_objects_dir() { return kept_objects().dir(); }

EmulatedKernels::EmulatedKernels(const CudaSource& source, const EmulationVariant* variant)
    : launches_(source.launches), variant_(variant) {
  try {
    build(source);
  } catch (...) {
    unload();  // the destructor does not run for a constructor that throws
    throw;
  }
}

void EmulatedKernels::build(const CudaSource& source) {
  std::string text = source.text;
  for (const Launch& l : launches_)
    text += "\n" + (variant_ ? variant_->entry_point(l, source.param_types) : entry_point(l, source.param_types));
  const std::string header = precompiled_header(variant_);
  const std::string key = compiler_identity(compiler(), variant_) + "\n" + text;
  if (kept_objects().find(key)) library_ = dlopen(kept_objects().path(key).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    // Compiled in a directory of its own, removed once the library is loaded (a loaded
    // library needs no file), so that a process that ends without destructors leaves nothing.
    const std::string dir = make_temp_dir(temp_root() + "/tc-cuda-emulation-");
    if (dir.empty()) fail(TC_ERROR_COMPILE, "cannot create a directory for the cuda emulation in " + temp_root());
    try {
      compile(dir, text, header);
      kept_objects().keep(key, read_file(dir + "/kernels.so"));
      library_ = dlopen((dir + "/kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    } catch (...) {
      remove_dir(dir);
      throw;
    }
    remove_dir(dir);
  }
  if (library_ == nullptr) fail(TC_ERROR_COMPILE, std::string("cannot load the cuda emulation's kernels: ") + dlerror());
  const std::string suffix = variant_ ? variant_->suffix : "_emulated";
  for (const Launch& l : launches_) {
    void* f = dlsym(library_, (l.kernel + suffix).c_str());
    if (f == nullptr) fail(TC_ERROR_COMPILE, "the cuda emulation's library has no " + l.kernel + suffix);
    entries_.push_back(f);
  }
}

void EmulatedKernels::compile(const std::string& dir, const std::string& text, std::string header) const {
  const std::string& prelude = cuda_prelude();
  if (header.empty()) {
    header = dir + "/tc_cuda_emulation.h";
    write_file(header, std::string(kEmulationHeader) + (variant_ ? variant_->header : ""));
    write_file(dir + "/kernels.cu", text);
  } else {  // the precompiled header has the prelude: the text's copy would define it twice
    write_file(dir + "/kernels.cu", text.compare(0, prelude.size(), prelude) == 0 ? text.substr(prelude.size()) : text);
  }
  // Linked against libm and libgcc only (the compiler's link: -nostdlib, and the C library): the
  // text uses no C++ library, and libstdc++'s link took a third of a kernel's compile.
  const std::string to_log = " 2>> '" + dir + "/compiler.log'", so = " -o '" + dir + "/kernels.so'";
  const std::string compile = compiler() + " " + flags_of(variant_) + " -x c++ -include '" + header + "' '" + dir + "/kernels.cu'";
  const std::string link = direct_link(compiler());
  const std::string command =
      link.empty() ? compile + " -shared -nostdlib -lm -lc -lgcc" + so + to_log
                   : compile + " -c -o '" + dir + "/kernels.o'" + to_log + " && " + link + " '" + dir + "/kernels.o'" + so + to_log;
  int status = std::system(command.c_str());
  if (status != 0) {
    std::string log = read_file(dir + "/compiler.log");
    fail(TC_ERROR_COMPILE, "the cuda emulation's host compile failed (" + command + "): " + log.substr(0, 4000));
  }
}

EmulatedKernels::~EmulatedKernels() { unload(); }

void EmulatedKernels::unload() {
  if (library_) dlclose(library_);
  library_ = nullptr;
}

void EmulatedKernels::remove_dir(const std::string& dir) {
  for (const char* f : {"/kernels.so", "/kernels.o", "/kernels.cu", "/tc_cuda_emulation.h", "/compiler.log"})
    std::remove((dir + f).c_str());
  rmdir(dir.c_str());
}

void EmulatedKernels::run(const std::vector<void*>& params, const std::vector<LaunchDims>& dims) const {
  if (variant_) fail(TC_ERROR_INTERNAL, "a variant's entry points are called through entry()");
  std::vector<void*> args(params);
  for (size_t k = 0; k < entries_.size(); ++k)
    if (reinterpret_cast<Entry>(entries_[k])(args.data(), dims[k].grid.data(), dims[k].block.data()) != 0)
      fail(TC_ERROR_INTERNAL, "cuda emulation: in launch " + launches_[k].kernel +
                                  ", the threads of a block or warp did not all reach the same barrier (__syncthreads, "
                                  "__syncwarp, a shuffle or a named barrier; a code generation defect: please report it)");
}

}  // namespace tc::backends::cuda
