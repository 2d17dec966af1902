// shared_memory.cpp — the reused tiles of a kernel's read-only tensors copied to shared memory at a
// "shared" mark (cuda.shared): which tensors, the box around a tile's reads, the copy.
#include "backends/cuda/print/printer.h"

#include "backends/cuda/isl_util.h"
#include "support/error.h"

namespace tc::backends::cuda::print {

// The tensor whose model space is named `tuple`, or the number of tensors.
size_t Printer::tensor_of(const std::string& tuple) const {
  const auto& tensors = b_.def().tensors;
  for (size_t t = 0; t < tensors.size(); ++t)
    if (tuple_name(tensors[t].name) == tuple) return t;
  return tensors.size();
}

// Whether a statement among `stmts` reads tensor t at a subscript not proven in bounds.
bool Printer::read_unproven(const std::set<size_t>& stmts, size_t t) const {
  for (size_t s : stmts)
    for (const ir::Read& r : b_.def().stmts[s].reads)
      if (static_cast<size_t>(r.tensor) == t)
        for (const ir::Subscript& sub : r.subscripts)
          if (!b_.proven(sub)) return true;
  return false;
}

std::vector<Printer::SharedArray> Printer::promote(isl_ast_build* build) {
  isl::union_map schedule = isl::manage(isl_ast_build_get_schedule(build));  // instance -> the tile loops' values
  isl::union_set instances = isl::manage(isl_union_map_domain(schedule.copy()));
  std::set<std::string> written;
  std::set<size_t> stmts;
  isl::union_map writes = isl::manage(
      isl_union_map_intersect_domain(isl_union_map_copy(const_cast<isl_union_map*>(m_->writes())), instances.copy()));
  isl_union_map_foreach_map(
      writes.get(),
      [](isl_map* taken, void* user) {
        isl::map map = isl::manage(taken);
        static_cast<std::set<std::string>*>(user)->insert(isl_map_get_tuple_name(map.get(), isl_dim_out));
        return isl_stat_ok;
      },
      &written);
  isl_union_set_foreach_set(
      instances.get(),
      [](isl_set* taken, void* user) {
        isl::set set = isl::manage(taken);
        std::string name = isl_set_get_tuple_name(set.get());
        if (name[0] == 'S' || name[0] == 'I') static_cast<std::set<size_t>*>(user)->insert(std::stoul(name.substr(1)));
        return isl_stat_ok;
      },
      &stmts);
  isl::union_map reads = isl::manage(
      isl_union_map_intersect_domain(isl_union_map_copy(const_cast<isl_union_map*>(m_->reads())), instances.copy()));
  isl::union_map footprints =
      isl::manage(isl_union_map_apply_range(isl_union_map_reverse(schedule.copy()), reads.copy()));
  std::map<size_t, isl::map> by_tensor;  // tile loops -> elements read, per tensor (in the def's order)
  struct Collect {
    const Printer* p;
    std::map<size_t, isl::map>* maps;
  } collect{this, &by_tensor};
  isl_union_map_foreach_map(
      footprints.get(),
      [](isl_map* map, void* user) {
        auto* c = static_cast<Collect*>(user);
        (*c->maps)[c->p->tensor_of(isl_map_get_tuple_name(map, isl_dim_out))] = isl::manage(map);
        return isl_stat_ok;
      },
      &collect);
  std::vector<SharedArray> arrays;
  int64_t& budget = shared_budget_;
  for (auto& [t, footprint] : by_tensor) {
    if (t >= b_.def().tensors.size() || written.count(isl_map_get_tuple_name(footprint.get(), isl_dim_out))) continue;
    if (read_unproven(stmts, t)) continue;
    isl::union_map reads_t = isl::manage(isl_union_map_intersect_range(
        reads.copy(), isl_union_set_from_set(isl_set_universe(isl_space_range(isl_map_get_space(footprint.get()))))));
    if (isl_union_map_is_injective(reads_t.get()) != isl_bool_false) continue;  // no element read twice: nothing to gain
    std::optional<SharedArray> a = box_of(build, footprint.get(), t);
    if (!a) continue;
    int64_t bytes_needed = a->stored_elements() * static_cast<int64_t>(bytes(b_.def().tensors[t].type));
    if (bytes_needed > budget) continue;
    budget -= bytes_needed;
    a->name = "tc_shared" + std::to_string(shared_arrays_++);
    arrays.push_back(std::move(*a));
  }
  return arrays;
}

// The fixed-size box around `footprint`'s range (tile loops -> elements of tensor t), with
// its offset as C at the build's position; nothing if isl finds no fixed size.
std::optional<Printer::SharedArray> Printer::box_of(isl_ast_build* build, isl_map* footprint, size_t t) const {
  isl::fixed_box box = isl::manage(isl_map_get_range_simple_fixed_box_hull(footprint));
  if (box.is_null() || isl_fixed_box_is_valid(box.get()) != isl_bool_true) return std::nullopt;
  SharedArray a;
  a.tensor = t;
  isl::multi_val size = isl::manage(isl_fixed_box_get_size(box.get()));
  isl::multi_aff offset = isl::manage(isl_fixed_box_get_offset(box.get()));
  isl_size rank = isl_multi_val_size(size.get());
  for (int d = 0; d < rank; ++d) {
    isl::val v = isl::manage(isl_multi_val_get_at(size.get(), d));
    if (!isl_val_is_int(v.get()) || !isl_val_is_pos(v.get())) return std::nullopt;
    a.size.push_back(isl_val_get_num_si(v.get()));
  }
  for (int d = 0; d < rank; ++d) {
    isl_pw_aff* first = isl_pw_aff_from_aff(isl_multi_aff_get_at(offset.get(), d));
    isl_ast_expr* e = isl_ast_build_expr_from_pw_aff(build, first);
    if (!e) return std::nullopt;
    a.offset.push_back(isl_c(e));
  }
  return a;
}

// A "shared" mark: its arrays copied in, then what it marks, reading them.
void Printer::shared_scope(isl_ast_node* inner, const std::vector<SharedArray>& arrays, std::string& out, int depth) {
  shared_scope(arrays, out, depth, [&](std::string& o, int d) { walk(inner, o, d); });
}

void Printer::shared_scope(const std::vector<SharedArray>& arrays, std::string& out, int depth,
                           const std::function<void(std::string&, int)>& inner) {
  if (arrays.empty()) return inner(out, depth);
  axes_->synchronises = true;
  int d = depth + 1;
  out += pad(depth) + "{  // reused tiles in shared memory\n";
  out += pad(d) + "const " + idx_ + " tc_tid = threadIdx.x + (" + idx_ + ")blockDim.x * (threadIdx.y + (" + idx_ +
         ")blockDim.y * threadIdx.z);\n";
  out += pad(d) + "const " + idx_ + " tc_threads = (" + idx_ + ")blockDim.x * blockDim.y * blockDim.z;\n";
  out += pad(d) + "__syncthreads();  // every thread is done with the previous tile's copies\n";
  for (const SharedArray& a : arrays) {
    const ir::Tensor& t = b_.def().tensors[a.tensor];
    // Declared once at the kernel's top: a mark printed twice (hoisted()) uses one array.
    shared_declarations_.emplace(a.name, "__shared__ " + storage_type(t.type) + " " + a.name + "[" +
                                             std::to_string(a.stored_elements()) + "];  // " + t.name +
                                             (a.size.size() >= 2 && a.row() != a.size.back() ? " (rows padded)" : ""));
    copy_into_shared(a, out, d);
  }
  out += pad(d) + "__syncthreads();\n";
  active_shared_.push_back(&arrays);
  try {
    inner(out, d);
  } catch (...) {
    active_shared_.pop_back();
    throw;
  }
  active_shared_.pop_back();
  out += pad(depth) + "}\n";
}

// The copy of one array's box by all of a block's threads, each element inside the tensor.
// Where the elements are floats and the box's rows and the tensor's are multiples of 4 long,
// and at run time the tensor's address is a multiple of 16 bytes and the box's first column of
// 4, each thread copies 4 consecutive elements of a row with one 128-bit load (a float4: LDG.128
// on the GPU; the four stores go to a padded row, which is not 16-byte aligned); a row's end
// outside the tensor element by element. Else element by element.
void Printer::copy_into_shared(const SharedArray& a, std::string& out, int d) {
  const ir::Tensor& t = b_.def().tensors[a.tensor];
  const auto& shape = b_.tensors[a.tensor].shape;
  const int64_t row = a.size.empty() ? 1 : a.size.back();
  const bool vectors = t.type == ScalarType::Float32 && !a.size.empty() && row % 4 == 0 && shape.back() % 4 == 0;
  // The element's coordinates in the tensor (tc_g0, ...), from its index in the box (tc_e);
  // `inside`: every coordinate's bounds but the last one's when `vectors`.
  auto coordinates = [&](int at, bool all, std::vector<std::string>& global, std::string& inside) {
    int64_t stride = a.elements();
    for (size_t k = 0; k < a.size.size(); ++k) {
      stride /= a.size[k];
      std::string g = "tc_g" + std::to_string(k);
      out += pad(at) + "const " + idx_ + " " + g + " = " + offset_name(a, k) + " + (tc_e / " + index_literal(stride) +
             ") % " + index_literal(a.size[k]) + ";\n";
      if (all || k + 1 < a.size.size())
        inside += (inside.empty() ? "" : " && ") + g + " >= 0 && " + g + " < " + index_literal(shape[k]);
      global.push_back(g);
    }
  };
  std::string at = a.row() == row ? "tc_e" : "tc_e / " + index_literal(row) + " * " + index_literal(a.row()) + " + tc_e % " + index_literal(row);
  auto scalar_loop = [&](int at_depth) {
    out += pad(at_depth) + "for (" + idx_ + " tc_e = tc_tid; tc_e < " + index_literal(a.elements()) + "; tc_e += tc_threads) {\n";
    std::vector<std::string> global;
    std::string inside;
    coordinates(at_depth + 1, true, global, inside);
    std::string copy = a.name + "[" + at + "] = " + param(t) + "[" + offset(a.tensor, global) + "];";
    out += pad(at_depth + 1) + (inside.empty() ? copy : "if (" + inside + ") " + copy) + "\n";
    out += pad(at_depth) + "}\n";
  };
  if (!vectors) return scalar_loop(d);
  out += pad(d) + "if ((unsigned long long)" + param(t) + " % 16ull == 0 && " + offset_name(a, a.size.size() - 1) +
         " % 4 == 0) {  // rows of float4\n";
  out += pad(d + 1) + "for (" + idx_ + " tc_q = tc_tid; tc_q < " + index_literal(a.elements() / 4) +
         "; tc_q += tc_threads) {\n";
  int q = d + 2;
  out += pad(q) + "const " + idx_ + " tc_e = 4 * tc_q;\n";
  std::vector<std::string> global;
  std::string inside;
  coordinates(q, false, global, inside);
  std::string last = global.back(), first = offset(a.tensor, global);
  std::string whole = (inside.empty() ? "" : inside + " && ") + last + " >= 0 && " + last + " + 3 < " + index_literal(shape.back());
  out += pad(q) + "if (" + whole + ") {\n";
  out += pad(q + 1) + "const float4 tc_v = *(const float4*)&" + param(t) + "[" + first + "];\n";
  const char* lanes[] = {"x", "y", "z", "w"};
  for (int j = 0; j < 4; ++j)
    out += pad(q + 1) + a.name + "[" + at + (j ? " + " + std::to_string(j) : "") + "] = tc_v." + lanes[j] + ";\n";
  out += pad(q) + "} else {\n";
  out += pad(q + 1) + "for (int tc_j = 0; tc_j < 4; ++tc_j)\n";
  out += pad(q + 2) + "if (" + (inside.empty() ? "" : inside + " && ") + last + " + tc_j >= 0 && " + last + " + tc_j < " +
         index_literal(shape.back()) + ") " + a.name + "[" + at + " + tc_j] = " + param(t) + "[" + first + " + tc_j];\n";
  out += pad(q) + "}\n";
  out += pad(d + 1) + "}\n";
  out += pad(d) + "} else {\n";
  scalar_loop(d + 1);
  out += pad(d) + "}\n";
}

// The shared array that holds tensor t's reads here, if any.
const Printer::SharedArray* Printer::shared_copy(size_t t) const {
  for (auto it = active_shared_.rbegin(); it != active_shared_.rend(); ++it)
    for (const SharedArray& a : **it)
      if (a.tensor == t) return &a;
  return nullptr;
}

}  // namespace tc::backends::cuda::print
