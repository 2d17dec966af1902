// inputs.cpp — see inputs.h; and the parsing of --size and --option (cli.h).
#include "inputs.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace tc_cli {

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

namespace {

// Deterministic pseudo-random numbers (64-bit LCG), so checksums are comparable across runs.
struct Rng {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  }
  double uniform() { return static_cast<double>(next() % (1u << 24)) / (1u << 23) - 1.0; }  // [-1, 1)
};

}  // namespace

bool HalfConverter::init() {
  if (prog_) return true;
  static const char* source =
      "def to_half(float(N) X) -> (Y) { Y(i) = float16(X(i)) }\n"
      "def to_float(float16(N) X) -> (Y) { Y(i) = float(X(i)) }\n"
      "def to_bf16(float(N) X) -> (Y) { Y(i) = bfloat16(X(i)) }\n"
      "def bf16_to_float(bfloat16(N) X) -> (Y) { Y(i) = float(X(i)) }\n";
  tc_program* prog = nullptr;
  tc_options* opts = nullptr;
  if (tc_define_named(&prog, source, "<tc float16 and bfloat16 conversion>") != TC_OK) return report(1), false;
  prog_.reset(prog);
  if (tc_options_create(&opts) != TC_OK) return report(1), false;
  opts_.reset(opts);
  if (tc_options_set(opts, "backend", "reference") != TC_OK) return report(1), false;
  return true;
}

bool HalfConverter::convert(const char* entry, DLDataType from, DLDataType to, const void* src, void* dst, int64_t n) {
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
      if (tc_compile(&raw, prog_.get(), entry, &in, 1, opts_.get()) != TC_OK) return report(1), false;
      k.reset(raw);
    }
    if (tc_run(k.get(), &in, 1, &out, 1) != TC_OK) return report(1), false;
  }
  return true;
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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

bool prepare(const char* path, const RunArgs& a, Job& j) {
  j.opts = make_options(a);
  if (!j.opts) return false;
  j.prog = load(path);
  if (!j.prog) return false;
  if (tc_program_num_params(j.prog.get(), a.entry, &j.ni, &j.no) != TC_OK) return report(1), false;
  return make_inputs(j.prog.get(), a, j.half, j.ni, j.in);
}

}  // namespace tc_cli
