// run.cpp — `tc run` (compile, run, print each output's shape and checksum and the times;
// --explain: the kernel's description; --profile: its GPU profile) and `tc tune` (tc_tune with
// progress on stderr, then the winner and its times).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli.h"
#include "inputs.h"

namespace tc_cli {

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

namespace {

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

}  // namespace

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
  // The last progress report is the result's: after the search, a winner that did not hold up
  // against the start is reported once more as the start.
  std::istringstream lines(text ? text : "");
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("options:", 0) == 0 || line.rfind("tuned now:", 0) == 0) std::printf("%s\n", line.c_str());
  if (st.any)
    std::printf("best %.4g ms, default %.4g ms (speed-up %s), %lld candidates in %.1f s\n", st.last.best_ms,
                st.last.default_ms, speedup(st.last.default_ms, st.last.best_ms).c_str(),
                static_cast<long long>(st.last.candidates_done), st.last.elapsed_s);
  return 0;
}

}  // namespace tc_cli
