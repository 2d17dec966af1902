// main.cpp — the `tc` command-line tool, a thin user of the public C API (tc.h only):
//   tc check FILE.tc                   diagnostics, then per def the inferred shapes and ranges
//   tc run FILE.tc [--entry E] --size M=64,K=32 [--backend B] [--option KEY=VALUE]...
//          [--repeat N] [--int-range LO:HI] [--explain] [--profile [--gpu NAME]]
//                                      deterministic random inputs, run, print output shapes,
//                                      a checksum and the time; --explain: compile, print the
//                                      kernel's description (tc_kernel_describe: for a cuda
//                                      cubin its registers, spills, shared memory and occupancy)
//                                      and run nothing (no GPU needed with cuda.arch=sm_NN);
//                                      --profile: a GPU profile of a cuda.emulate=1 kernel
//                                      (tc_kernel_profile) with an estimate for --gpu (h100)
//   tc tune FILE.tc [--entry E] --size M=64,K=32 [--budget S] [--cache DIR] [--backend B]
//          [--option KEY=VALUE]... [--int-range LO:HI]
//                                      the same inputs as run; tc_tune with progress on stderr
//                                      (a live line on a terminal, else one line per candidate),
//                                      then the winning options and best vs default times
//   tc cache export FILE [--cache DIR] every record of a cache (default: cache=auto's) to FILE
//   tc cache import FILE [--cache DIR] merge such a file into a cache
//   tc cache ls [--cache DIR]          one line per record: def, sizes, backend, target, best
//                                      and default ms, speed-up, history entries, date
//   tc cache show [DEF|HASH] [--cache DIR]
//                                      every field of the records (of a def, or whose key hash
//                                      starts with HASH): knobs, key text, history
//   tc cache verify [--cache DIR]      checks every record and history entry; names each
//                                      damaged one and exits 1, else exits 0
//   tc cache clear [--cache DIR]       removes every record and history entry (files stay)
//   tc cache push|pull [--remote URL] [--remote-key FILE] [--cache DIR]
//                                      copies every record and history entry to (push) or
//                                      from (pull) the remote tier; URL and FILE default to
//                                      $TC_CACHE_REMOTE and $TC_CACHE_REMOTE_KEY
//   tc cache ls|show|verify --remote [URL] [--remote-key FILE]
//                                      the same for the remote tier (verify: every record whose
//                                      signature does not verify is named, exit 1)
//   tc options                         every option key of this build: values, default, help
//   tc version
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "tc/tc.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: tc check FILE.tc\n"
               "       tc grad FILE.tc [--entry NAME]\n"
               "       tc run FILE.tc [--entry NAME] [--size M=64,K=32,...=2x3] [--backend NAME]\n"
               "                      [--option KEY=VALUE]... [--repeat N] [--int-range LO:HI]\n"
               "                      [--explain] [--profile [--gpu h100|h200|a100]]\n"
               "       tc tune FILE.tc [--entry NAME] [--size M=64,K=32] [--budget SECONDS]\n"
               "                       [--cache DIR] [--backend NAME] [--option KEY=VALUE]...\n"
               "                       [--int-range LO:HI]\n"
               "       tc cache export FILE [--cache DIR]\n"
               "       tc cache import FILE [--cache DIR]\n"
               "       tc cache ls [--cache DIR]\n"
               "       tc cache show [DEF|KEY-HASH-PREFIX] [--cache DIR]\n"
               "       tc cache verify [--cache DIR]\n"
               "       tc cache clear [--cache DIR]\n"
               "       tc cache push|pull [--remote URL] [--remote-key FILE] [--cache DIR]\n"
               "       tc cache ls|show|verify --remote [URL] [--remote-key FILE]\n"
               "                      (URL, FILE default to $TC_CACHE_REMOTE, $TC_CACHE_REMOTE_KEY)\n"
               "       tc options     (the keys --option takes: allowed values, default, help)\n"
               "       tc version\n");
  return 2;
}

// Handles destroyed on every path out (the error returns included).
struct ProgramDeleter { void operator()(tc_program* p) const { tc_program_destroy(p); } };
struct KernelDeleter { void operator()(tc_kernel* k) const { tc_kernel_destroy(k); } };
struct OptionsDeleter { void operator()(tc_options* o) const { tc_options_destroy(o); } };
using Program = std::unique_ptr<tc_program, ProgramDeleter>;
using Kernel = std::unique_ptr<tc_kernel, KernelDeleter>;
using Options = std::unique_ptr<tc_options, OptionsDeleter>;

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

Program load(const char* path) {
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
  return Program(prog);
}

