// thread_pool.h — runs the parallel loops of the generated code on at most a kernel's
// `threads` threads (Halide's own pool is one per process, sized once). The workers are
// shared by all kernels; a loop started from inside another loop's task runs serially.
#pragma once

#include <cstdint>

namespace tc::backends::cpu {

using Task = int (*)(void* user_context, int index, uint8_t* closure);

// Calls task(user_context, i, closure) for every i in [min, min + extent) on up to `threads`
// threads, the caller included. Returns 0, or the status of one failing task.
int parallel_for(int threads, Task task, void* user_context, int min, int extent, uint8_t* closure);

}  // namespace tc::backends::cpu
