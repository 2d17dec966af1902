// main.cpp — the `tc` command-line tool, a thin user of the public C API:
//   tc check FILE.tc                   diagnostics, then per def the inferred shapes and ranges
//   tc run FILE.tc [--entry E] --size M=64,K=32 [--backend B] [--repeat N] [--int-range LO:HI]
//                                      deterministic random inputs, run, print output shapes,
//                                      a checksum and the time
//   tc version
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/half.h"  // header-only float16 encoding for filling float16 inputs
#include "tc/tc.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: tc check FILE.tc\n"
               "       tc run FILE.tc [--entry NAME] [--size M=64,K=32] [--backend NAME] [--repeat N]\n"
               "                      [--int-range LO:HI]\n"
               "       tc version\n");
  return 2;
}

bool read_file(const char* path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

// The C API takes sources as C strings: a NUL byte would silently cut the program there.
bool is_text(const char* path, const std::string& source) {
  size_t nul = source.find('\0');
  if (nul == std::string::npos) return true;
  std::fprintf(stderr, "tc: '%s' contains a NUL byte at offset %zu; a TC source is text\n", path, nul);
  return false;
}

int report(int status) {
  std::fprintf(stderr, "%s\n", tc_last_error_message());
  return status == TC_OK ? 0 : 1;
}

tc_program* load(const char* path) {
  std::string source;
  if (!read_file(path, source)) {
    std::fprintf(stderr, "tc: cannot read '%s'\n", path);
    return nullptr;
  }
  if (!is_text(path, source)) return nullptr;
  tc_program* prog = nullptr;
  if (tc_define_named(&prog, source.c_str(), path) != TC_OK) {
    report(1);
    return nullptr;
  }
  return prog;
}

int cmd_check(const char* path) {
  tc_program* prog = load(path);
  if (!prog) return 1;
  size_t n = 0;
  tc_program_num_defs(prog, &n);
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    const char* text = nullptr;
    tc_program_def_name(prog, i, &name);
    tc_program_describe(prog, name, &text);
    std::printf("%s", text);
  }
  tc_program_destroy(prog);
  return 0;
}

struct RunArgs {
  const char* entry = nullptr;
  std::map<std::string, int64_t> sizes;
  std::string backend;
  int repeat = 1;
  int64_t int_lo = 0, int_hi = 2;
};

// "M=64,K=32": each value an integer in 0..2^31-1 (the largest extent libtc supports).
bool parse_sizes(const std::string& spec, std::map<std::string, int64_t>& sizes) {
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "tc: --size expects NAME=N[,NAME=N...], got '%s'\n", item.c_str());
      return false;
    }
    const char* text = item.c_str() + eq + 1;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text, &end, 10);
    if (*text == '\0' || *end != '\0' || errno == ERANGE || v < 0 || v > INT32_MAX) {
      std::fprintf(stderr, "tc: --size %s: a size must be an integer in 0..2147483647\n", item.c_str());
      return false;
    }
    sizes[item.substr(0, eq)] = v;
  }
  return true;
}

// Deterministic pseudo-random numbers (64-bit LCG), so checksums are comparable across runs.
struct Rng {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  }
  double uniform() { return static_cast<double>(next() % (1u << 24)) / (1u << 23) - 1.0; }  // [-1, 1)
};

void fill(std::vector<char>& buf, DLDataType dt, int64_t n, Rng& rng, const RunArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    char* p = buf.data() + i * (dt.bits / 8);
    int64_t iv = a.int_lo + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(std::max<int64_t>(1, a.int_hi - a.int_lo)));
    double fv = rng.uniform();
    if (dt.code == kDLFloat && dt.bits == 32) { float f = static_cast<float>(fv); std::memcpy(p, &f, 4); }
    else if (dt.code == kDLFloat && dt.bits == 64) std::memcpy(p, &fv, 8);
    else if (dt.code == kDLFloat && dt.bits == 16) { uint16_t h = tc::float_to_half(static_cast<float>(fv)); std::memcpy(p, &h, 2); }
    else if (dt.code == TC_DL_BOOL) *p = static_cast<char>(rng.next() & 1);
    else std::memcpy(p, &iv, dt.bits / 8);  // little-endian truncation of the integer
  }
}

double element(const char* p, DLDataType dt) {
  switch (dt.code) {
    case kDLFloat:
      if (dt.bits == 32) { float f; std::memcpy(&f, p, 4); return f; }
      if (dt.bits == 64) { double d; std::memcpy(&d, p, 8); return d; }
      { uint16_t h; std::memcpy(&h, p, 2); return tc::half_to_float(h); }
    case kDLInt: {
      int64_t v = 0;
      std::memcpy(&v, p, dt.bits / 8);
      int shift = 64 - dt.bits;
      return static_cast<double>((v << shift) >> shift);
    }
    default: {
      uint64_t v = 0;
      std::memcpy(&v, p, dt.bits / 8);
      return static_cast<double>(v);
    }
  }
}

bool allocate(std::vector<char>& buf, size_t bytes, const char* tensor) {
  try {
    buf.assign(bytes, 0);
    return true;
  } catch (const std::exception&) {
    std::fprintf(stderr, "tc: cannot allocate %zu bytes for '%s'\n", bytes, tensor);
    return false;
  }
}