int cmd_check(const char* path) {
  Program prog = load(path);
  if (!prog) return 1;
  size_t n = 0;
  tc_program_num_defs(prog.get(), &n);
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    const char* text = nullptr;
    tc_program_def_name(prog.get(), i, &name);
    tc_program_describe(prog.get(), name, &text);
    std::printf("%s", text);
  }
  return 0;
}

// `tc grad`: the generated gradient source (tc_gradient, tc_program_source).
int cmd_grad(const char* path, const char* entry) {
  Program prog = load(path);
  if (!prog) return 1;
  tc_program* grad = nullptr;
  if (tc_gradient(&grad, prog.get(), entry) != TC_OK) return report(1);
  Program owned(grad);
  const char* text = nullptr;
  tc_program_source(grad, &text);
  std::printf("%s", text);
  return 0;
}

// `tc options`: tc_option_info as a table, one option per row; help that would pass column 100
// is wrapped at word boundaries onto continuation lines indented to the help column.
int cmd_options() {
  struct Row { std::string key, values, def, help; };
  std::vector<Row> rows;
  for (size_t i = 0;; ++i) {
    const char *key = nullptr, *values = nullptr, *def = nullptr, *help = nullptr;
    if (tc_option_info(i, &key, &values, &def, &help) != TC_OK) break;
    rows.push_back({key, values, def, help});
  }
  Row head{"KEY", "VALUES", "DEFAULT", "HELP"};
  size_t wk = head.key.size(), wv = head.values.size(), wd = head.def.size();
  for (const Row& r : rows) {
    wk = std::max(wk, r.key.size());
    wv = std::max(wv, r.values.size());
    wd = std::max(wd, r.def.size());
  }
  const size_t indent = wk + wv + wd + 6, line = 100;
  const size_t width = indent + 30 > line ? 30 : line - indent;  // room for the help column
  auto print = [&](const Row& r) {
    std::printf("%-*s  %-*s  %-*s  ", static_cast<int>(wk), r.key.c_str(), static_cast<int>(wv),
                r.values.c_str(), static_cast<int>(wd), r.def.c_str());
    std::istringstream words(r.help);
    std::string word;
    size_t used = 0;
    while (words >> word) {
      if (used > 0 && used + 1 + word.size() > width) {
        std::printf("\n%*s", static_cast<int>(indent), "");
        used = 0;
      } else if (used > 0) {
        std::printf(" ");
        ++used;
      }
      std::printf("%s", word.c_str());
      used += word.size();
    }
    std::printf("\n");
  };
  print(head);
  for (const Row& r : rows) print(r);
  return 0;
}

struct RunArgs {
  const char* entry = nullptr;
  std::map<std::string, int64_t> sizes;
  std::vector<std::pair<std::string, std::string>> options;  // --backend and --option, in order
  int repeat = 1;
  bool explain = false;  // run: compile and describe, run nothing
  bool profile = false;  // run: tc_kernel_profile instead of tc_run
  const char* gpu = nullptr;
  int64_t int_lo = 0, int_hi = 2;
  // --size ...=2x3: the extents '...' stands for in a rank-polymorphic def ("...=" for none).
  std::optional<std::vector<int64_t>> ellipsis;
};

// "KEY=VALUE" (the value may be empty or contain '='; libtc checks both).
bool parse_option(const std::string& spec, RunArgs& a) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    std::fprintf(stderr, "tc: --option expects KEY=VALUE, got '%s' (tc options lists the keys)\n",
                 spec.c_str());
    return false;
  }
  a.options.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
  return true;
}

// "M=64,K=32": each value an integer in 0..2^31-1 (the largest extent libtc supports).
bool parse_size_value(const std::string& item, const char* text, int64_t& out);

// "...=2x3" (or "...=" for no dimensions): the extents of a rank-polymorphic def's '...'.
bool parse_ellipsis(const std::string& item, RunArgs& a) {
  std::vector<int64_t> extents;
  std::stringstream ss(item.substr(4));
  std::string part;
  while (std::getline(ss, part, 'x')) {
    int64_t v;
    if (!parse_size_value(item, part.c_str(), v)) return false;
    extents.push_back(v);
  }
  a.ellipsis = extents;
  return true;
}

bool parse_sizes(const std::string& spec, RunArgs& a) {
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "tc: --size expects NAME=N[,NAME=N...] (and ...=AxB for '...'), got '%s'\n", item.c_str());
      return false;
    }
    if (item.compare(0, 4, "...=") == 0) {
      if (!parse_ellipsis(item, a)) return false;
      continue;
    }
    int64_t v;
    if (!parse_size_value(item, item.c_str() + eq + 1, v)) return false;
    a.sizes[item.substr(0, eq)] = v;
  }
  return true;
}

bool parse_size_value(const std::string& item, const char* text, int64_t& out) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno == ERANGE || v < 0 || v > INT32_MAX) {
    std::fprintf(stderr, "tc: --size %s: a size must be an integer in 0..2147483647\n", item.c_str());
    return false;
  }
  out = v;
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

