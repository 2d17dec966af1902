// fuzz_define.cpp — libFuzzer target for tc_define: any bytes must yield TC_OK or a status
// with a non-empty message; never a crash, hang, leak or sanitizer report.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tc/tc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string source(reinterpret_cast<const char*>(data), size);  // stops at an embedded NUL, as C callers would
  tc_program* prog = nullptr;
  int status = tc_define(&prog, source.c_str());
  if (status == TC_OK) {
    size_t n = 0;
    tc_program_num_defs(prog, &n);
    for (size_t i = 0; i < n; ++i) {
      const char* name = nullptr;
      const char* text = nullptr;
      tc_program_def_name(prog, i, &name);
      if (tc_program_describe(prog, name, &text) != TC_OK) abort();
    }
  } else if (tc_last_error_message()[0] == '\0' || status == TC_ERROR_INTERNAL) {
    abort();  // every failure must explain itself; internal errors are bugs
  }
  tc_program_destroy(prog);
  return 0;
}
