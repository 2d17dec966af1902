// emulate.cpp — see emulate.h. The host entry point of each kernel (`<kernel>_emulated`) is
// appended after the CUDA C text; the text itself is compiled unchanged.
#include "backends/cuda/emulate.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace tc::backends::cuda {
namespace {

// CUDA's built-ins for a host compiler: the ids are per host thread, set by the entry points.
constexpr const char* kEmulationHeader = R"(// libtc's CUDA emulation header (src/backends/cuda/emulate.cpp)
#include <math.h>
struct tc_dim3 { unsigned x, y, z; };
inline thread_local tc_dim3 blockIdx, threadIdx, gridDim, blockDim;
#define __global__
#define __device__
#define __forceinline__ inline
// Threads run one after another: an atomic is a plain read-modify-write.
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
)";

// The host entry point of one kernel: every block, every thread, in turn.
std::string entry_point(const Launch& l, const std::vector<std::string>& types) {
  std::string args;
  for (size_t i = 0; i < types.size(); ++i) args += (i ? ", " : "") + std::string("(") + types[i] + ")a[" + std::to_string(i) + "]";
  return "extern \"C\" void " + l.kernel + "_emulated(void** a, const unsigned* g, const unsigned* b) {\n"
         "  gridDim = {g[0], g[1], g[2]};\n  blockDim = {b[0], b[1], b[2]};\n"
         "  for (unsigned bz = 0; bz < g[2]; ++bz) for (unsigned by = 0; by < g[1]; ++by) for (unsigned bx = 0; bx < g[0]; ++bx)\n"
         "    for (unsigned tz = 0; tz < b[2]; ++tz) for (unsigned ty = 0; ty < b[1]; ++ty) for (unsigned tx = 0; tx < b[0]; ++tx) {\n"
         "      blockIdx = {bx, by, bz};\n      threadIdx = {tx, ty, tz};\n      " + l.kernel + "(" + args + ");\n    }\n}\n";
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

}  // namespace

EmulatedKernels::EmulatedKernels(const CudaSource& source) : launches_(source.launches) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tc-cuda-emulation-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) fail(TC_ERROR_COMPILE, "cannot create a directory for the cuda emulation in " + pattern);
  dir_ = buf.data();
  try {
    build(source);
  } catch (...) {
    remove_files();  // the destructor does not run for a constructor that throws
    throw;
  }
}

void EmulatedKernels::build(const CudaSource& source) {
  std::string text = source.text;
  for (const Launch& l : launches_) text += "\n" + entry_point(l, source.param_types);
  write_file(dir_ + "/tc_cuda_emulation.h", kEmulationHeader);
  write_file(dir_ + "/kernels.cu", text);
  const char* cxx = std::getenv("CXX");
  std::string command = std::string(cxx && *cxx ? cxx : "c++") +
                        " -std=c++17 -O1 -ffp-contract=off -fno-builtin -fPIC -shared -w -x c++ -include '" + dir_ +
                        "/tc_cuda_emulation.h' '" + dir_ + "/kernels.cu' -o '" + dir_ + "/kernels.so' 2> '" + dir_ +
                        "/compiler.log'";
  int status = std::system(command.c_str());
  if (status != 0) {
    std::string log = read_file(dir_ + "/compiler.log");
    fail(TC_ERROR_COMPILE, "the cuda emulation's host compile failed (" + command + "): " + log.substr(0, 4000));
  }
  library_ = dlopen((dir_ + "/kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) fail(TC_ERROR_COMPILE, std::string("cannot load the cuda emulation's kernels: ") + dlerror());
  for (const Launch& l : launches_) {
    void* f = dlsym(library_, (l.kernel + "_emulated").c_str());
    if (f == nullptr) fail(TC_ERROR_COMPILE, "the cuda emulation's library has no " + l.kernel + "_emulated");
    entries_.push_back(reinterpret_cast<Entry>(f));
  }
}

EmulatedKernels::~EmulatedKernels() { remove_files(); }

void EmulatedKernels::remove_files() {
  if (library_) dlclose(library_);
  library_ = nullptr;
  for (const char* f : {"/kernels.so", "/kernels.cu", "/tc_cuda_emulation.h", "/compiler.log"}) std::remove((dir_ + f).c_str());
  if (!dir_.empty()) rmdir(dir_.c_str());
}

void EmulatedKernels::run(const std::vector<void*>& params, const std::vector<LaunchDims>& dims) const {
  std::vector<void*> args(params);
  for (size_t k = 0; k < entries_.size(); ++k) entries_[k](args.data(), dims[k].grid.data(), dims[k].block.data());
}

}  // namespace tc::backends::cuda