bool allocate(std::vector<char>& buf, size_t bytes, const char* tensor) {
  try {
    buf.assign(bytes, 0);
    return true;
  } catch (const std::exception&) {
    std::fprintf(stderr, "tc: cannot allocate %zu bytes for '%s'\n", bytes, tensor);
    return false;
  }
}

// float16 or bfloat16: 16-bit floats the tool converts through float32.
bool is_half(DLDataType dt) { return (dt.code == kDLFloat || dt.code == kDLBfloat) && dt.bits == 16; }

// float32 <-> float16 or bfloat16 of whole buffers, computed by libtc itself (the tool includes
// tc.h only): four defs on the reference backend, whose casts round to nearest even, compiled on
// first use for each chunk length (at most two lengths per direction: full chunks and the
// remainder).
class HalfConverter {
 public:
  // float32 values -> bits of `half` (float16 or bfloat16); both buffers hold n elements.
  bool to_half(DLDataType half, const void* src, void* dst, int64_t n) {
    return convert(half.code == kDLBfloat ? "to_bf16" : "to_half", kF32, half, src, dst, n);
  }
  // bits of `half` -> float32 values.
  bool to_float(DLDataType half, const void* src, void* dst, int64_t n) {
    return convert(half.code == kDLBfloat ? "bf16_to_float" : "to_float", half, kF32, src, dst, n);
  }

 private:
  static constexpr DLDataType kF32{kDLFloat, 32, 1};
  static constexpr int64_t kChunk = int64_t{1} << 24;  // elements per call (an extent is < 2^31)

  static bool fail() {
    report(1);
    return false;
  }

  bool init() {
    if (prog_) return true;
    static const char* source =
        "def to_half(float(N) X) -> (Y) { Y(i) = float16(X(i)) }\n"
        "def to_float(float16(N) X) -> (Y) { Y(i) = float(X(i)) }\n"
        "def to_bf16(float(N) X) -> (Y) { Y(i) = bfloat16(X(i)) }\n"
        "def bf16_to_float(bfloat16(N) X) -> (Y) { Y(i) = float(X(i)) }\n";
    tc_program* prog = nullptr;
    tc_options* opts = nullptr;
    if (tc_define_named(&prog, source, "<tc float16 and bfloat16 conversion>") != TC_OK) return fail();
    prog_.reset(prog);
    if (tc_options_create(&opts) != TC_OK) return fail();
    opts_.reset(opts);
    if (tc_options_set(opts, "backend", "reference") != TC_OK) return fail();
    return true;
  }

  bool convert(const char* entry, DLDataType from, DLDataType to, const void* src, void* dst, int64_t n) {
    if (n == 0) return true;
    if (!init()) return false;
    for (int64_t start = 0; start < n; start += kChunk) {
      int64_t len = std::min(kChunk, n - start);
      DLTensor in{}, out{};
      in.data = const_cast<void*>(src);
      in.byte_offset = static_cast<uint64_t>(start) * (from.bits / 8);
      in.device = {kDLCPU, 0};
      in.ndim = 1;
      in.dtype = from;
      in.shape = &len;
      out = in;
      out.data = dst;
      out.byte_offset = static_cast<uint64_t>(start) * (to.bits / 8);
      out.dtype = to;
      Kernel& k = kernels_[{entry, len}];
      if (!k) {
        tc_kernel* raw = nullptr;
        if (tc_compile(&raw, prog_.get(), entry, &in, 1, opts_.get()) != TC_OK) return fail();
        k.reset(raw);
      }
      if (tc_run(k.get(), &in, 1, &out, 1) != TC_OK) return fail();
    }
    return true;
  }

  Program prog_;
  Options opts_;
  std::map<std::pair<std::string, int64_t>, Kernel> kernels_;
};

// Fills n elements of buf; float16 and bfloat16 values are drawn as float32 and converted by libtc.
bool fill(std::vector<char>& buf, DLDataType dt, int64_t n, Rng& rng, const RunArgs& a,
          HalfConverter& half, const char* tensor) {
  std::vector<char> staging;  // float32 values of a float16 or bfloat16 tensor
  if (is_half(dt) && !allocate(staging, static_cast<size_t>(n) * 4, tensor)) return false;
  for (int64_t i = 0; i < n; ++i) {
    char* p = buf.data() + i * (dt.bits / 8);
    int64_t iv = a.int_lo + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(std::max<int64_t>(1, a.int_hi - a.int_lo)));
    double fv = rng.uniform();
    if (dt.code == kDLFloat && dt.bits == 32) { float f = static_cast<float>(fv); std::memcpy(p, &f, 4); }
    else if (dt.code == kDLFloat && dt.bits == 64) std::memcpy(p, &fv, 8);
    else if (is_half(dt)) { float f = static_cast<float>(fv); std::memcpy(staging.data() + i * 4, &f, 4); }
    else if (dt.code == TC_DL_BOOL) *p = static_cast<char>(rng.next() & 1);
    else std::memcpy(p, &iv, dt.bits / 8);  // little-endian truncation of the integer
  }
  return !is_half(dt) || half.to_half(dt, staging.data(), buf.data(), n);
}

