// measure.h — how one candidate is timed, the same in the tuner's process and in its candidate
// runner: a run lasts until the backend's wait() says its queued work is done; up to 7 runs,
// cut off after the first when it is slower than a bound (5x the best so far), stopped when
// the runs have taken a second. And the tensors a candidate runs on, in its device's memory.
// It does not check results or decide what is best.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace tc::tune {

// Tensors of these signatures, row-major, in memory of `device` that `backend` allocates (a
// GPU's for cuda): the tuner's outputs, the runner's inputs and outputs.
struct DeviceTensors {
  std::vector<std::unique_ptr<backends::DeviceMemory>> memory;
  std::vector<runtime::TensorView> views;

  DeviceTensors(const backends::Backend& backend, const DLDevice& device, const std::vector<runtime::TensorSig>& sigs);
  void zero();
  std::vector<std::string> read() const;  // every tensor's bytes, on the host
};

// One run of `kernel` on these tensors (on `device`), in milliseconds, its work done.
double timed_run(const backends::Backend& backend, const backends::Kernel& kernel, const DLDevice& device,
                 const std::vector<runtime::TensorView>& inputs, const std::vector<runtime::TensorView>& outputs);

struct Timing {
  std::vector<double> ms;  // in the order run
  bool cut_off = false;    // the first run was slower than the bound
};

// Runs `once` (one run's milliseconds) as described above; cutoff_ms: INFINITY for no bound.
Timing time_runs(const std::function<double()>& once, double cutoff_ms);

}  // namespace tc::tune