DLTensor make_tensor(std::vector<char>& buf, DLDataType dt, int ndim, int64_t* shape) {
  DLTensor t{};
  t.data = buf.data();
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = dt;
  t.shape = shape;
  return t;
}

int cmd_run(const char* path, const RunArgs& a) {
  tc_program* prog = load(path);
  if (!prog) return 1;
  size_t ni = 0, no = 0;
  if (tc_program_num_params(prog, a.entry, &ni, &no) != TC_OK) return report(1);
  std::vector<std::vector<char>> in_bufs(ni);
  std::vector<std::vector<int64_t>> in_shapes(ni);
  std::vector<DLTensor> inputs(ni);
  Rng rng;
  for (size_t i = 0; i < ni; ++i) {
    tc_param_info info;
    tc_program_input_info(prog, a.entry, i, &info);
    int64_t n = 1;
    for (int d = 0; d < info.ndim; ++d) {
      const char* dim = info.dims[d];
      int64_t v;
      if (dim[0] >= '0' && dim[0] <= '9') {
        v = std::strtoll(dim, nullptr, 10);
      } else if (a.sizes.count(dim)) {
        v = a.sizes.at(dim);
      } else {
        std::fprintf(stderr, "tc: size '%s' (of input '%s') is not given; pass --size %s=N\n", dim, info.name, dim);
        return 1;
      }
      in_shapes[i].push_back(v);
      if (v != 0 && n > INT64_MAX / 8 / v) n = INT64_MAX / 8;  // saturate: the allocation below refuses it
      else n *= v;
    }
    if (!allocate(in_bufs[i], static_cast<size_t>(n) * info.dtype.bits / 8 + 1, info.name)) return 1;
    fill(in_bufs[i], info.dtype, n, rng, a);
    inputs[i] = make_tensor(in_bufs[i], info.dtype, info.ndim, in_shapes[i].data());
  }
  tc_options* opts = nullptr;
  tc_options_create(&opts);
  if (!a.backend.empty() && tc_options_set(opts, "backend", a.backend.c_str()) != TC_OK) return report(1);
  tc_kernel* k = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  if (tc_compile(&k, prog, a.entry, inputs.data(), ni, opts) != TC_OK) return report(1);
  auto t1 = std::chrono::steady_clock::now();
  std::vector<std::vector<char>> out_bufs(no);
  std::vector<tc_tensor_info> infos(no);
  std::vector<DLTensor> outputs(no);
  for (size_t o = 0; o < no; ++o) {
    tc_kernel_output_info(k, o, &infos[o]);
    int64_t n = 1;
    for (int d = 0; d < infos[o].ndim; ++d) n *= infos[o].shape[d];
    tc_param_info info;
    tc_program_output_info(prog, a.entry, o, &info);
    if (!allocate(out_bufs[o], static_cast<size_t>(n) * infos[o].dtype.bits / 8 + 1, info.name)) return 1;
    outputs[o] = make_tensor(out_bufs[o], infos[o].dtype, infos[o].ndim, infos[o].shape);
  }
  double best = 1e300;
  for (int r = 0; r < a.repeat; ++r) {
    auto s = std::chrono::steady_clock::now();
    if (tc_run(k, inputs.data(), ni, outputs.data(), no) != TC_OK) return report(1);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  for (size_t o = 0; o < no; ++o) {
    tc_param_info info;
    tc_program_output_info(prog, a.entry, o, &info);
    int64_t n = 1;
    std::printf("output %s: shape (", info.name);
    for (int d = 0; d < infos[o].ndim; ++d) {
      std::printf("%s%lld", d ? ", " : "", static_cast<long long>(infos[o].shape[d]));
      n *= infos[o].shape[d];
    }
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += element(out_bufs[o].data() + i * (infos[o].dtype.bits / 8), infos[o].dtype);
    std::printf(")%s checksum %.9g\n", infos[o].ndim == 1 ? "," : "", sum);
  }
  std::printf("compile %.3f ms, run %.3f ms (best of %d)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(), best, a.repeat);
  tc_kernel_destroy(k);
  tc_options_destroy(opts);
  tc_program_destroy(prog);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string cmd = argv[1];
  if (cmd == "version") {
    std::printf("libtc %s\n", tc_version_string());
    return 0;
  }
  if (argc < 3) return usage();
  if (cmd == "check") return cmd_check(argv[2]);
  if (cmd != "run") return usage();
  RunArgs a;
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    const char* val = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!val) return usage();
    if (arg == "--entry") a.entry = val;
    else if (arg == "--size") { if (!parse_sizes(val, a.sizes)) return 2; }
    else if (arg == "--backend") a.backend = val;
    else if (arg == "--repeat") a.repeat = std::max(1, std::atoi(val));
    else if (arg == "--int-range") { if (std::sscanf(val, "%lld:%lld", (long long*)&a.int_lo, (long long*)&a.int_hi) != 2) return usage(); }
    else return usage();
    ++i;
  }
  return cmd_run(argv[2], a);
}