// One element as a double (float16 buffers are converted to float32 before they are summed).
double element(const char* p, DLDataType dt) {
  switch (dt.code) {
    case kDLFloat:
      if (dt.bits == 32) { float f; std::memcpy(&f, p, 4); return f; }
      { double d; std::memcpy(&d, p, 8); return d; }
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

DLTensor make_tensor(std::vector<char>& buf, DLDataType dt, int ndim, int64_t* shape) {
  DLTensor t{};
  t.data = buf.data();
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = dt;
  t.shape = shape;
  return t;
}

// The options of --backend/--option/--budget/--cache, in order. A bad key or value fails here,
// before any input is read or allocated.
Options make_options(const RunArgs& a) {
  tc_options* raw_opts = nullptr;
  if (tc_options_create(&raw_opts) != TC_OK) {
    report(1);
    return nullptr;
  }
  Options opts(raw_opts);
  for (const auto& [key, value] : a.options)
    if (tc_options_set(opts.get(), key.c_str(), value.c_str()) != TC_OK) {
      report(1);
      return nullptr;
    }
  return opts;
}

// The entry's inputs, shaped by --size and filled deterministically (the same for run and tune).
struct Inputs {
  std::vector<std::vector<char>> bufs;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DLTensor> tensors;
};

bool make_inputs(const tc_program* prog, const RunArgs& a, HalfConverter& half, size_t ni, Inputs& in) {
  in.bufs.assign(ni, {});
  in.shapes.assign(ni, {});
  in.tensors.assign(ni, DLTensor{});
  Rng rng;
  for (size_t i = 0; i < ni; ++i) {
    tc_param_info info = TC_STRUCT_INIT(tc_param_info);
    tc_program_input_info(prog, a.entry, i, &info);
    int64_t n = 1;
    // ndim -1: a type with '...' (its dims end at the first NULL)
    int written = info.ndim;
    if (written < 0)
      for (written = 0; written < TC_MAX_NDIM && info.dims[written] != nullptr;) ++written;
    for (int d = 0; d < written; ++d) {
      const char* dim = info.dims[d];
      int64_t v;
      if (std::strcmp(dim, "...") == 0) {
        if (!a.ellipsis) {
          std::fprintf(stderr, "tc: input '%s' has '...' in its type; pass its extents with --size ...=2x3 "
                               "(or ...= for none)\n", info.name);
          return false;
        }
        for (int64_t e : *a.ellipsis) {
          in.shapes[i].push_back(e);
          if (e != 0 && n > INT64_MAX / 8 / e) n = INT64_MAX / 8;
          else n *= e;
        }
        continue;
      }
      if (dim[0] >= '0' && dim[0] <= '9') {
        v = std::strtoll(dim, nullptr, 10);
      } else if (a.sizes.count(dim)) {
        v = a.sizes.at(dim);
      } else {
        std::fprintf(stderr, "tc: size '%s' (of input '%s') is not given; pass --size %s=N\n", dim, info.name, dim);
        return false;
      }
      in.shapes[i].push_back(v);
      if (v != 0 && n > INT64_MAX / 8 / v) n = INT64_MAX / 8;  // saturate: the allocation below refuses it
      else n *= v;
    }
    if (!allocate(in.bufs[i], static_cast<size_t>(n) * info.dtype.bits / 8 + 1, info.name)) return false;
    if (!fill(in.bufs[i], info.dtype, n, rng, a, half, info.name)) return false;
    in.tensors[i] = make_tensor(in.bufs[i], info.dtype, static_cast<int>(in.shapes[i].size()), in.shapes[i].data());
  }
  return true;
}

// What run and tune start from: the options, the program, the entry's parameter counts and its
// deterministic inputs. False (with the message printed) if any of them cannot be had.
struct Job {
  Options opts;
  Program prog;
  size_t ni = 0, no = 0;
  HalfConverter half;
  Inputs in;
};

bool prepare(const char* path, const RunArgs& a, Job& j) {
  j.opts = make_options(a);
  if (!j.opts) return false;
  j.prog = load(path);
  if (!j.prog) return false;
  if (tc_program_num_params(j.prog.get(), a.entry, &j.ni, &j.no) != TC_OK) return report(1), false;
  return make_inputs(j.prog.get(), a, j.half, j.ni, j.in);
}

int cmd_run(const char* path, const RunArgs& a) {
  Job j;
  if (!prepare(path, a, j)) return 1;
  Program& prog = j.prog;
  Options& opts = j.opts;
  size_t ni = j.ni, no = j.no;
  HalfConverter& half = j.half;
  std::vector<DLTensor>& inputs = j.in.tensors;
  tc_kernel* raw_kernel = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  if (tc_compile(&raw_kernel, prog.get(), a.entry, inputs.data(), ni, opts.get()) != TC_OK)
    return report(1);
  auto t1 = std::chrono::steady_clock::now();
  Kernel k(raw_kernel);
  if (a.explain) {
    const char* text = nullptr;
    if (tc_kernel_describe(k.get(), &text) != TC_OK) return report(1);
    std::printf("%s", text ? text : "");
    return 0;
  }
  std::vector<std::vector<char>> out_bufs(no);
  std::vector<tc_tensor_info> infos(no, TC_STRUCT_INIT(tc_tensor_info));
  std::vector<DLTensor> outputs(no);
  for (size_t o = 0; o < no; ++o) {
    tc_kernel_output_info(k.get(), o, &infos[o]);
    int64_t n = 1;
    for (int d = 0; d < infos[o].ndim; ++d) n *= infos[o].shape[d];
    tc_param_info info = TC_STRUCT_INIT(tc_param_info);
    tc_program_output_info(prog.get(), a.entry, o, &info);
    if (!allocate(out_bufs[o], static_cast<size_t>(n) * infos[o].dtype.bits / 8 + 1, info.name)) return 1;
    outputs[o] = make_tensor(out_bufs[o], infos[o].dtype, infos[o].ndim, infos[o].shape);
  }
  if (a.profile) {
    const char* text = nullptr;
    if (tc_kernel_profile(k.get(), inputs.data(), ni, outputs.data(), no, a.gpu, &text) != TC_OK) return report(1);
    std::printf("%s", text);
    return 0;
  }
  double best = 1e300;
  for (int r = 0; r < a.repeat; ++r) {
    auto s = std::chrono::steady_clock::now();
    if (tc_run(k.get(), inputs.data(), ni, outputs.data(), no) != TC_OK) return report(1);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  for (size_t o = 0; o < no; ++o) {
    tc_param_info info = TC_STRUCT_INIT(tc_param_info);
    tc_program_output_info(prog.get(), a.entry, o, &info);
    int64_t n = 1;
    for (int d = 0; d < infos[o].ndim; ++d) n *= infos[o].shape[d];
    const char* data = out_bufs[o].data();
    DLDataType dt = infos[o].dtype;
    std::vector<char> widened;  // a float16 or bfloat16 output as float32, converted by libtc
    if (is_half(dt)) {
      if (!allocate(widened, static_cast<size_t>(n) * 4 + 1, info.name)) return 1;
      if (!half.to_float(dt, data, widened.data(), n)) return 1;
      data = widened.data();
      dt = {kDLFloat, 32, 1};
    }
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += element(data + i * (dt.bits / 8), dt);
    std::printf("output %s: shape (", info.name);
    for (int d = 0; d < infos[o].ndim; ++d)
      std::printf("%s%lld", d ? ", " : "", static_cast<long long>(infos[o].shape[d]));
    std::printf(")%s checksum %.9g\n", infos[o].ndim == 1 ? "," : "", sum);
  }
  std::printf("compile %.3f ms, run %.3f ms (best of %d)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(), best, a.repeat);
  return 0;
}

// `tc tune`: progress after every measured candidate. On a terminal one live line, rewritten with
// '\r'; otherwise (a pipe, a log) one plain line per candidate.
struct TuneProgress {
  bool live = false;
  bool drew = false;  // a live line is on the screen (end it with a newline)
  bool any = false;   // last holds a report
  tc_tune_progress last{};
};

std::string time_left(const tc_tune_progress& p) {
  char buf[64];
  if (p.budget_s > 0) std::snprintf(buf, sizeof buf, "%.1f s left", std::max(0.0, p.budget_s - p.elapsed_s));
  else std::snprintf(buf, sizeof buf, "%.1f s elapsed", p.elapsed_s);
  return buf;
}

std::string speedup(double default_ms, double best_ms) {
  char buf[32];
  if (default_ms > 0 && best_ms > 0) std::snprintf(buf, sizeof buf, "%.2fx", default_ms / best_ms);
  else std::snprintf(buf, sizeof buf, "-");
  return buf;
}

int on_progress(const tc_tune_progress* p, void* user) {
  auto* st = static_cast<TuneProgress*>(user);
  st->last = *p;
  st->any = true;
  char line[256];
  std::snprintf(line, sizeof line,
                "generation %d/%d, candidate %lld/%lld, best %.4g ms (default %.4g ms, %s), %s",
                p->generation, p->generations, static_cast<long long>(p->candidates_done),
                static_cast<long long>(p->candidates_planned), p->best_ms, p->default_ms,
                speedup(p->default_ms, p->best_ms).c_str(), time_left(*p).c_str());
  if (st->live) {
    std::fprintf(stderr, "\r\033[K%s", line);  // return, clear to the end of the line, redraw
    st->drew = true;
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
  return 0;
}

int cmd_tune(const char* path, const RunArgs& a) {
  Job j;
  if (!prepare(path, a, j)) return 1;
  TuneProgress st;
  st.live = isatty(fileno(stderr)) != 0;
  tc_kernel* raw_kernel = nullptr;
  int status = tc_tune(&raw_kernel, j.prog.get(), a.entry, j.in.tensors.data(), j.ni, j.opts.get(), on_progress, &st);
  if (st.drew) std::fprintf(stderr, "\n");
  if (status != TC_OK) return report(status);
  Kernel k(raw_kernel);
  const char* text = nullptr;
  if (tc_kernel_describe(k.get(), &text) != TC_OK) return report(1);
  // The options line and the "tuned now:" line of the description: the winner and its times.
  // Its times are the result's: after the search, the winner was timed against the start in
  // alternation and may have been refuted (the start is the result then), which the last
  // progress report, from the search, does not know.
  std::istringstream lines(text ? text : "");
  std::string line;
  double best_ms = -1, start_ms = -1;
  while (std::getline(lines, line)) {
    if (line.rfind("options:", 0) != 0 && line.rfind("tuned now:", 0) != 0) continue;
    std::printf("%s\n", line.c_str());
    size_t at = line.find(", best ");
    if (line.rfind("tuned now:", 0) == 0 && at != std::string::npos &&
        std::sscanf(line.c_str() + at, ", best %lf ms, start %lf ms", &best_ms, &start_ms) != 2)
      best_ms = start_ms = -1;
  }
  if (st.any && best_ms >= 0)
    std::printf("best %.4g ms, default %.4g ms (speed-up %s), %lld candidates in %.1f s\n", best_ms, start_ms,
                speedup(start_ms, best_ms).c_str(), static_cast<long long>(st.last.candidates_done),
                st.last.elapsed_s);
  return 0;
}

struct ListingDeleter { void operator()(tc_cache_listing* l) const { tc_cache_listing_destroy(l); } };
using Listing = std::unique_ptr<tc_cache_listing, ListingDeleter>;

// Which cache a `tc cache` subcommand reads or writes: the local one (dir, NULL: the default)
// and, with --remote, the remote tier (options cache.remote and cache.remote_key).
struct CacheArgs {
  const char* dir = nullptr;
  bool remote = false;
  std::string url, key;
};

// The options naming the remote tier, or null with libtc's message printed.
Options remote_options(const CacheArgs& c) {
  std::string url = c.url, key = c.key;
  if (url.empty() && std::getenv("TC_CACHE_REMOTE")) url = std::getenv("TC_CACHE_REMOTE");
  if (key.empty() && std::getenv("TC_CACHE_REMOTE_KEY")) key = std::getenv("TC_CACHE_REMOTE_KEY");
  if (url.empty()) {
    std::fprintf(stderr, "tc: no remote cache: give --remote URL or set TC_CACHE_REMOTE\n");
    return nullptr;
  }
  tc_options* raw = nullptr;
  if (tc_options_create(&raw) != TC_OK) {
    report(1);
    return nullptr;
  }
  Options opts(raw);
  if (tc_options_set(raw, "cache.remote", url.c_str()) != TC_OK ||
      (!key.empty() && tc_options_set(raw, "cache.remote_key", key.c_str()) != TC_OK)) {
    report(1);
    return nullptr;
  }
  return opts;
}

// The listing of a cache or of the remote tier, or null with libtc's message printed.
Listing list_cache(const CacheArgs& c) {
  tc_cache_listing* raw = nullptr;
  Options remote = c.remote ? remote_options(c) : nullptr;
  if (c.remote && !remote) return nullptr;
  if ((c.remote ? tc_cache_list_remote(&raw, remote.get()) : tc_cache_list(&raw, c.dir)) != TC_OK) {
    report(1);
    return nullptr;
  }
  return Listing(raw);
}

std::vector<tc_cache_entry> entries_of(const tc_cache_listing* l) {
  size_t n = 0;
  tc_cache_listing_count(l, &n);
  std::vector<tc_cache_entry> out(n, TC_STRUCT_INIT(tc_cache_entry));
  for (size_t i = 0; i < n; ++i) tc_cache_listing_entry(l, i, &out[i]);
  return out;
}

std::string number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Rows of cells, each column as wide as its widest cell, two spaces apart.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 2, ' ') : "");
    std::printf("%s\n", line.c_str());
  }
}

// "2 damaged entries (tc cache verify names them)" on stderr, when there are any.
void note_damage(const tc_cache_listing* l) {
  size_t damaged = 0;
  tc_cache_listing_damage_count(l, &damaged);
  if (damaged > 0)
    std::fprintf(stderr, "tc: %zu damaged %s in the cache (tc cache verify names %s)\n", damaged,
                 damaged == 1 ? "entry" : "entries", damaged == 1 ? "it" : "them");
}

int cmd_cache_ls(const CacheArgs& dir) {
  Listing l = list_cache(dir);
  if (!l) return 1;
  std::vector<std::vector<std::string>> rows = {
      {"DEF", "SIZES", "BACKEND", "TARGET", "BEST MS", "DEFAULT MS", "SPEED-UP", "HISTORY", "DATE"}};
  for (const tc_cache_entry& e : entries_of(l.get())) {
    if (e.candidates == 0)  // code shared by kernels (a backend's runtime): nothing was measured
      rows.push_back({e.def, std::to_string((e.artefact_bytes + 1023) / 1024) + " KiB of code", e.backend, e.target,
                      "-", "-", "-", "-", e.date});
    else
      rows.push_back({e.def, e.sizes, e.backend, e.target, number("%.4g", e.best_ms), number("%.4g", e.default_ms),
                      speedup(e.default_ms, e.best_ms), std::to_string(e.history_count), e.date});
  }
  print_table(rows);
  size_t history = 0;
  tc_cache_listing_history_total(l.get(), &history);
  std::printf("%zu record%s, %zu history entr%s\n", rows.size() - 1, rows.size() == 2 ? "" : "s", history,
              history == 1 ? "y" : "ies");
  note_damage(l.get());
  return 0;
}

// `tc cache show`: each record (of def `filter`, or whose key hash starts with it) in full.
int cmd_cache_show(const CacheArgs& dir, const char* filter) {
  Listing l = list_cache(dir);
  if (!l) return 1;
  std::vector<tc_cache_entry> all = entries_of(l.get());
  size_t shown = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const tc_cache_entry& e = all[i];
    if (filter && std::strcmp(filter, e.def) != 0 && std::strncmp(filter, e.key_hash, std::strlen(filter)) != 0)
      continue;
    std::printf("%srecord %s\n", shown++ ? "\n" : "", e.key_hash);
    std::printf("  def         %s\n  sizes       %s\n  backend     %s\n  target      %s\n  knobs       %s\n", e.def,
                e.sizes, e.backend, e.target, e.knobs);
    std::printf("  best        %.4g ms (default %.4g ms, speed-up %s)\n", e.best_ms, e.default_ms,
                speedup(e.default_ms, e.best_ms).c_str());
    std::printf("  candidates  %lld\n  date        %s\n  libtc       %s\n  family      %s\n  artefact    %lld bytes\n",
                static_cast<long long>(e.candidates), e.date, e.libtc, e.family,
                static_cast<long long>(e.artefact_bytes));
    std::istringstream key(e.key);
    std::string line;
    for (const char* label = "  key         | "; std::getline(key, line); label = "              | ")
      std::printf("%s%s\n", label, line.c_str());
    std::printf("  history     %lld entr%s\n", static_cast<long long>(e.history_count), e.history_count == 1 ? "y" : "ies");
    for (int64_t j = 0; j < e.history_count; ++j) {
      tc_cache_history_entry h = TC_STRUCT_INIT(tc_cache_history_entry);
      tc_cache_listing_history(l.get(), i, static_cast<size_t>(j), &h);
      std::string ms = h.ms > 0 ? number("%.4g ms", h.ms) : "-";
      std::printf("    %-14s  %-12s  %s  %s%s%s\n", h.outcome, ms.c_str(), h.date, h.knobs, *h.why ? ": " : "", h.why);
    }
  }
  note_damage(l.get());
  if (filter && shown == 0) {
    std::fprintf(stderr, "tc: no record of a def '%s' or with a key hash starting '%s'\n", filter, filter);
    return 1;
  }
  return 0;
}

