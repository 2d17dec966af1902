// thread_pool.h — runs the parallel loops of the generated code on at most a kernel's
// `threads` threads (Halide's own pool is one per process, sized once). The workers are
// shared by all kernels; a loop started from inside another loop's task runs serially.
#pragma once

#include <cstdint>
#include <string>

namespace tc::runtime {

using Task = int (*)(void* user_context, int index, uint8_t* closure);

// Returned by parallel_for when a worker thread could not be started (the system refused:
// out of memory or of threads); nothing of the loop ran. Task statuses are never this value
// (Halide's are small negative numbers).
constexpr int kThreadStartFailed = -1000001;

// Calls task(user_context, i, closure) for every i in [min, min + extent) on up to `threads`
// threads, the caller included. Returns 0, the status of one failing task, or
// kThreadStartFailed. Never throws.
int parallel_for(int threads, Task task, void* user_context, int min, int extent, uint8_t* closure);

// Why the calling thread's last parallel_for returned kThreadStartFailed ("thread 3 of 1023:
// Resource temporarily unavailable").
const std::string& thread_start_failure();

}  // namespace tc::runtime
