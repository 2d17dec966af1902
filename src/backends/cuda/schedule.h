// schedule.h — isl's scheduler over a def's polyhedral model: validity and
// proximity from every dependence, coincidence (loops that may run in parallel) from them too,
// under one of the paper's fusion strategies; within a time limit, else a simpler schedule.
// It does not tile or map (mapping.h).
#pragma once

#include <chrono>
#include <string>

#include "backends/cuda/poly_model.h"

struct isl_schedule;

namespace tc::backends::cuda {

// How the scheduler may fuse statements (cuda.fusion): Max is isl's own algorithm, which fuses
// wherever the dependences allow (softmax's row reductions and exponentials share one band over
// the rows); Min keeps each strongly connected component of the dependence graph in a band of
// its own (isl's serialize_sccs). Preserve3 is the paper's third strategy, fusion that keeps
// three parallel loops, decided for the whole def (the original TC decided each merge inside
// its patched isl, which Debian's isl 0.25 cannot): both schedules are computed, and Max is
// kept if every statement's outermost band has as many parallel (coincident) leading loops,
// up to 3, as under Min; else Min.
enum class Fusion { Max, Min, Preserve3 };

// A new schedule of the model's statements; the caller frees it (isl_schedule_free). isl's
// scheduler runs on a thread of its own for at most `limit` per attempt (its integer programs
// can explode; cuda.schedule_time, default kScheduleTimeLimit): past it, min fusion is tried,
// then the statements' original order (one band, no parallel loop: one thread runs the kernel).
constexpr std::chrono::milliseconds kScheduleTimeLimit{5000};
isl_schedule* compute_schedule(const PolyModel& model, Fusion fusion,
                               std::chrono::milliseconds limit = kScheduleTimeLimit);

// A schedule tree as isl prints it (golden tests, debugging).
std::string schedule_text(const isl_schedule* schedule);

}  // namespace tc::backends::cuda
