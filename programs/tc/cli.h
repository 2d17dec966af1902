// cli.h — what the `tc` tool's files share: handles that destroy themselves, libtc's message on
// a failure, a program read from a file, the arguments of run and tune, and each command's
// entry (main.cpp reads the command line and dispatches). A user of the public API only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tc/tc.h"

namespace tc_cli {

// Handles destroyed on every path out (the error returns included).
struct ProgramDeleter { void operator()(tc_program* p) const { tc_program_destroy(p); } };
struct KernelDeleter { void operator()(tc_kernel* k) const { tc_kernel_destroy(k); } };
struct OptionsDeleter { void operator()(tc_options* o) const { tc_options_destroy(o); } };
using Program = std::unique_ptr<tc_program, ProgramDeleter>;
using Kernel = std::unique_ptr<tc_kernel, KernelDeleter>;
using Options = std::unique_ptr<tc_options, OptionsDeleter>;

int usage();
// Prints libtc's last error message; 0 for TC_OK, else 1.
int report(int status);
// The program in `path`, or null with the reason printed.
Program load(const char* path);
// "2.50x", or "-" without both times.
std::string speedup(double default_ms, double best_ms);

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

bool parse_option(const std::string& spec, RunArgs& a);
bool parse_sizes(const std::string& spec, RunArgs& a);

int cmd_run(const char* path, const RunArgs& a);   // run.cpp
int cmd_tune(const char* path, const RunArgs& a);  // run.cpp
int cmd_cache(int argc, char** argv);              // cache.cpp

}  // namespace tc_cli
