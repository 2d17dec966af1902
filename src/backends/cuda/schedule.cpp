// schedule.cpp — see schedule.h.
#include "backends/cuda/schedule.h"

#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "backends/cuda/isl_util.h"

namespace tc::backends::cuda {

isl_schedule* compute_schedule(const PolyModel& model, Fusion fusion) {
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
  return checked(isl_schedule_constraints_compute_schedule(sc), ctx, "scheduling");
}

std::string schedule_text(const isl_schedule* schedule) {
  return owned_text(isl_schedule_to_str(const_cast<isl_schedule*>(schedule)));
}

}  // namespace tc::backends::cuda
