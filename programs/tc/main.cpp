// main.cpp — the `tc` command-line tool, a thin user of the public C API (tc.h only); this file
// reads the command line and runs check, grad and options; inputs.cpp, run.cpp and cache.cpp the
// rest:
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace tc_cli {

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

std::string speedup(double default_ms, double best_ms) {
  char buf[32];
  if (default_ms > 0 && best_ms > 0) std::snprintf(buf, sizeof buf, "%.2fx", default_ms / best_ms);
  else std::snprintf(buf, sizeof buf, "-");
  return buf;
}

namespace {

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

}  // namespace

}  // namespace tc_cli

using namespace tc_cli;

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
