// handles.h — what the opaque C handles hold.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tune/options.h"
#include "cache/listing.h"
#include "ir/bind.h"
#include "runtime/validate.h"

struct tc_program {
  std::shared_ptr<const tc::ir::Program> program;
  // Strings handed out by the query functions, per def (stable: built once at tc_define).
  struct ParamStrings {
    std::vector<std::vector<std::string>> input_dims, output_dims;
  };
  std::vector<ParamStrings> strings;
};

struct tc_kernel {
  const tc::backends::Backend* backend = nullptr;  // static: the registry's
  tc::runtime::DeviceRule devices;                  // the backend's, for tc_run
  std::shared_ptr<const tc::backends::Kernel> kernel;
  std::vector<tc::runtime::ExpectedTensor> inputs, outputs;
  std::vector<int> outputs_overwritten;  // per output: tc_kernel_output_overwritten
  int cache_hit = 0;         // where its knob values came from: TC_CACHE_MISS, _HIT_LOCAL, _HIT_REMOTE
  std::string description;  // tc_kernel_describe
  mutable std::once_flag code_once;  // tc_kernel_code: made on first use (a throw: the next call tries again)
  mutable std::string code;
  mutable std::mutex profiles_mutex;       // tc_kernel_profile: each call's text, kept
  mutable std::list<std::string> profiles;
};

struct tc_options {
  tc::tune::OptionSet options;
};

struct tc_cache_listing {
  tc::cache::Listing listing;  // immutable once made: the tc_cache_entry strings point into it
};
