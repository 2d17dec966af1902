// walk.cpp — isl's AST of the mapped schedule walked into kernels: the AST built with callbacks at
// marks and statements (which block and thread owns what), one __global__ function per kernel
// mark, loops strided over their owners, ownership guards. What a statement prints is
// statements.cpp's.
#include "backends/cuda/print/printer.h"

#include "backends/cuda/isl_util.h"
#include "support/error.h"

namespace tc::backends::cuda::print {

CudaSource Printer::run(const isl_schedule* mapped) {
  isl_ast_build* build = isl_ast_build_alloc(m_->ctx());
  build = isl_ast_build_set_before_each_mark(build, &Printer::enter_mark, this);
  build = isl_ast_build_set_after_each_mark(build, &Printer::leave_mark, this);
  build = isl_ast_build_set_at_each_domain(build, &Printer::at_statement, this);
  isl::ast_build owned_build = isl::manage(build);
  isl::ast_node tree =
      isl::manage(isl_ast_build_node_from_schedule(build, isl_schedule_copy(const_cast<isl_schedule*>(mapped))));
  if (callback_error_) std::rethrow_exception(callback_error_);
  checked(tree.get(), m_->ctx(), "generating the loop nest");
  top(tree.get());
  return finished();
}

CudaSource Printer::finished() {
  out_.text = cuda_prelude() + (warp_totals_ ? std::string(warp_totals_text()) + "\n" : "") + kernels_;
  out_.param_types = parameter_types(b_.def());
  for (const auto& st : b_.def().stmts) out_.fault_words = std::max(out_.fault_words, 2 + st.vars.size());
  return out_;
}

// Outside any kernel: a sequence is split into its parts, a kernel mark is a kernel, anything
// else (a 0-d statement) a kernel of its own.
void Printer::top(isl_ast_node* node) {
  if (isl_ast_node_get_type(node) == isl_ast_node_block) {
    isl::ast_node_list children = isl::manage(isl_ast_node_block_get_children(node));
    for (int i = 0; i < isl_ast_node_list_n_ast_node(children.get()); ++i)
      top(isl::manage(isl_ast_node_list_get_ast_node(children.get(), i)).get());
    return;
  }
  kernel(node);
}

Printer::Mapping Printer::mapping_of(const std::string& mark) {
  bool block = mark[0] == 'b';
  size_t dot = mark.find('.'), colon = mark.find(':');
  std::string axis = mark.substr(dot + 1, colon == std::string::npos ? std::string::npos : colon - dot - 1);
  Mapping m{std::string(block ? "blockIdx." : "threadIdx.") + axis, std::string(block ? "gridDim." : "blockDim.") + axis};
  if (colon != std::string::npos) m.stride = std::stoll(mark.substr(colon + 1));
  return m;
}

isl_stat Printer::enter_mark(isl_id* mark, isl_ast_build* build, void* user) {
  auto* p = static_cast<Printer*>(user);
  std::string name = isl_id_get_name(mark);
  if (is_mapping(name)) {
    const auto* member = static_cast<const MemberMark*>(isl_id_get_user(mark));
    p->open_marks_.push_back({name, member->values});
    p->member_loops_.push_back("c" + std::to_string(member->depth));  // its loop, where isl prints one
  }
  if (name == "kernel") p->shared_budget_ = kSharedBytes;  // static shared memory is per kernel: its marks share it
  if (name == "shared") {
    try {  // no exception may cross isl's C frames
      p->open_shared_.push_back(p->promotions_.size());
      p->promotions_.push_back(p->promote(build));
    } catch (...) {
      p->callback_error_ = std::current_exception();
      return isl_stat_error;
    }
  }
  return isl_stat_ok;
}

isl_ast_node* Printer::leave_mark(isl_ast_node* node, isl_ast_build*, void* user) {
  auto* p = static_cast<Printer*>(user);
  std::string name = mark_name(node);
  if (is_mapping(name) && !p->open_marks_.empty()) {
    p->open_marks_.pop_back();
    node = isl_ast_node_set_annotation(node, isl_id_alloc(isl_ast_node_get_ctx(node), p->member_loops_.back().c_str(), nullptr));
    p->member_loops_.pop_back();
  }
  if (name == "shared" && !p->open_shared_.empty()) {  // which promotions the printer finds at this mark
    std::string k = "shared" + std::to_string(p->open_shared_.back());
    p->open_shared_.pop_back();
    node = isl_ast_node_set_annotation(node, isl_id_alloc(isl_ast_node_get_ctx(node), k.c_str(), nullptr));
  }
  return node;
}

// Annotates a statement with the value of each mapped member above it, as C over the
// statement's variables (i0, i1, ...: the names the model gave them).
isl_ast_node* Printer::at_statement(isl_ast_node* node, isl_ast_build* build, void* user) {
  auto* p = static_cast<Printer*>(user);
  std::vector<std::pair<std::string, std::string>> values;
  isl::set instances = isl::manage(isl_set_from_union_set(isl_union_map_domain(isl_ast_build_get_schedule(build))));
  isl::space space =
      isl::manage(isl_space_add_dims(isl_space_from_domain(isl_set_get_space(instances.get())), isl_dim_out, 1));
  for (const OpenMark& m : p->open_marks_) {
    isl_pw_aff* value = isl_union_pw_aff_extract_pw_aff(const_cast<isl_union_pw_aff*>(m.values), space.copy());
    values.emplace_back(m.mark, value ? c_text(value) : std::string());
  }
  std::string id = "mapped" + std::to_string(p->statement_values_.size());
  p->statement_values_.push_back(std::move(values));
  return isl_ast_node_set_annotation(node, isl_id_alloc(isl_ast_node_get_ctx(node), id.c_str(), nullptr));
}

// A (quasi-)affine function of one piece as C over its space's variable names (isl's
// printer; floord as the prelude's); "" for several pieces (a band member's values are one
// affine function per statement, with floors where tiled).
std::string Printer::c_text(isl_pw_aff* value) {
  isl::pw_aff owned = isl::manage(value);
  if (isl_pw_aff_n_piece(value) != 1) return "";
  isl::aff piece;
  isl_pw_aff_foreach_piece(
      value,
      [](isl_set* set, isl_aff* aff, void* user) {
        isl::manage(set);
        *static_cast<isl::aff*>(user) = isl::manage(aff);
        return isl_stat_ok;
      },
      &piece);
  return renamed_calls(c_of(isl_printer_print_aff(c_printer(isl_pw_aff_get_ctx(value)), piece.get())));
}

// The guard of a statement: the owner of each mapped value that no enclosing marked loop
// iterates ("" when there is none). Inside the statement's block (its variables defined).
std::string Printer::ownership_guard(const std::string& annotation) const {
  size_t k = std::stoul(annotation.substr(6));
  std::string guard;
  for (const auto& [mark, value] : statement_values_[k]) {
    bool iterated = false;
    for (const std::string& open : owned_) iterated = iterated || open == mark;
    if (iterated) continue;
    if (value.empty()) fail(TC_ERROR_INTERNAL, "the cuda printer could not express the value of mark " + mark);
    Mapping m = mapping_of(mark);
    guard += (guard.empty() ? "" : " && ") + std::string("tc_owner(") + value + ", " + std::to_string(m.stride) +
             ", " + m.count + ") == (long long)" + m.index;
  }
  return guard;
}

void Printer::kernel(isl_ast_node* node) {
  Launch launch;
  launch.kernel = b_.def().name + "_k" + std::to_string(out_.launches.size());
  axes_ = &launch;
  std::string body;
  shared_declarations_.clear();
  walk(node, body, 1);
  std::string declarations;
  for (const auto& [name, line] : shared_declarations_) declarations += pad(1) + line + "\n";
  body = declarations + body;
  kernels_ += "extern \"C\" __global__ void " + launch.kernel + "(" + kernel_parameters(b_.def()) + ") {\n" + body + "}\n\n";
  out_.launches.push_back(launch);
}

// A node and its children as C, `depth` levels in.
void Printer::walk(isl_ast_node* node, std::string& out, int depth) {
  switch (isl_ast_node_get_type(node)) {
    case isl_ast_node_for: return loop(node, out, depth, "");
    case isl_ast_node_if: {
      out += pad(depth) + "if (" + isl_c(isl_ast_node_if_get_cond(node)) + ") {\n";
      child(isl_ast_node_if_get_then_node(node), out, depth + 1);
      if (isl_ast_node_if_has_else_node(node) == isl_bool_true) {
        out += pad(depth) + "} else {\n";
        child(isl_ast_node_if_get_else_node(node), out, depth + 1);
      }
      out += pad(depth) + "}\n";
      return;
    }
    case isl_ast_node_block:  // a run of two or more children updating one element: in a register
      return in_runs(node, [&](isl_ast_node_list* children, int from, int to, const Element* e) {
        auto print = [&](std::string& o, int d) {
          for (int i = from; i < to; ++i) child(isl_ast_node_list_get_ast_node(children, i), o, d);
        };
        if (e) in_register(*e, out, depth, print);
        else print(out, depth);
      });
    case isl_ast_node_mark: {
      std::string name = mark_name(node);
      isl::ast_node owned_inner = isl::manage(isl_ast_node_mark_get_node(node));
      isl_ast_node* inner = owned_inner.get();
      if (is_mapping(name)) {
        mapped(inner, name, member_of(node), out, depth);
      } else if (name == "lanes") {  // threadIdx.x is the reductions' (cuda.reduction=tree)
        axes_->block_axes = std::max(axes_->block_axes, 1);
        Scoped<int> in_lanes(lanes_, lanes_ + 1);
        walk(inner, out, depth);
      } else if (name == "shared") {
        isl::id k = isl::manage(isl_ast_node_get_annotation(node));
        size_t index = !k.is_null() ? std::stoul(isl_id_get_name(k.get()) + 6) : promotions_.size();
        if (index >= promotions_.size()) fail(TC_ERROR_INTERNAL, "the cuda printer lost a shared memory mark");
        shared_scope(inner, promotions_[index], out, depth);
      } else {
        walk(inner, out, depth);
      }
      return;
    }
    case isl_ast_node_user: return statement(node, out, depth);
    default: fail(TC_ERROR_INTERNAL, "the cuda printer met an isl AST node it does not know");
  }
}

std::string Printer::mark_name(isl_ast_node* mark) {
  return isl_id_get_name(isl::manage(isl_ast_node_mark_get_id(mark)).get());
}

Printer::MarkedMember Printer::member_of(isl_ast_node* mark_node) {
  MarkedMember m;
  isl::id loop_id = isl::manage(isl_ast_node_get_annotation(mark_node));
  m.loop = !loop_id.is_null() ? isl_id_get_name(loop_id.get()) : "";
  isl::id id = isl::manage(isl_ast_node_mark_get_id(mark_node));
  if (const auto* member = static_cast<const MemberMark*>(isl_id_get_user(id.get()))) {
    m.copies = member->copies;
    m.tile = member->tile;
  }
  return m;
}

// Walks and frees `node`.
void Printer::child(isl_ast_node* node, std::string& out, int depth) {
  isl::ast_node owned = isl::manage(node);
  walk(node, out, depth);
}

// What a mark maps to the grid or a block: a loop strides over the values its block or
// thread owns; anything else is walked as it is (its statements guard themselves).
// `member_loop`: the iterator of the marked member's loop (c<depth>). Where isl printed no
// loop of that member (one value), the node under the mark may be a deeper member's loop,
// which is not the mapped one: walked as it is, its statements guarded by their owner.
void Printer::mapped(isl_ast_node* inner, const std::string& mark, const MarkedMember& member, std::string& out, int depth) {
  bool block = mark[0] == 'b';
  Mapping m = mapping_of(mark);
  size_t axis = static_cast<size_t>(m.index.back() - 'x');
  int& axes = block ? axes_->grid_axes : axes_->block_axes;
  axes = std::max(axes, static_cast<int>(axis) + 1);
  if (isl_ast_node_get_type(inner) != isl_ast_node_for || !iterates(inner, member.loop)) return walk(inner, out, depth);
  if (block) axes_->tiles[axis] = std::max(axes_->tiles[axis], trip_count(inner));
  if (tiles_copies(inner, mark, member)) return register_tile(inner, mark, member, {Copy{}}, out, depth);
  loop(inner, out, depth, mark);
}

bool Printer::iterates(isl_ast_node* loop, const std::string& iterator) {
  return isl_c(isl_ast_node_for_get_iterator(loop)) == iterator;
}

// The iterations of a loop whose bounds are constants (`for (c = 0; c <= 63; c += 32)`: 2),
// else 0.
int64_t Printer::trip_count(isl_ast_node* node) {
  auto value = [](isl_ast_expr* taken) -> std::optional<int64_t> {
    isl::ast_expr e = isl::manage(taken);
    if (isl_ast_expr_get_type(e.get()) != isl_ast_expr_int) return std::nullopt;
    isl::val x = isl::manage(isl_ast_expr_get_val(e.get()));
    if (!isl_val_is_int(x.get())) return std::nullopt;
    return isl_val_get_num_si(x.get());
  };
  std::optional<int64_t> init = value(isl_ast_node_for_get_init(node)), inc = value(isl_ast_node_for_get_inc(node));
  isl::ast_expr cond = isl::manage(isl_ast_node_for_get_cond(node));
  std::optional<int64_t> last;
  if (isl_ast_expr_get_type(cond.get()) == isl_ast_expr_op) {
    isl_ast_expr_op_type op = isl_ast_expr_op_get_type(cond.get());
    if (op == isl_ast_expr_op_le || op == isl_ast_expr_op_lt) {
      last = value(isl_ast_expr_op_get_arg(cond.get(), 1));
      if (last && op == isl_ast_expr_op_lt) --*last;
    }
  }
  if (!init || !inc || !last || *inc <= 0 || *last < *init) return 0;
  return (*last - *init) / *inc + 1;
}

// `mark`: the mark of a mapped loop ("block.x:32"), "" for a plain one. A mapped loop whose
// step is the mark's stride starts at the first value its block or thread owns and steps
// over the others'; with another step (not made by libtc's tiling) it visits every value and
// skips those it does not own.
void Printer::loop(isl_ast_node* node, std::string& out, int depth, const std::string& mark) {
  if (mark.empty() && not_hoisting_ == 0) {
    Hoist plan;
    if (plan_hoist(node, plan)) return hoisted(node, plan, out, depth);
  }
  loop_as_is(node, out, depth, mark);
}

void Printer::loop_as_is(isl_ast_node* node, std::string& out, int depth, const std::string& mark) {
  std::string it = isl_c(isl_ast_node_for_get_iterator(node));
  std::string init = isl_c(isl_ast_node_for_get_init(node));
  std::string cond = isl_c(isl_ast_node_for_get_cond(node));
  std::string inc = isl_c(isl_ast_node_for_get_inc(node));
  std::string skip;
  if (!mark.empty()) {
    Mapping m = mapping_of(mark);
    if (inc == std::to_string(m.stride)) {
      init = "(" + init + ") + (" + inc + ") * tc_first(tc_floord(" + init + ", " + inc + "), " + m.index + ", " +
             m.count + ")";
      inc = "(" + inc + ") * (" + idx_ + ")" + m.count;
    } else {
      skip = "tc_owner(" + it + ", " + std::to_string(m.stride) + ", " + m.count + ") != (long long)" + m.index;
    }
    owned_.push_back(mark);
  }
  std::string header = "for (" + idx_ + " " + it + " = " + init + "; " + cond + "; " + it + " += " + inc + ")";
  auto print = [&](std::string& o, int d) {
    o += pad(d) + header + " {\n";
    if (!skip.empty()) o += pad(d + 1) + "if (" + skip + ") continue;\n";
    child(isl_ast_node_for_get_body(node), o, d + 1);
    o += pad(d) + "}\n";
  };
  std::optional<Element> e;
  if (mark.empty() && promotable(node, e)) {
    if (lanes_ > 0) {  // the loop's values split round robin across the threads along x
      header = "for (" + idx_ + " " + it + " = (" + init + ") + (" + inc + ") * (" + idx_ + ")threadIdx.x; " + cond + "; " +
               it + " += (" + inc + ") * (" + idx_ + ")blockDim.x)";
      across_lanes(*e, out, depth, print);
    } else {
      in_register(*e, out, depth, print);
    }
  } else {
    print(out, depth);
  }
  if (!mark.empty()) owned_.pop_back();
}

}  // namespace tc::backends::cuda::print
