// c_api.cpp — the C facade: argument checks, then one call into the core per function,
// wrapped by guarded() so that no exception crosses the boundary. No pipeline logic here.
#include <algorithm>
#include <cstring>

#include "api/handles.h"
#include "api/status.h"
#include "api/tune_with_hooks.h"
#include "ir/describe.h"
#include "cache/listing.h"
#include "cache/location.h"
#include "cache/remote_transfer.h"
#include "cache/transfer.h"
#include "grad/gradient.h"
#include "tune/cached_compile.h"
#include "tune/tuner.h"
#include "support/error.h"
#include "tc/tc.h"

using tc::fail;
using tc::api::guarded;

namespace {

void require(const void* p, const char* what) {
  if (p == nullptr) fail(TC_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
}

// The bytes of a struct the library fills that the caller has (its `size`), checked: at least
// this version's struct. `what` names it, and the argument, in the message.
uint32_t caller_size(uint32_t size, size_t ours, const char* type, const char* what) {
  if (size < ours)
    fail(TC_ERROR_INVALID_ARGUMENT, std::string(what) + "->size is " + std::to_string(size) + ": set it to sizeof(" + type +
                                        ") (" + std::to_string(ours) + " bytes in this libtc) before the call");
  return size;
}

// Writes `value` into the caller's struct `dst` of `size` bytes (caller_size): the fields that
// fit, and size set to the bytes written. A later libtc whose struct has grown writes what an
// older caller's holds, and an older libtc writes its own fields of a newer caller's.
template <typename S>
void fill_sized(S* dst, uint32_t size, S value) {
  value.size = static_cast<uint32_t>(std::min<size_t>(size, sizeof(S)));
  std::memcpy(dst, &value, value.size);
}

template <typename S>
void fill_sized(S* dst, const char* type, const char* what, S value) {
  fill_sized(dst, caller_size(dst->size, sizeof(S), type, what), value);
}

void require_program(const tc_program* p) {
  require(p, "program");
  require(p->program.get(), "program");
}

// A polymorphic def's inputs as written ("N", "..."); its outputs' extents from its rank-1
// instance, with that instance's names shown as "...".
tc_program::ParamStrings param_strings(const tc::ir::Program& p, size_t d) {
  const tc::lang::Def& def = p.def(d);
  bool poly = p.polymorphic[d];
  tc_program::ParamStrings s;
  for (const auto& t : def.tensors) {
    if (t.role == tc::lang::TensorRole::Input) {
      std::vector<std::string> dims;
      const auto& declared = poly ? p.written_inputs[d][static_cast<size_t>(t.param_index)].dims : t.dims;
      for (const auto& x : declared) dims.push_back(x.text());
      s.input_dims.push_back(dims);
    } else if (t.role == tc::lang::TensorRole::Output) {
      std::vector<std::string> dims;
      for (const auto& e : p.ranges[d].extents[&t - def.tensors.data()]) {
        std::string text = tc::ir::extent_text(e);
        dims.push_back(poly ? tc::lang::show_ellipsis(text, p.ellipsis, 1) : text);
      }
      s.output_dims.push_back(dims);
    }
  }
  return s;
}

// A program handle for `source`: parsed, checked, inferred, with its query strings.
std::unique_ptr<tc_program> new_program(const std::string& source, const std::string& source_name) {
  auto prog = std::make_unique<tc_program>();
  prog->program = tc::ir::build_program(source, source_name);
  for (size_t i = 0; i < prog->program->num_defs(); ++i) prog->strings.push_back(param_strings(*prog->program, i));
  return prog;
}

int define(tc_program** out, const char* source, const char* source_name) {
  return guarded([&] {
    require(out, "out");
    require(source, "source");
    *out = new_program(source, source_name ? source_name : "").release();
  });
}

const tc::lang::TensorDecl& param_decl(const tc::lang::Def& def, tc::lang::TensorRole role, size_t index) {
  for (const auto& t : def.tensors)
    if (t.role == role && static_cast<size_t>(t.param_index) == index) return t;
  fail(TC_ERROR_INVALID_ARGUMENT, "'" + def.name + "' has no " +
                                      (role == tc::lang::TensorRole::Input ? "input" : "output") + " number " +
                                      std::to_string(index));
}

int param_info(const tc_program* program, const char* entry, size_t index, tc_param_info* info,
               tc::lang::TensorRole role) {
  return guarded([&] {
    require_program(program);
    require(info, "info");
    size_t d = program->program->find_def(entry);
    const auto& decl = param_decl(program->program->def(d), role, index);
    const auto& dims = role == tc::lang::TensorRole::Input ? program->strings[d].input_dims[index]
                                                           : program->strings[d].output_dims[index];
    tc_param_info r{};
    r.name = decl.name.c_str();
    r.dtype = tc::to_dlpack(decl.type);
    // A rank that depends on `...` is -1; dims then lists the dimensions as written, "..."
    // among them (NULL after the last).
    bool any_rank = std::find(dims.begin(), dims.end(), "...") != dims.end();
    r.ndim = any_rank ? -1 : decl.ndim;
    for (size_t i = 0; i < dims.size() && i < TC_MAX_NDIM; ++i) r.dims[i] = dims[i].c_str();
    fill_sized(info, "tc_param_info", "info", r);
  });
}

tc_tensor_info tensor_info(const tc::ir::TensorSig& sig) {
  tc_tensor_info info{};
  info.dtype = tc::to_dlpack(sig.type);
  info.ndim = static_cast<int32_t>(sig.shape.size());
  for (size_t i = 0; i < sig.shape.size(); ++i) info.shape[i] = sig.shape[i];
  return info;
}

// The directory the tc_cache_* calls name: cache_dir, or the default of option cache=auto.
std::string cache_directory(const char* cache_dir) {
  if (cache_dir != nullptr) return cache_dir;
  std::optional<std::string> dir = tc::cache::resolve_dir("auto");
  if (!dir) fail(TC_ERROR_CACHE, "no default cache directory (TC_CACHE_DIR is off, or neither XDG_CACHE_HOME nor HOME is set)");
  return *dir;
}

// The remote tier `options` name; cache.remote=off (or no options) is TC_ERROR_INVALID_ARGUMENT.
std::shared_ptr<tc::cache::Remote> named_remote(const tc_options* options) {
  auto remote = tc::tune::open_remote(options ? options->options : tc::tune::OptionSet());
  if (!remote)
    fail(TC_ERROR_INVALID_ARGUMENT, "option cache.remote is off: name the remote cache (redis://HOST:PORT[/DB] or "
                                    "unix:///PATH) and cache.remote_key");
  return remote;
}

void require_index(size_t index, size_t count, const char* what) {
  if (index >= count)
    fail(TC_ERROR_INVALID_ARGUMENT, std::string(what) + " index " + std::to_string(index) + " is out of range (there are " +
                                        std::to_string(count) + ")");
}

void require_output_index(const tc_kernel& kernel, size_t index) {
  if (index >= kernel.outputs.size())
    fail(TC_ERROR_INVALID_ARGUMENT, "output index " + std::to_string(index) + " is out of range (the kernel has " +
                                        std::to_string(kernel.outputs.size()) + ")");
}

void require_listing(const tc_cache_listing* l) { require(l, "listing"); }

// The device types `backend` accepts, as the runtime's validator checks them.
tc::runtime::DeviceRule devices_of(const tc::backends::Backend& backend) {
  return tc::runtime::DeviceRule::of(backend.name(), [&](DLDeviceType t) { return backend.accepts(t); });
}

// What tc_compile and tc_tune share: the options (or the defaults), `entry` bound to the
// inputs' signature, and a kernel handle expecting that signature.
struct Binding {
  tc::tune::OptionSet options;
  tc::ir::BoundDef bound;
  std::unique_ptr<tc_kernel> kernel;
};

Binding bind_entry(const tc_program* program, const char* entry, const DLTensor* inputs, size_t num_inputs,
                   const tc_options* options) {
  require_program(program);
  Binding b{options ? options->options : tc::tune::OptionSet(),
            tc::ir::bind(program->program, program->program->find_def(entry), inputs, num_inputs),
            std::make_unique<tc_kernel>()};
  b.kernel->inputs = b.bound.expected(tc::lang::TensorRole::Input);
  b.kernel->outputs = b.bound.expected(tc::lang::TensorRole::Output);
  b.kernel->outputs_overwritten.assign(b.kernel->outputs.size(), 0);
  const auto& tensors = b.bound.def().tensors;
  for (size_t t = 0; t < tensors.size(); ++t)
    if (tensors[t].role == tc::lang::TensorRole::Output)
      b.kernel->outputs_overwritten[static_cast<size_t>(tensors[t].param_index)] = b.bound.overwrites(t) ? 1 : 0;
  return b;
}

// Fills the kernel from what the cache path or the tuner compiled.
void finish_kernel(tc_kernel& k, tc::tune::Compiled c) {
  k.backend = &c.options.backend();
  k.devices = devices_of(*k.backend);
  k.kernel = std::move(c.kernel);
  k.cache_hit = static_cast<int>(c.tier);
  k.description = "options: " + c.options.to_string() + "\n" + c.provenance + "\n" + k.kernel->describe();
}

// tc_option_info's allowed-values texts, built once; the other strings are the declarations'
// own (static for the life of the process).
const std::vector<std::string>& values_texts() {
  static const std::vector<std::string> kTexts = [] {
    std::vector<std::string> out;
    for (const tc::backends::Knob* k : tc::tune::all_options()) out.push_back(k->values_text());
    return out;
  }();
  return kTexts;
}

// Validates the tensors against the kernel (devices its backend accepts) and runs it.
int run(const tc_kernel* kernel, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs, size_t num_outputs,
        void* stream) {
  return guarded([&] {
    require(kernel, "kernel");
    const tc::backends::Backend& backend = *kernel->backend;
    if (stream != nullptr && backend.runs_on_host())
      fail(TC_ERROR_INVALID_ARGUMENT, std::string("stream must be NULL for backend '") + backend.name() +
                                          "', which runs on the host");
    auto in = tc::runtime::validate_tensors(inputs, num_inputs, kernel->inputs, "input", kernel->devices);
    auto out = tc::runtime::validate_tensors(outputs, num_outputs, kernel->outputs, "output", kernel->devices);
    tc::runtime::check_no_overlap(in, out, kernel->inputs, kernel->outputs);
    kernel->kernel->run(in, out, tc::backends::ExecutionContext{stream});
  });
}

}  // namespace

int tc::api::tune_with_hooks(tc_kernel** out, const tc_program* program, const char* entry, const DLTensor* inputs,
                             size_t num_inputs, const tc_options* options, tc_tune_callback callback, void* user,
                             const tc::tune::TuneHooks* hooks) {
  return guarded([&] {
    require(out, "out");
    Binding b = bind_entry(program, entry, inputs, num_inputs, options);
    auto views =
        tc::runtime::validate_tensors(inputs, num_inputs, b.kernel->inputs, "input", devices_of(b.options.backend()));
    tc::tune::ProgressFn progress;
    if (callback)
      progress = [&](const tc::tune::Progress& p) {
        tc_tune_progress c{sizeof(tc_tune_progress), p.generation, p.generations, p.done,     p.planned,
                           p.best_ms,                p.default_ms,  p.elapsed_s,   p.budget_s};
        return callback(&c, user) == 0;
      };
    finish_kernel(*b.kernel, tc::tune::tune(b.bound, b.options, views, progress, hooks));
    *out = b.kernel.release();
  });
}

extern "C" {

TC_API int tc_define(tc_program** out, const char* source) { return define(out, source, nullptr); }

TC_API int tc_define_named(tc_program** out, const char* source, const char* source_name) {
  return define(out, source, source_name);
}

TC_API void tc_program_destroy(tc_program* program) { delete program; }

TC_API int tc_program_num_defs(const tc_program* program, size_t* count) {
  return guarded([&] {
    require_program(program);
    require(count, "count");
    *count = program->program->num_defs();
  });
}

TC_API int tc_program_def_name(const tc_program* program, size_t index, const char** name) {
  return guarded([&] {
    require_program(program);
    require(name, "name");
    if (index >= program->program->num_defs())
      fail(TC_ERROR_INVALID_ARGUMENT, "def index " + std::to_string(index) + " is out of range (the program has " +
                                          std::to_string(program->program->num_defs()) + ")");
    *name = program->program->def(index).name.c_str();
  });
}

TC_API int tc_program_num_params(const tc_program* program, const char* entry, size_t* num_inputs,
                                 size_t* num_outputs) {
  return guarded([&] {
    require_program(program);
    require(num_inputs, "num_inputs");
    require(num_outputs, "num_outputs");
    const auto& def = program->program->def(program->program->find_def(entry));
    *num_inputs = def.inputs.size();
    *num_outputs = def.outputs.size();
  });
}

TC_API int tc_program_input_info(const tc_program* program, const char* entry, size_t index, tc_param_info* info) {
  return param_info(program, entry, index, info, tc::lang::TensorRole::Input);
}

TC_API int tc_program_output_info(const tc_program* program, const char* entry, size_t index, tc_param_info* info) {
  return param_info(program, entry, index, info, tc::lang::TensorRole::Output);
}

TC_API int tc_program_describe(const tc_program* program, const char* entry, const char** text) {
  return guarded([&] {
    require_program(program);
    require(text, "text");
    *text = program->program->descriptions[program->program->find_def(entry)].c_str();
  });
}

TC_API int tc_program_source(const tc_program* program, const char** text) {
  return guarded([&] {
    require_program(program);
    require(text, "text");
    *text = program->program->ast.source.text.c_str();
  });
}

TC_API int tc_gradient(tc_program** out, const tc_program* program, const char* entry) {
  return guarded([&] {
    require(out, "out");
    require_program(program);
    const tc::ir::Program& forward = *program->program;
    size_t d = forward.find_def(entry);
    const std::string& name = forward.def(d).name;
    if (forward.polymorphic[d])
      fail(TC_ERROR_UNSUPPORTED, "cannot differentiate '" + name + "': it is rank-polymorphic ('...'); tc_gradient "
                                 "differentiates fixed-rank defs, so write the def for the rank you need");
    std::string text = tc::grad::gradient_source(forward.def(d), forward.ranges[d], forward.ast.source);
    try {
      *out = new_program(text, name + "_grad.tc").release();
    } catch (const tc::Error& e) {
      // The generator writes only what the language accepts; anything else is our bug.
      fail(TC_ERROR_INTERNAL, "the generated gradient of '" + name + "' does not check (a libtc bug; please report "
                              "it with this message): " + e.what() + "\n--- generated source ---\n" + text);
    }
  });
}

TC_API int tc_infer_outputs(const tc_program* program, const char* entry, const DLTensor* inputs, size_t num_inputs,
                            tc_tensor_info* outputs, size_t* num_outputs) {
  return guarded([&] {
    require_program(program);
    require(num_outputs, "num_outputs");
    size_t d = program->program->find_def(entry);
    size_t count = program->program->def(d).outputs.size();
    if (outputs == nullptr && *num_outputs == 0) {
      *num_outputs = count;
      return;
    }
    require(outputs, "outputs");
    if (*num_outputs < count) {
      size_t capacity = *num_outputs;
      *num_outputs = count;
      fail(TC_ERROR_INVALID_ARGUMENT, "outputs has capacity " + std::to_string(capacity) + " but '" +
                                          program->program->def(d).name + "' has " + std::to_string(count) + " outputs");
    }
    // The array's elements are outputs[0].size bytes apart: the caller's struct, grown or not.
    const uint32_t stride = count == 0 ? 0 : caller_size(outputs[0].size, sizeof(tc_tensor_info), "tc_tensor_info", "outputs[0]");
    if (stride % alignof(tc_tensor_info) != 0)
      fail(TC_ERROR_INVALID_ARGUMENT, "outputs[0]->size is " + std::to_string(stride) + ": not a multiple of " +
                                          std::to_string(alignof(tc_tensor_info)) + " (an array's elements are that far apart)");
    tc::ir::BoundDef b = tc::ir::bind(program->program, d, inputs, num_inputs);
    auto sigs = b.outputs();  // in declaration order
    char* base = reinterpret_cast<char*>(outputs);
    for (size_t i = 0; i < sigs.size(); ++i)
      fill_sized(reinterpret_cast<tc_tensor_info*>(base + i * stride), stride, tensor_info(sigs[i]));
    *num_outputs = count;
  });
}

TC_API int tc_options_create(tc_options** out) {
  return guarded([&] {
    require(out, "out");
    *out = new tc_options();
  });
}

TC_API int tc_options_set(tc_options* options, const char* key, const char* value) {
  return guarded([&] {
    require(options, "options");
    require(key, "key");
    require(value, "value");
    options->options.set(key, value);
  });
}

TC_API int tc_options_get(const tc_options* options, const char* key, const char** value) {
  return guarded([&] {
    require(options, "options");
    require(key, "key");
    require(value, "value");
    *value = options->options.get(key).c_str();
  });
}

TC_API void tc_options_destroy(tc_options* options) { delete options; }

TC_API int tc_compile(tc_kernel** out, const tc_program* program, const char* entry, const DLTensor* inputs,
                      size_t num_inputs, const tc_options* options) {
  return guarded([&] {
    require(out, "out");
    Binding b = bind_entry(program, entry, inputs, num_inputs, options);
    finish_kernel(*b.kernel, tc::tune::compile(b.bound, b.options));
    *out = b.kernel.release();
  });
}

TC_API int tc_tune(tc_kernel** out, const tc_program* program, const char* entry, const DLTensor* inputs,
                   size_t num_inputs, const tc_options* options, tc_tune_callback callback, void* user) {
  return tc::api::tune_with_hooks(out, program, entry, inputs, num_inputs, options, callback, user, nullptr);
}

TC_API int tc_cache_export(const char* cache_dir, const char* file) {
  return guarded([&] {
    require(file, "file");
    auto store = tc::cache::Store::open(cache_directory(cache_dir), false);
    tc::cache::export_to(*store, file);
  });
}

TC_API int tc_cache_import(const char* cache_dir, const char* file) {
  return guarded([&] {
    require(file, "file");
    auto store = tc::cache::Store::open(cache_directory(cache_dir), true);
    tc::cache::import_from(*store, file);
  });
}

TC_API int tc_cache_list(tc_cache_listing** out, const char* cache_dir) {
  return guarded([&] {
    require(out, "out");
    auto store = tc::cache::Store::open_existing(cache_directory(cache_dir));
    auto listing = std::make_unique<tc_cache_listing>();
    listing->listing = tc::cache::list(*store);
    *out = listing.release();
  });
}

TC_API int tc_cache_list_remote(tc_cache_listing** out, const tc_options* options) {
  return guarded([&] {
    require(out, "out");
    auto remote = named_remote(options);
    auto listing = std::make_unique<tc_cache_listing>();
    listing->listing = tc::cache::list(*remote);
    *out = listing.release();
  });
}

TC_API int tc_cache_push(const char* cache_dir, const tc_options* options, size_t* records) {
  return guarded([&] {
    auto remote = named_remote(options);
    auto store = tc::cache::Store::open_existing(cache_directory(cache_dir));
    size_t stored = tc::cache::push(*store, *remote).records;
    if (records) *records = stored;
  });
}

TC_API int tc_cache_pull(const char* cache_dir, const tc_options* options, size_t* records) {
  return guarded([&] {
    auto remote = named_remote(options);
    auto store = tc::cache::Store::open(cache_directory(cache_dir), true);
    size_t stored = tc::cache::pull(*store, *remote).records;
    if (records) *records = stored;
  });
}

TC_API void tc_cache_listing_destroy(tc_cache_listing* listing) { delete listing; }

TC_API int tc_cache_listing_count(const tc_cache_listing* listing, size_t* count) {
  return guarded([&] {
    require_listing(listing);
    require(count, "count");
    *count = listing->listing.entries.size();
  });
}

TC_API int tc_cache_listing_entry(const tc_cache_listing* listing, size_t index, tc_cache_entry* entry) {
  return guarded([&] {
    require_listing(listing);
    require(entry, "entry");
    require_index(index, listing->listing.entries.size(), "entry");
    const auto& e = listing->listing.entries[index];
    const tc::cache::Record& r = e.record;
    fill_sized(entry, "tc_cache_entry", "entry",
               tc_cache_entry{0, e.key_hash.c_str(), r.key.c_str(), r.def.c_str(), r.sizes.c_str(), r.backend.c_str(),
                              r.target.c_str(), r.knobs.c_str(), r.best_ms, r.default_ms, r.candidates, r.date.c_str(),
                              r.libtc.c_str(), r.family.c_str(), static_cast<int64_t>(r.artefact.size()),
                              static_cast<int64_t>(e.history.size())});
  });
}

TC_API int tc_cache_listing_history(const tc_cache_listing* listing, size_t entry, size_t index,
                                    tc_cache_history_entry* history) {
  return guarded([&] {
    require_listing(listing);
    require(history, "history");
    require_index(entry, listing->listing.entries.size(), "entry");
    const auto& all = listing->listing.entries[entry].history;
    require_index(index, all.size(), "history");
    const tc::cache::HistoryEntry& h = all[index];
    fill_sized(history, "tc_cache_history_entry", "history",
               tc_cache_history_entry{0, h.knobs.c_str(), tc::cache::outcome_text(h.outcome), h.ms, h.why.c_str(),
                                      h.date.c_str()});
  });
}

TC_API int tc_cache_listing_history_total(const tc_cache_listing* listing, size_t* count) {
  return guarded([&] {
    require_listing(listing);
    require(count, "count");
    *count = listing->listing.history_entries;
  });
}

TC_API int tc_cache_listing_damage_count(const tc_cache_listing* listing, size_t* count) {
  return guarded([&] {
    require_listing(listing);
    require(count, "count");
    *count = listing->listing.damage.size();
  });
}

TC_API int tc_cache_listing_damage(const tc_cache_listing* listing, size_t index, const char** id, const char** why) {
  return guarded([&] {
    require_listing(listing);
    require(id, "id");
    require(why, "why");
    require_index(index, listing->listing.damage.size(), "damage");
    *id = listing->listing.damage[index].id.c_str();
    *why = listing->listing.damage[index].why.c_str();
  });
}

TC_API int tc_cache_clear(const char* cache_dir) {
  return guarded([&] { tc::cache::Store::open_existing(cache_directory(cache_dir))->clear(); });
}

TC_API int tc_kernel_num_outputs(const tc_kernel* kernel, size_t* count) {
  return guarded([&] {
    require(kernel, "kernel");
    require(count, "count");
    *count = kernel->outputs.size();
  });
}

TC_API int tc_kernel_cache_hit(const tc_kernel* kernel, int* hit) {
  return guarded([&] {
    require(kernel, "kernel");
    require(hit, "hit");
    *hit = kernel->cache_hit;
  });
}

TC_API int tc_kernel_describe(const tc_kernel* kernel, const char** text) {
  return guarded([&] {
    require(kernel, "kernel");
    require(text, "text");
    *text = kernel->description.c_str();
  });
}

TC_API int tc_kernel_code(const tc_kernel* kernel, const char** text) {
  return guarded([&] {
    require(kernel, "kernel");
    require(text, "text");
    std::call_once(kernel->code_once, [&] { kernel->code = kernel->kernel->code(); });
    if (kernel->code.empty())
      fail(TC_ERROR_UNSUPPORTED, std::string("backend '") + kernel->backend->name() +
                                     "' generates no code (it interprets the IR): tc_kernel_code shows the code of "
                                     "backend=cpu (the Halide loop nest) and backend=cuda (CUDA C)");
    *text = kernel->code.c_str();
  });
}

TC_API int tc_kernel_output_info(const tc_kernel* kernel, size_t index, tc_tensor_info* info) {
  return guarded([&] {
    require(kernel, "kernel");
    require(info, "info");
    require_output_index(*kernel, index);
    fill_sized(info, "tc_tensor_info", "info", tensor_info(kernel->outputs[index].sig));
  });
}

TC_API int tc_kernel_output_overwritten(const tc_kernel* kernel, size_t index, int* overwritten) {
  return guarded([&] {
    require(kernel, "kernel");
    require(overwritten, "overwritten");
    require_output_index(*kernel, index);
    *overwritten = kernel->outputs_overwritten[index];
  });
}

TC_API int tc_kernel_profile(const tc_kernel* kernel, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                             size_t num_outputs, const char* gpu, const char** text) {
  return guarded([&] {
    require(kernel, "kernel");
    require(text, "text");
    auto in = tc::runtime::validate_tensors(inputs, num_inputs, kernel->inputs, "input", kernel->devices);
    auto out = tc::runtime::validate_tensors(outputs, num_outputs, kernel->outputs, "output", kernel->devices);
    tc::runtime::check_no_overlap(in, out, kernel->inputs, kernel->outputs);
    std::string profile = kernel->kernel->profile(in, out, gpu ? gpu : "h100");
    std::lock_guard<std::mutex> lock(kernel->profiles_mutex);
    *text = kernel->profiles.emplace_back(std::move(profile)).c_str();
  });
}

TC_API int tc_run(const tc_kernel* kernel, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                  size_t num_outputs) {
  return run(kernel, inputs, num_inputs, outputs, num_outputs, nullptr);
}

TC_API int tc_run_async(const tc_kernel* kernel, const DLTensor* inputs, size_t num_inputs, DLTensor* outputs,
                        size_t num_outputs, void* stream) {
  return run(kernel, inputs, num_inputs, outputs, num_outputs, stream);
}

TC_API int tc_option_info(size_t index, const char** key, const char** values, const char** default_value,
                          const char** help) {
  return guarded([&] {
    const auto& all = tc::tune::all_options();
    if (index >= all.size())
      fail(TC_ERROR_INVALID_ARGUMENT, "option index " + std::to_string(index) + " is out of range (this build has " +
                                          std::to_string(all.size()) + " options)");
    if (key) *key = all[index]->key.c_str();
    if (values) *values = values_texts()[index].c_str();
    if (default_value) *default_value = all[index]->default_value.c_str();
    if (help) *help = all[index]->help.c_str();
  });
}

TC_API void tc_kernel_destroy(tc_kernel* kernel) { delete kernel; }

}  // extern "C"
