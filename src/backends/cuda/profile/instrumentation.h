// instrumentation.h — the emulation built to be profiled: the kernel's text, printed with a
// TC_STATEMENT(s) mark before each statement instance, compiled for the host with
// -fsanitize=thread, which makes the compiler call __tsan_read4(address) and the like before
// each memory access of the kernel's code; the header defines those functions (no sanitizer
// runtime is linked) to pass the accesses outside the running thread's own stack to a
// recorder (trace.h), with the call site, the thread, the size and whether it writes; the
// marks and fused multiply-adds are counted per thread. The emulation's own code (its
// coroutines, the entry points) is not instrumented (TC_EMU_FN). The entry point
// `<kernel>_profiled` runs a given list of blocks, calling the recorder each time a warp's
// threads have all run to their next barrier (or their end) and after each block.
// It does not decide which blocks run (profile.cpp) or what the accesses mean (trace.h).
#pragma once

#include "backends/cuda/emulate.h"

namespace tc::backends::cuda::profile {

// Statement instances marked (print_cuda.h's PrintOptions::statement_marks): removes the mark
// lines, which gives back the text printed without them.
std::string without_statement_marks(const std::string& text);

// The variant of the emulation that records (emulate.h).
const EmulationVariant& instrumented();

// What `<kernel>_profiled` is given: the recorder and its callbacks.
struct Sink {
  void* recorder;
  void (*access)(void* recorder, const void* site, const void* address, unsigned size, int write, unsigned thread);
  void (*statement)(void* recorder, unsigned thread);
  void (*fma)(void* recorder, unsigned thread);
  void (*warp_done)(void* recorder, unsigned warp);  // its threads are at a barrier or done
  void (*block_done)(void* recorder);
};

// int <kernel>_profiled(args, grid, block, blocks, number of blocks, sink): runs the listed
// blocks (linear indices, x fastest); returns 1 where a block's threads diverged at a barrier.
using ProfiledEntry = int (*)(void**, const unsigned*, const unsigned*, const unsigned*, unsigned, const Sink*);

}  // namespace tc::backends::cuda::profile
