// warm_start_child.cpp — a fresh process for test_warm_start.cpp: compiles the matmul of
// common/matmul_case.h (sizes from argv) through the cache directory argv[1] with tc.h only,
// runs it, and prints what the parent checks: "hit=<0|1>", the description's "cache:" line,
// and the output's values (exact: the inputs are small integers).
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "common/matmul_case.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: warm_start_child CACHE_DIR M K N\n");
    return 2;
  }
  tc_test::MatmulCase c(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]));
  tc_options* o = nullptr;
  tc_options_create(&o);
  tc_options_set(o, "cache", argv[1]);
  tc_kernel* k = nullptr;
  if (tc_compile(&k, c.program, nullptr, c.in, 2, o) != TC_OK) {
    std::printf("compile failed: %s\n", tc_last_error_message());
    return 1;
  }
  std::printf("hit=%d\n", tc_test::MatmulCase::hit(k));
  std::istringstream lines(tc_test::MatmulCase::describe(k));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("cache:", 0) == 0) std::printf("%s\n", line.c_str());
  std::printf("values:");
  for (float v : c.run(k)) std::printf(" %g", v);
  std::printf("\n");
  tc_kernel_destroy(k);
  tc_options_destroy(o);
  return 0;
}
