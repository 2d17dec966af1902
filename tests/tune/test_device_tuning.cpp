// test_device_tuning.cpp — the tuner on a device that is not the host (what tc_tune does with
// a GPU's tensors), through a stand-in backend: the cpu backend's kernels and knobs behind
// memory of device type kDLExtDev, with runs that only queue their work until the backend's
// wait() or a read of its memory. The tuner must allocate its outputs on the inputs' device,
// compare what it reads back, and time a run until its work is done; a kernel given host
// memory fails as a cuda kernel given host tensors does. tune.isolation=auto would run these
// candidates in a candidate runner, which cannot host a test's backend: these tests say none,
// or check that auto wanted one.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tune/options.h"
#include "ir/bind.h"
#include "ir/program.h"
#include "runtime/tensor_view.h"
#include "support/error.h"
#include "tune/tuner.h"

namespace {

using tc::backends::Backend;
using tc::backends::DeviceMemory;
using tc::backends::Kernel;
using tc::runtime::TensorView;

constexpr DLDevice kDevice{kDLExtDev, 3};

// The stand-in device's queue: work a run() queued and nothing has waited for yet.
struct Queue {
  std::vector<std::function<void()>> pending;
  int runs = 0, waits = 0;
  int runs_while_busy = 0;  // runs queued behind an unfinished run: a timing that did not wait
  bool run_pending = false;
  void finish() {
    for (auto& work : pending) work();
    pending.clear();
    run_pending = false;
  }
};
Queue queue;

class StandInMemory : public DeviceMemory {
 public:
  explicit StandInMemory(size_t bytes) : bytes_(std::max<size_t>(bytes, 1), 0) {}
  char* data() const override { return const_cast<char*>(bytes_.data()); }
  void zero() override {
    queue.pending.push_back([this] { std::fill(bytes_.begin(), bytes_.end(), 0); });
  }
  void read(char* host) const override {
    queue.finish();
    std::copy(bytes_.begin(), bytes_.end(), host);
  }
  void write(const char* host) override {
    queue.pending.push_back([this, host] { std::copy(host, host + bytes_.size(), bytes_.begin()); });
  }

 private:
  std::vector<char> bytes_;
};

class StandInKernel : public Kernel {
 public:
  explicit StandInKernel(std::unique_ptr<Kernel> cpu) : cpu_(std::move(cpu)) {}
  void run(const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
           const tc::backends::ExecutionContext&) const override {
    std::vector<TensorView> in = on_host(inputs), out = on_host(outputs);
    queue.runs++;
    if (queue.run_pending) queue.runs_while_busy++;
    queue.run_pending = true;
    queue.pending.push_back([this, in, out] { cpu_->run(in, out, tc::backends::ExecutionContext{}); });
  }
  std::string describe() const override { return "stand-in device\n" + cpu_->describe(); }

 private:
  // The views as the cpu kernel takes them; each must be in the stand-in device's memory.
  static std::vector<TensorView> on_host(std::vector<TensorView> views) {
    for (auto& v : views) {
      if (v.device.device_type != kDevice.device_type || v.device.device_id != kDevice.device_id)
        tc::fail(TC_ERROR_SHAPE, "a tensor is not in the stand-in device's memory");
      v.device = DLDevice{kDLCPU, 0};
    }
    return views;
  }
  std::unique_ptr<Kernel> cpu_;
};

class StandInBackend : public Backend {
 public:
  const char* name() const override { return "stand-in"; }
  const char* summary() const override { return "the cpu backend behind a queue on device kDLExtDev"; }
  bool accepts(DLDeviceType t) const override { return t == kDLExtDev; }
  bool runs_on_host() const override { return false; }
  tc::backends::Target default_target() const override { return tc::backends::Target{kDevice}; }
  std::string target_key(const tc::backends::Target&) const override { return "stand-in"; }
  const std::vector<tc::backends::Knob>& knobs() const override { return cpu().knobs(); }
  std::unique_ptr<Kernel> compile(const tc::ir::BoundDef& bound, const tc::backends::Target&,
                                  const tc::backends::KnobValues& options) const override {
    return std::make_unique<StandInKernel>(cpu().compile(bound, cpu().default_target(), options));
  }
  std::unique_ptr<DeviceMemory> allocate(const DLDevice& device, size_t bytes) const override {
    if (device.device_type != kDevice.device_type) return Backend::allocate(device, bytes);
    return std::make_unique<StandInMemory>(bytes);
  }
  void wait(const DLDevice&) const override {
    queue.waits++;
    queue.finish();
  }