// `tc cache verify`: one line per damaged entry and exit 1, or a summary and exit 0.
int cmd_cache_verify(const CacheArgs& dir) {
  Listing l = list_cache(dir);
  if (!l) return 1;
  size_t damaged = 0, history = 0;
  tc_cache_listing_damage_count(l.get(), &damaged);
  tc_cache_listing_history_total(l.get(), &history);
  for (size_t i = 0; i < damaged; ++i) {
    const char *id = nullptr, *why = nullptr;
    tc_cache_listing_damage(l.get(), i, &id, &why);
    std::printf("damaged: %s: %s\n", id, why);
  }
  size_t records = entries_of(l.get()).size();
  std::printf("%zu record%s and %zu history entr%s sound, %zu damaged\n", records, records == 1 ? "" : "s", history,
              history == 1 ? "y" : "ies", damaged);
  return damaged == 0 ? 0 : 1;
}

// `tc cache push|pull`: one line with the number of records the other side stored.
int cmd_cache_move(const std::string& sub, const CacheArgs& c) {
  Options remote = remote_options(c);
  if (!remote) return 1;
  size_t stored = 0;
  int status = sub == "push" ? tc_cache_push(c.dir, remote.get(), &stored) : tc_cache_pull(c.dir, remote.get(), &stored);
  if (status != TC_OK) return report(status);
  std::printf("%zu record%s stored %s\n", stored, stored == 1 ? "" : "s",
              sub == "push" ? "in the remote cache" : "in the local cache");
  return 0;
}

