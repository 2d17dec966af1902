// measure.cpp — see measure.h.
#include "tune/measure.h"

#include <chrono>

namespace tc::tune {

using Clock = std::chrono::steady_clock;

DeviceTensors::DeviceTensors(const backends::Backend& backend, const DLDevice& device,
                             const std::vector<runtime::TensorSig>& sigs) {
  for (const auto& sig : sigs) {
    memory.push_back(backend.allocate(device, static_cast<size_t>(sig.num_elements()) * tc::bytes(sig.type)));
    views.push_back(runtime::row_major_view(memory.back()->data(), sig));
    views.back().device = device;
  }
}

void DeviceTensors::zero() {
  for (auto& m : memory) m->zero();
}

std::vector<std::string> DeviceTensors::read() const {
  std::vector<std::string> out;
  for (size_t t = 0; t < views.size(); ++t) {
    out.emplace_back(static_cast<size_t>(views[t].num_elements()) * tc::bytes(views[t].type), '\0');
    memory[t]->read(out.back().data());
  }
  return out;
}

double timed_run(const backends::Backend& backend, const backends::Kernel& kernel, const DLDevice& device,
                 const std::vector<runtime::TensorView>& inputs, const std::vector<runtime::TensorView>& outputs) {
  auto t0 = Clock::now();
  kernel.run(inputs, outputs, backends::ExecutionContext{});
  backend.wait(device);  // a cuda run only queues its launches
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Timing time_runs(const std::function<double()>& once, double cutoff_ms) {
  Timing t;
  auto start = Clock::now();
  for (int r = 0; r < 7; ++r) {
    t.ms.push_back(once());
    if (t.ms.size() == 1 && t.ms[0] > cutoff_ms) {
      t.cut_off = true;
      break;
    }
    if (std::chrono::duration<double>(Clock::now() - start).count() > 1.0) break;
  }
  return t;
}

}  // namespace tc::tune
