// poly_model.h — the polyhedral model of a bound def, the first step of the CUDA backend's
// mapping: per statement an isl set (its iteration domain at the bound sizes), the
// access relations of its reads and its write, the original sequential order, and the
// dependences between statement instances computed by isl (flow, anti and output, through
// isl_union_access_info_compute_flow). A '!' reduction is two statements: `I<n>` sets the
// written box to the identity, `S<n>` accumulates (reading and writing its element).
// Subscripts are exact where they are affine at the bound sizes (sums of variables times
// integers, floor division and modulo by a positive integer); others (gathers, products of
// variables, casts) are over-approximated to the tensor's whole extent along that dimension.
// A scatter (computed written subscripts) writes and reads its element over-approximated the
// same way; its instances update atomically, so the dependences between two instances of one
// scatter are left out (its loops may run in parallel). Outputs that no statement writes all
// of get a statement `Z<t>` that sets the elements none writes to 0 (as every backend does).
// It does not schedule (schedule.h), tile or map (mapping.h), or print code.
#pragma once

#include <memory>
#include <string>

#include "ir/bind.h"

struct isl_ctx;
struct isl_union_set;
struct isl_union_map;

namespace tc::backends::cuda {

// The name of tensor `tensor`'s space in the model (isl's keywords get a trailing '_').
std::string tuple_name(const std::string& tensor);

// Owns its isl objects and their isl_ctx (isl_ctx is not thread-safe: one per model, so any
// number of threads may each build their own).
class PolyModel {
 public:
  explicit PolyModel(const ir::BoundDef& bound);
  ~PolyModel();
  PolyModel(const PolyModel&) = delete;
  PolyModel& operator=(const PolyModel&) = delete;

  isl_ctx* ctx() const { return ctx_; }
  const isl_union_set* domains() const { return domains_; }
  const isl_union_map* reads() const { return reads_; }
  const isl_union_map* writes() const { return writes_; }
  const isl_union_map* order() const { return order_; }          // the sequential schedule
  const isl_union_map* flow() const { return flow_; }            // read after write
  const isl_union_map* dependences() const { return deps_; }     // flow, anti and output (not within a scatter)

  // The model as isl prints it, one labelled line each (golden tests, debugging).
  std::string text() const;

 private:
  void release();  // frees every object, then the context
  isl_ctx* ctx_ = nullptr;
  isl_union_set* domains_ = nullptr;
  isl_union_map *reads_ = nullptr, *writes_ = nullptr, *order_ = nullptr, *flow_ = nullptr, *deps_ = nullptr;
};

}  // namespace tc::backends::cuda
