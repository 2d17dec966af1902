// main.cpp — tc-profile-text, a developer's tool: the GPU profile (src/backends/cuda/profile)
// of a CUDA C text that a libtc printed, this one or an older commit's, so that the estimate can
// be compared with GPU times measured for that commit's code (docs/design/cuda-backend.md). bench/gpu_estimate.py
// --dump writes the inputs:
//   tc-profile-text NAME.cu NAME.launches NAME.tensors [--gpu h100]
// NAME.launches: "kernel GxGxG BxBxB" per launch, in order; NAME.tensors: "name bytes" per tensor
// (and "scratch bytes" for the contraction route's split sums).
// The text's own prelude (everything before its first kernel) is replaced by this libtc's,
// which keeps the older ones' functions; statement instances are marked where the printer
// opens one (a line "{" followed by one of the statement's variables, "const ... i2 = "), in
// the contraction route's text at its multiply-add ("tc_acc[tc_i][tc_j] = "), in the row
// route's inside its loops along a row ("for (int i1 = 0 + (int)threadIdx.x; ...) {") and its
// statements of one value a row ("if (tc_live && threadIdx.x == 0) {"); a text
// without fmaf counts each tc_mul (a product in a += reduction) as a multiply-add. Buffers are
// zero: data-dependent reads (gathers) all read element 0. The occupancy comes from NVRTC
// compiling the text as it was given, where NVRTC loads.
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/print_cuda.h"
#include "backends/cuda/profile/gpu_model.h"
#include "backends/cuda/profile/profile.h"
#include "support/error.h"

namespace {

using namespace tc::backends::cuda;

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) tc::fail(TC_ERROR_INVALID_ARGUMENT, "cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The text with this libtc's prelude, statement marks and (without fmaf) counted products.
std::string prepared(const std::string& text) {
  size_t first_kernel = text.find("extern \"C\" __global__");
  if (first_kernel == std::string::npos) tc::fail(TC_ERROR_INVALID_ARGUMENT, "no __global__ function in the text");
  // This libtc's own text keeps what follows its prelude (the contraction route's helpers).
  bool own = text.compare(0, cuda_prelude().size(), cuda_prelude()) == 0;
  std::string body = text.substr(own ? cuda_prelude().size() : first_kernel);
  bool counts_fma = body.find("fmaf(") != std::string::npos || body.find("fma(") != std::string::npos;
  if (!counts_fma) body = std::regex_replace(body, std::regex(R"(\btc_mul\()"), "tc_prof_mul(");
  std::istringstream in(body);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  static const std::regex variable(R"(^\s*const (long long|int) i\d+ = )");
  static const std::regex row_instance(
      R"(^\s*(for \((int|long long) i\d+ = -?\d+(ll)? \+ \((int|long long)\)threadIdx\.x; .*\) \{|if \(tc_live && threadIdx\.x == 0\) \{.*)$)");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t first = lines[i].find_first_not_of(' ');
    if (first != std::string::npos && lines[i].compare(first, 21, "tc_acc[tc_i][tc_j] = ") == 0)
      out += lines[i].substr(0, first) + "TC_STATEMENT();\n";  // the contraction route's multiply-add
    out += lines[i] + "\n";
    size_t open = lines[i].find_first_not_of(' ');
    if (open != std::string::npos && lines[i].substr(open) == "{" && i + 1 < lines.size() && std::regex_search(lines[i + 1], variable))
      out += lines[i].substr(0, open) + "  TC_STATEMENT();\n";
    else if (std::regex_match(lines[i], row_instance))
      out += lines[i].substr(0, open) + "  TC_STATEMENT();\n";  // the row route's statement instance
  }
  std::string helper = counts_fma ? "" : "template <typename T> inline T tc_prof_mul(T a, T b) { tc_prof_fma(); return tc_mul(a, b); }\n";
  return cuda_prelude() + helper + out;
}

std::array<unsigned, 3> dims(const std::string& text) {
  std::array<unsigned, 3> d{1, 1, 1};
  if (std::sscanf(text.c_str(), "%ux%ux%u", &d[0], &d[1], &d[2]) != 3) tc::fail(TC_ERROR_INVALID_ARGUMENT, "bad dims " + text);
  return d;
}

int run(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: tc-profile-text NAME.cu NAME.launches NAME.tensors [--gpu h100|h200|a100]\n");
    return 2;
  }
  std::string gpu_name = argc >= 6 && std::string(argv[4]) == "--gpu" ? argv[5] : "h100";
  const profile::Gpu& gpu = profile::gpu_named(gpu_name);
  const std::string original = read(argv[1]);
  CudaSource source;
  source.text = prepared(original);
  std::vector<LaunchDims> launch_dims;
  std::istringstream launches(read(argv[2]));
  for (std::string kernel, grid, block; launches >> kernel >> grid >> block;) {
    Launch l;
    l.kernel = kernel;
    l.synchronises = true;  // the profile runs every kernel's threads as coroutines
    source.launches.push_back(l);
    launch_dims.push_back({dims(grid), dims(block)});
  }
  std::map<std::string, size_t> bytes;
  std::istringstream tensors(read(argv[3]));
  for (std::string name; tensors >> name;) tensors >> bytes[name];
  // The parameters, from the first kernel's signature: "float* __restrict__ p_A, ...".
  size_t open = original.find('(', original.find("extern \"C\" __global__")), close = original.find(')', open);
  std::string params = original.substr(open + 1, close - open - 1);
  static const std::regex param(R"(([\w ]+\*) __restrict__ (\w+))");
  std::vector<std::vector<char>> storage;
  std::vector<void*> args;
  std::vector<profile::Region> regions;
  for (auto it = std::sregex_iterator(params.begin(), params.end(), param); it != std::sregex_iterator(); ++it) {
    std::string type = (*it)[1], name = (*it)[2];
    source.param_types.push_back(type);
    bool fault = name == "tc_fault";
    // the contraction route's scratch buffer: NAME.tensors' "scratch" line (the description's)
    auto b = bytes.find(name == "tc_scratch" ? "scratch" : name.substr(2));
    if (!fault && b == bytes.end()) tc::fail(TC_ERROR_INVALID_ARGUMENT, "no size for parameter " + name);
    storage.emplace_back(fault ? 4096 : std::max<size_t>(b->second, 1), 0);
    args.push_back(storage.back().data());
    if (!fault) regions.push_back({reinterpret_cast<uintptr_t>(args.back()), reinterpret_cast<uintptr_t>(args.back()) + b->second});
  }
  profile::Profiler profiler(source);
  std::printf("%s", profiler.run(args, regions, launch_dims, gpu, profile::occupancy_on(gpu, original, source.launches, launch_dims)).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tc-profile-text: %s\n", e.what());
    return 1;
  }
}
