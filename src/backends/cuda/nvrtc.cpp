// nvrtc.cpp — see nvrtc.h. The few NVRTC functions libtc calls, declared here with their C
// signatures (nvrtc.h is not needed to build).
#include "backends/cuda/nvrtc.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>

#include "backends/kept_code.h"
#include "support/dynamic_library.h"
#include "support/error.h"

namespace tc::backends::cuda {
namespace {

// The options of every compile besides the architecture (and, as one text, part of the kept
// cubins' key).
constexpr const char* kFmad = "-fmad=false";
constexpr const char* kStd = "--std=c++17";
constexpr const char* kVerbose = "--ptxas-options=-v";  // the resource report, in the program's log
const std::string kOptions = std::string(kFmad) + " " + kStd + " " + kVerbose;

// The file of the library that holds `symbol`, its size and modification time: a NVRTC
// updated in place (the same version number, other code) is another compiler for the kept
// cubins.
std::string file_identity(void* symbol) {
  Dl_info info{};
  struct stat st{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr || stat(info.dli_fname, &st) != 0) return "unknown file";
  return std::string(info.dli_fname) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtime);
}

// NVRTC opens its builtins (libnvrtc-builtins.so.<major>.<minor>) by name, where the loader
// looks: a toolkit found through CUDA_HOME or /usr/local/cuda but on no loader path (no
// ldconfig entry, no LD_LIBRARY_PATH) failed every compile ("failed to open
// libnvrtc-builtins.so.13.0"). Loaded first from NVRTC's own directory, they are found by that
// name, kept for the process as NVRTC is. Where they are not there, NVRTC searches as before.
void load_builtins_beside(const std::string& nvrtc_path, const std::string& version) {
  size_t slash = nvrtc_path.rfind('/');
  if (slash == std::string::npos) return;  // NVRTC itself came from the loader's path
  const std::string builtins = nvrtc_path.substr(0, slash + 1) + "libnvrtc-builtins.so." + version;
  dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

}  // namespace

using Program = void*;  // nvrtcProgram
using Result = int;     // nvrtcResult; 0 is NVRTC_SUCCESS

struct Nvrtc::Api {
  Result (*version)(int*, int*);
  Result (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*);
  Result (*destroy)(Program*);
  Result (*compile)(Program, int, const char* const*);
  Result (*log_size)(Program, size_t*);
  Result (*log)(Program, char*);
  Result (*cubin_size)(Program, size_t*);
  Result (*cubin)(Program, char*);
  Result (*ptx_size)(Program, size_t*);
  Result (*ptx)(Program, char*);
  const char* (*error)(Result);
};

Nvrtc::Nvrtc(const std::vector<std::string>& candidates) {
  auto api = std::make_unique<Api>();
  std::string tried;
  std::optional<LoadedLibrary> lib = load_first(
      candidates,
      [&](void* h, std::string& missing) {
        bind_function(h, "nvrtcVersion", api->version, missing);
        bind_function(h, "nvrtcCreateProgram", api->create, missing);
        bind_function(h, "nvrtcDestroyProgram", api->destroy, missing);
        bind_function(h, "nvrtcCompileProgram", api->compile, missing);
        bind_function(h, "nvrtcGetProgramLogSize", api->log_size, missing);
        bind_function(h, "nvrtcGetProgramLog", api->log, missing);
        bind_function(h, "nvrtcGetCUBINSize", api->cubin_size, missing);
        bind_function(h, "nvrtcGetCUBIN", api->cubin, missing);
        bind_function(h, "nvrtcGetPTXSize", api->ptx_size, missing);
        bind_function(h, "nvrtcGetPTX", api->ptx, missing);
        bind_function(h, "nvrtcGetErrorString", api->error, missing);
      },
      tried);
  if (!lib)
    fail(TC_ERROR_UNSUPPORTED, "NVRTC (CUDA's run-time compiler) was not found; tried:" + tried +
                                   "\n(install the CUDA toolkit, or set CUDA_HOME to where it is)");
  path_ = lib->path;
  api_ = api.release();
  load_builtins_beside(path_, version());
  identity_ = "nvrtc " + version() + "\n" + file_identity(reinterpret_cast<void*>(api_->compile)) + "\n";
}

Nvrtc::~Nvrtc() { delete api_; }

std::vector<std::string> toolkit_library_candidates(const char* variable, const std::vector<std::string>& sonames) {
  if (const char* path = std::getenv(variable); path && *path) return {path};
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/lib64/");
  dirs.push_back("/usr/local/cuda/lib64/");
  dirs.push_back("");  // the loader's path
  std::vector<std::string> out;
  for (const auto& d : dirs)
    for (const std::string& so : sonames) out.push_back(d + so);
  return out;
}

std::vector<std::string> Nvrtc::default_candidates() {
  return toolkit_library_candidates("TC_NVRTC", {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"});
}

const Nvrtc& Nvrtc::get() { return load_once<Nvrtc>(); }

std::string Nvrtc::version() const {
  int major = 0, minor = 0;
  api_->version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

Cubin Nvrtc::compile_cubin(const std::string& source, const std::string& name, const std::string& arch) const {
  static const KeptCode kept("tc-nvrtc-kept-" + std::to_string(getuid()));
  const std::string key = identity_ + "arch " + arch + "\noptions " + kOptions + "\n" + source;
  const std::string log_key = "ptxas log of\n" + key;
  std::optional<std::string> bytes = kept.find(key), log = kept.find(log_key);
  if (bytes && log) return {*bytes, *log};
  Cubin cubin = compile(source, name, arch, false);
  kept.keep(key, cubin.bytes);
  kept.keep(log_key, cubin.ptxas_log);
  return cubin;
}

std::string Nvrtc::compile_ptx(const std::string& source, const std::string& name, const std::string& arch) const {
  return compile(source, name, arch, true).bytes;
}

Cubin Nvrtc::compile(const std::string& source, const std::string& name, const std::string& arch, bool ptx) const {
  Program prog = nullptr;
  if (Result r = api_->create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr); r != 0)
    fail(TC_ERROR_COMPILE, std::string("nvrtcCreateProgram: ") + api_->error(r));
  // PTX is made for the virtual architecture (sm_90: compute_90), where ptxas does not run.
  std::string arch_option = "--gpu-architecture=" + (ptx && arch.rfind("sm_", 0) == 0 ? "compute_" + arch.substr(3) : arch);
  const char* options[] = {arch_option.c_str(), kFmad, kStd, kVerbose};
  Result r = api_->compile(prog, ptx ? 3 : 4, options);
  size_t log_size = 0;
  api_->log_size(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) api_->log(prog, &log[0]);
  while (!log.empty() && log.back() == '\0') log.pop_back();
  Cubin out;
  out.ptxas_log = log;
  if (r == 0) {
    size_t size = 0;
    (ptx ? api_->ptx_size : api_->cubin_size)(prog, &size);
    out.bytes.resize(size);
    if (size > 0) (ptx ? api_->ptx : api_->cubin)(prog, &out.bytes[0]);
    while (ptx && !out.bytes.empty() && out.bytes.back() == '\0') out.bytes.pop_back();
  } else {
    api_->destroy(&prog);
    fail(TC_ERROR_COMPILE, "NVRTC could not compile the generated CUDA C for " + arch + " (" + api_->error(r) +
                               "):\n" + log.substr(0, 4000));
  }
  api_->destroy(&prog);
  if (out.bytes.empty()) fail(TC_ERROR_COMPILE, "NVRTC produced no cubin for " + arch + " (a virtual architecture? use sm_XX)");
  return out;
}

}  // namespace tc::backends::cuda
