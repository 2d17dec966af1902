// schedule.cpp — see schedule.h.
#include "backends/cuda/schedule.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "backends/cuda/isl_util.h"

namespace tc::backends::cuda {
namespace {

// isl's scheduler under `fusion` (NULL where it fails or is aborted).
isl_schedule* isl_schedule_of(const PolyModel& model, Fusion fusion) {
  isl_ctx* ctx = model.ctx();
  isl_options_set_schedule_serialize_sccs(ctx, fusion == Fusion::Min ? 1 : 0);
  // Each weakly connected component scheduled whole (Pluto-style), not by isl 0.25's default
  // clustering, whose integer programs exploded on a 15-statement program (minutes in
  // isl_schedule_node_compute_wcc_clustering; differential fuzzer, seed 5150, program 152): with
  // this, 600 fuzzed programs schedule in milliseconds each. Max fusion then fuses more
  // (softmax: one band over the rows).
  isl_options_set_schedule_whole_component(ctx, 1);
  auto deps = [&] { return isl_union_map_copy(const_cast<isl_union_map*>(model.dependences())); };
  isl_schedule_constraints* sc =
      isl_schedule_constraints_on_domain(isl_union_set_copy(const_cast<isl_union_set*>(model.domains())));
  sc = isl_schedule_constraints_set_validity(sc, deps());
  sc = isl_schedule_constraints_set_proximity(sc, deps());
  sc = isl_schedule_constraints_set_coincidence(sc, deps());
  return isl_schedule_constraints_compute_schedule(sc);
}

// isl_schedule_of on a thread of its own, aborted (isl_ctx_abort, which isl checks at each
// of its operations; made for this) if it has not returned within `limit`. The model's
// context is used by one thread at a time: this one waits, then joins.
isl_schedule* isl_schedule_within(const PolyModel& model, Fusion fusion, std::chrono::milliseconds limit) {
  isl_ctx* ctx = model.ctx();
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  isl_schedule* schedule = nullptr;
  std::thread worker([&] {
    isl_schedule* s = isl_schedule_of(model, fusion);
    std::lock_guard<std::mutex> lock(mutex);
    schedule = s;
    done = true;
    finished.notify_one();
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    if (!finished.wait_for(lock, limit, [&] { return done; })) isl_ctx_abort(ctx);
  }
  worker.join();
  isl_ctx_resume(ctx);
  if (schedule == nullptr) isl_ctx_reset_error(ctx);
  return schedule;
}

// The statements in their original order, one band with no parallel member: what runs when
// the scheduler gives up (one thread runs it all: correct, slow).
isl_schedule* original_order(const PolyModel& model) {
  isl_schedule* schedule = isl_schedule_from_domain(isl_union_set_copy(const_cast<isl_union_set*>(model.domains())));
  isl_multi_union_pw_aff* order =
      isl_multi_union_pw_aff_from_union_map(isl_union_map_copy(const_cast<isl_union_map*>(model.order())));
  return isl_schedule_insert_partial_schedule(schedule, order);
}

// Per statement, the parallel (coincident) leading members, up to 3, of the outermost band that
// runs it (0 for a statement under no band).
std::map<std::string, int> parallel_loops(const isl_schedule* schedule) {
  std::map<std::string, int> loops;
  isl_union_set* domain = isl_schedule_get_domain(const_cast<isl_schedule*>(schedule));
  isl_union_set_foreach_set(
      domain,
      [](isl_set* set, void* user) {
        (*static_cast<std::map<std::string, int>*>(user))[isl_set_get_tuple_name(set)] = 0;
        isl_set_free(set);
        return isl_stat_ok;
      },
      &loops);
  isl_union_set_free(domain);
  isl_schedule_node* root = isl_schedule_get_root(const_cast<isl_schedule*>(schedule));
  isl_schedule_node_foreach_descendant_top_down(
      root,
      [](isl_schedule_node* node, void* user) -> isl_bool {
        if (isl_schedule_node_get_type(node) != isl_schedule_node_band) return isl_bool_true;
        int n = 0;
        while (n < 3 && n < isl_schedule_node_band_n_member(node) &&
               isl_schedule_node_band_member_get_coincident(node, n) == isl_bool_true)
          ++n;
        isl_union_set* statements = isl_schedule_node_get_domain(node);
        std::pair<std::map<std::string, int>*, int> at{static_cast<std::map<std::string, int>*>(user), n};
        isl_union_set_foreach_set(
            statements,
            [](isl_set* set, void* user) {
              auto* a = static_cast<std::pair<std::map<std::string, int>*, int>*>(user);
              (*a->first)[isl_set_get_tuple_name(set)] = a->second;
              isl_set_free(set);
              return isl_stat_ok;
            },
            &at);
        isl_union_set_free(statements);
        return isl_bool_false;  // the outermost band only
      },
      &loops);
  isl_schedule_node_free(root);
  return loops;
}

isl_schedule* compute_one(const PolyModel& model, Fusion fusion, std::chrono::milliseconds limit);

// Fusion::Preserve3: the max-fusion schedule where it keeps every statement's parallel loops
// (up to 3) that min fusion finds, else the min-fusion one.
isl_schedule* preserving_three_parallel_loops(const PolyModel& model, std::chrono::milliseconds limit) {
  isl_schedule* max = compute_one(model, Fusion::Max, limit);
  isl_schedule* min = compute_one(model, Fusion::Min, limit);
  std::map<std::string, int> fused = parallel_loops(max), apart = parallel_loops(min);
  bool keeps = true;
  for (const auto& [statement, loops] : apart) keeps = keeps && fused[statement] >= loops;
  isl_schedule_free(keeps ? min : max);
  return keeps ? max : min;
}

isl_schedule* compute_one(const PolyModel& model, Fusion fusion, std::chrono::milliseconds limit) {
  // isl's integer programs can still explode where constants are large: a fuzzed 3-statement
  // program (differential fuzzer, seed 4242, program 28: a transposed read, and a statement
  // whose rows are cut to 2 by a 2x2 tensor) schedules in 0.2 s at size 20 and runs for
  // minutes in isl_tab_pivot's bignum arithmetic at 23, whatever fusion, coefficient bounds or
  // operation quota (its operations are few and slow). So each attempt has a time limit; past
  // it the next is tried: the fusion asked for, then min fusion, then the original order.
  if (isl_schedule* s = isl_schedule_within(model, fusion, limit)) return s;
  if (fusion != Fusion::Min)
    if (isl_schedule* s = isl_schedule_within(model, Fusion::Min, limit)) return s;
  return checked(original_order(model), model.ctx(), "scheduling");
}

}  // namespace

isl_schedule* compute_schedule(const PolyModel& model, Fusion fusion, std::chrono::milliseconds limit) {
  if (fusion == Fusion::Preserve3) return preserving_three_parallel_loops(model, limit);
  return compute_one(model, fusion, limit);
}

std::string schedule_text(const isl_schedule* schedule) {
  return owned_text(isl_schedule_to_str(const_cast<isl_schedule*>(schedule)));
}

}  // namespace tc::backends::cuda
