// candidate_runner.cpp — see candidate_runner.h: the candidate runner, the tuner's child
// process for tune.isolation=process (candidate_process.h). On its socket it reads the setup
// (program, entry, inputs), builds and binds the program as tc_tune did, and answers;
// then, per request, compiles the candidate (or loads the tuner's compiled code), runs it once
// and sends its outputs back, and times it as the tuner would in its own process (measure.h).
// After a failed run it exits: the device's state is unknown (a CUDA fault poisons the
// context). It does not compare results, choose candidates or touch the cache.

#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "tune/options.h"
#include "ir/bind.h"
#include "ir/program.h"
#include "support/error.h"
#include "tune/candidate_protocol.h"
#include "tune/candidate_runner.h"
#include "tune/measure.h"

namespace {

using namespace tc;
using tune::protocol::Reply;

// What the setup gives: the bound def and the tensors' headers; memory once the backend is known.
struct Session {
  tune::protocol::Setup setup;
  ir::BoundDef bound;
  const backends::Backend* backend = nullptr;
  DLDevice device{kDLCPU, 0};
  std::unique_ptr<tune::DeviceTensors> inputs, outputs;

  explicit Session(tune::protocol::Setup s) : setup(std::move(s)) {
    auto program = ir::build_program(setup.source, setup.source_name);
    std::vector<DLTensor> headers(setup.inputs.size());
    for (size_t i = 0; i < headers.size(); ++i) {
      auto& t = setup.inputs[i];
      headers[i].device = t.device;
      headers[i].ndim = static_cast<int32_t>(t.shape.size());
      headers[i].dtype = to_dlpack(static_cast<ScalarType>(t.type));
      headers[i].shape = t.shape.data();
    }
    bound = ir::bind(program, program->find_def(setup.def.c_str()), headers.data(), headers.size());
    if (!setup.inputs.empty()) device = setup.inputs[0].device;
  }

  // The inputs and outputs in memory of `b` on the inputs' device, at the first request.
  void place(const backends::Backend& b) {
    if (backend) return;
    backend = &b;
    inputs = std::make_unique<tune::DeviceTensors>(b, device, bound.inputs());
    for (size_t i = 0; i < setup.inputs.size(); ++i) inputs->memory[i]->write(setup.inputs[i].data.data());
    outputs = std::make_unique<tune::DeviceTensors>(b, device, bound.outputs());
  }

  // The tuner's shared code in place before the first compilation, where it can be used here
  // (else the backend builds its own when it needs it).
  void use_shared_code(const backends::Backend& b, const backends::Target& target) {
    if (setup.shared_code.empty()) return;
    try {
      b.use_shared_code(target, setup.shared_code);
    } catch (const std::exception&) {
    }
    setup.shared_code.clear();
  }

};

tune::OptionSet options_of(const std::vector<std::pair<std::string, std::string>>& values) {
  tune::OptionSet o;
  for (const auto& [key, value] : values) o.set(key, value);
  return o;
}

// One candidate; `failed_run` says the process must end after the reply.
Reply measure(Session& s, const tune::protocol::Request& q, const tune::RunnerHooks* hooks, bool& failed_run) {
  Reply r;
  std::unique_ptr<backends::Kernel> kernel;
  tune::OptionSet options;
  try {
    options = options_of(q.options);
    const backends::Backend& b = options.backend();
    backends::KnobValues values = options.values_for(b);
    backends::Target target = b.default_target();
    s.use_shared_code(b, target);
    if (!q.artefact.empty()) {
      try {
        kernel = b.load(s.bound, target, values, q.artefact);
      } catch (const std::exception&) {  // not loadable here: compiled instead
      }
    }
    if (!kernel) kernel = b.compile(s.bound, target, values);
  } catch (const std::exception& e) {
    r.outcome = Reply::CompileFailed;
    r.message = e.what();
    return r;
  }
  try {
    s.place(options.backend());  // a failure to allocate is a failed run, not a failed compilation
    if (hooks && hooks->before_run) hooks->before_run(q.knobs);
    const std::vector<runtime::TensorView>& in = s.inputs->views;
    const std::vector<runtime::TensorView>& out = s.outputs->views;
    if (q.check) {
      s.outputs->zero();
      kernel->run(in, out, backends::ExecutionContext{});
      r.outputs = s.outputs->read();
    }
    tune::Timing t = tune::time_runs([&] { return tune::timed_run(*s.backend, *kernel, s.device, in, out); },
                                     q.cutoff_ms > 0 ? q.cutoff_ms : INFINITY);
    r.times_ms = t.ms;
    r.outcome = t.cut_off ? Reply::CutOff : Reply::Measured;
  } catch (const std::exception& e) {
    r = Reply{};
    r.outcome = Reply::RunFailed;
    r.message = e.what();
    failed_run = true;
  }
  return r;
}

int serve(int fd, const tune::RunnerHooks* hooks) {
  std::string message;
  if (tune::protocol::receive(fd, message, -1) != tune::protocol::Received::Message) return 0;
  std::unique_ptr<Session> session;
  Reply ack;
  try {
    session = std::make_unique<Session>(tune::protocol::decode_setup(message));
  } catch (const std::exception& e) {
    ack.outcome = Reply::RunFailed;
    ack.message = e.what();
  }
  tune::protocol::send(fd, tune::protocol::encode(ack));
  if (!session) return 1;
  while (tune::protocol::receive(fd, message, -1) == tune::protocol::Received::Message) {
    bool failed_run = false;
    Reply r = measure(*session, tune::protocol::decode_request(message), hooks, failed_run);
    tune::protocol::send(fd, tune::protocol::encode(r));
    if (failed_run) return 0;
  }
  return 0;  // the tuner closed its end: it is done
}

}  // namespace

namespace tc::tune {

int serve_candidates(int fd, const RunnerHooks* hooks) {
  try {
    return serve(fd, hooks);
  } catch (const std::exception&) {  // the tuner is gone, or a message was damaged
    return 2;
  }
}

}  // namespace tc::tune