 private:
  static const Backend& cpu() { return tc::backends::find_backend("cpu"); }
};

DLTensor tensor(float* data, int64_t* shape, DLDevice device) {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

struct Case {
  std::vector<float> a = std::vector<float>(48 * 32), b = std::vector<float>(32 * 40);
  int64_t sa[2] = {48, 32}, sb[2] = {32, 40}, sc[2] = {48, 40};
  DLTensor in[2];
  std::shared_ptr<const tc::ir::Program> program =
      tc::ir::build_program("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", "");
  tc::ir::BoundDef bound;
  std::vector<TensorView> views;

  Case() {
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 11) - 5;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 5) % 13) - 6;
    in[0] = tensor(a.data(), sa, kDevice);
    in[1] = tensor(b.data(), sb, kDevice);
    bound = tc::ir::bind(program, 0, in, 2);
    for (auto& t : in) {
      TensorView v = tc::runtime::row_major_view(static_cast<char*>(t.data), {tc::ScalarType::Float32, {t.shape[0], t.shape[1]}});
      v.device = t.device;
      views.push_back(v);
    }
  }
  // C = A B, row-major.
  std::vector<float> product() const {
    std::vector<float> c(48 * 40, 0);
    for (int i = 0; i < 48; ++i)
      for (int j = 0; j < 40; ++j)
        for (int k = 0; k < 32; ++k) c[i * 40 + j] += a[i * 32 + k] * b[k * 40 + j];
    return c;
  }
};

tc::tune::OptionSet search_options() {
  tc::tune::OptionSet o;
  const char* kv[][2] = {{"backend", "cpu"},       {"cache", "off"},          {"threads", "1"},
                         {"cpu.tile", "1x1"},      {"tune.population", "5"},  {"tune.generations", "2"},
                         {"tune.threads", "1"},    {"tune.budget", "86400"},    {"tune.isolation", "none"}};
  for (auto& p : kv) o.set(p[0], p[1]);
  return o;
}

TEST(DeviceTuning, OutputsOnTheInputsDeviceAndEveryTimedRunWaitedFor) {
  Case c;
  queue = Queue{};
  std::vector<std::string> measured;
  tc::tune::TuneHooks hooks;
  hooks.measuring = [&](const std::string& knobs) { measured.push_back(knobs); };
  StandInBackend backend;
  tc::tune::Compiled tuned = tc::tune::tune_on(backend, c.bound, search_options(), c.views, &hooks);
  EXPECT_GE(measured.size(), 3u);
  EXPECT_GT(queue.runs, 3 * static_cast<int>(measured.size()) / 2);
  EXPECT_GE(queue.waits, queue.runs - static_cast<int>(measured.size()) - 1);  // every run but the checked ones
  EXPECT_EQ(queue.runs_while_busy, 0) << "a run was queued behind work no one waited for";
  EXPECT_TRUE(queue.pending.empty());

  // The tuned kernel is the stand-in's: it computes the product into the device's memory.
  ASSERT_TRUE(tuned.kernel);
  std::unique_ptr<DeviceMemory> out = backend.allocate(kDevice, 48 * 40 * sizeof(float));
  TensorView view = tc::runtime::row_major_view(out->data(), {tc::ScalarType::Float32, {48, 40}});
  view.device = kDevice;
  tuned.kernel->run(c.views, {view}, tc::backends::ExecutionContext{});
  std::vector<float> got(48 * 40);
  out->read(reinterpret_cast<char*>(got.data()));
  EXPECT_EQ(got, c.product());
}

// tune.isolation=auto wants a candidate runner for tensors outside host memory; one that
// cannot be set up (the runner cannot host a test's backend, whose memory it cannot read)
// leaves the candidates in this process, and the result says why.
TEST(DeviceTuning, AutoIsolationOnADeviceWantsARunnerAndSaysWhyItHasNone) {
  Case c;
  queue = Queue{};
  tc::tune::OptionSet o = search_options();
  o.set("tune.isolation", "auto");
  o.set("tune.generations", "1");
  StandInBackend backend;
  tc::tune::Compiled tuned = tc::tune::tune_on(backend, c.bound, o, c.views, nullptr);
  EXPECT_NE(tuned.provenance.find("candidates ran in this process: input 'A': the stand-in backend cannot read memory of kDLExtDev"),
            std::string::npos)
      << tuned.provenance;
  o.set("tune.isolation", "process");
  try {
    tc::tune::tune_on(backend, c.bound, o, c.views, nullptr);
    ADD_FAILURE() << "tune.isolation=process tuned without a runner";
  } catch (const tc::Error& e) {
    EXPECT_EQ(e.status(), TC_ERROR_UNSUPPORTED) << e.what();
  }
}

TEST(DeviceTuning, MemoryABackendDoesNotHaveIsUnsupported) {
  StandInBackend backend;
  EXPECT_NO_THROW(backend.allocate(DLDevice{kDLCPU, 0}, 16));
  try {
    tc::backends::find_backend("cpu").allocate(kDevice, 16);
    ADD_FAILURE() << "the cpu backend gave memory of kDLExtDev";
  } catch (const tc::Error& e) {
    EXPECT_EQ(e.status(), TC_ERROR_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("the cpu backend has no memory in"), std::string::npos) << e.what();
  }
}

}  // namespace