// `tc cache SUBCOMMAND [ARG] [--cache DIR] [--remote [URL]] [--remote-key FILE]`; without
// --cache the default directory (NULL).
int cmd_cache(int argc, char** argv) {
  if (argc < 3) return usage();
  std::string sub = argv[2];
  bool takes_file = sub == "export" || sub == "import";
  bool moves = sub == "push" || sub == "pull";
  bool lists = sub == "ls" || sub == "show" || sub == "verify";
  if (!takes_file && !moves && !lists && sub != "clear") return usage();
  const char* arg = nullptr;  // export/import: FILE (required); show: DEF or KEY-HASH prefix
  CacheArgs c;
  c.remote = moves;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cache") {
      if (i + 1 >= argc) return usage();
      c.dir = argv[++i];
    } else if (a == "--remote" && (moves || lists)) {
      c.remote = true;
      if (i + 1 < argc && std::strstr(argv[i + 1], "://")) c.url = argv[++i];
    } else if (a == "--remote-key" && (moves || lists)) {
      if (i + 1 >= argc) return usage();
      c.key = argv[++i];
    } else if (!arg && (takes_file || sub == "show") && (a.empty() || a[0] != '-' || a == "-")) {
      arg = argv[i];
    } else {
      return usage();
    }
  }
  if (lists && c.remote && c.dir) {
    std::fprintf(stderr, "tc: cache %s reads one cache: --cache DIR or --remote, not both\n", sub.c_str());
    return 2;
  }
  if (moves) return cmd_cache_move(sub, c);
  if (sub == "ls") return cmd_cache_ls(c);
  if (sub == "show") return cmd_cache_show(c, arg);
  if (sub == "verify") return cmd_cache_verify(c);
  if (sub == "clear") return tc_cache_clear(c.dir) == TC_OK ? 0 : report(1);
  if (!arg) return usage();
  int status = sub == "export" ? tc_cache_export(c.dir, arg) : tc_cache_import(c.dir, arg);
  if (status != TC_OK) return report(status);
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
  if (cmd == "options" && argc == 2) return cmd_options();
  if (cmd == "cache") return cmd_cache(argc, argv);
  if (argc < 3) return usage();
  if (cmd == "check") return cmd_check(argv[2]);
  if (cmd == "grad") {
    if (argc == 3) return cmd_grad(argv[2], nullptr);
    if (argc == 5 && std::string(argv[3]) == "--entry") return cmd_grad(argv[2], argv[4]);
    return usage();
  }
  if (cmd != "run" && cmd != "tune") return usage();
  const bool tune = cmd == "tune";
  RunArgs a;
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    if (!tune && arg == "--explain") {
      a.explain = true;
      continue;
    }
    if (!tune && arg == "--profile") {
      a.profile = true;
      continue;
    }
    const char* val = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!val) return usage();
    if (arg == "--entry") a.entry = val;
    else if (arg == "--size") { if (!parse_sizes(val, a)) return 2; }
    else if (arg == "--backend") a.options.emplace_back("backend", val);
    else if (arg == "--option") { if (!parse_option(val, a)) return 2; }
    else if (arg == "--int-range") { if (std::sscanf(val, "%lld:%lld", (long long*)&a.int_lo, (long long*)&a.int_hi) != 2) return usage(); }
    else if (!tune && arg == "--repeat") a.repeat = std::max(1, std::atoi(val));
    else if (!tune && arg == "--gpu") a.gpu = val, a.profile = true;
    else if (tune && arg == "--budget") a.options.emplace_back("tune.budget", val);
    else if (tune && arg == "--cache") a.options.emplace_back("cache", val);
    else return usage();
    ++i;
  }
  return tune ? cmd_tune(argv[2], a) : cmd_run(argv[2], a);
}
