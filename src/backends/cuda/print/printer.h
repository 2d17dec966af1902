// printer.h — the CUDA printer (print_cuda.h says what it prints) as one class, declared here
// for the files that define it, one concern each:
//   walk.cpp            isl's AST walked: the kernels, loops, marks and ownership guards
//   statements.cpp      statement instances, their updates and scatters
//   expressions.cpp     the IR's expressions, loads and offsets
//   shared_memory.cpp   reused tiles copied to shared memory (cuda.shared)
//   registers.cpp       a reduction's element kept in a register (cuda.private)
//   register_tiles.cpp  several values per thread in lockstep (cuda.regtile), registers across
//                       the reduction's tiles, 128-bit accesses
//   reductions.cpp      reductions split across the threads along x (cuda.reduction)
//   rows.cpp            a row-wise def as one kernel, a group of threads per row (cuda.rowwise)
//   c_text.cpp          C spellings of types, literals and conversions; isl's expressions in C
//   prelude.cpp         the prelude (prelude.cuh, embedded at build time)
// Internal to the cuda backend: print_cuda.cpp is its only user outside these files.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/aff.h>
#include <isl/fixed_box.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/local_space.h>
#include <isl/printer.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/schedule.h>
#include <isl/val.h>
#include <isl/cpp.h>

#include "backends/cuda/mapping.h"
#include "backends/cuda/print_cuda.h"
#include "backends/cuda/rows/row_plan.h"

namespace tc::backends::cuda::print {

// c_text.cpp
std::string c_type(ScalarType t);
std::string storage_type(ScalarType t);
std::string rounded(const std::string& x, ScalarType t);
std::string param(const ir::Tensor& t);
std::string stored(const std::string& value, ScalarType t);     // a value of type t as t is stored
std::string load_as(const std::string& element, ScalarType t);  // a stored element as a value of type t
// Every kernel's parameters (CudaSource::param_types): the def's tensors, then the fault record;
// as C types, and as the C parameter list of a __global__ function.
std::vector<std::string> parameter_types(const ir::Def& def);
std::string kernel_parameters(const ir::Def& def);
std::string convert(const std::string& x, ScalarType from, ScalarType to);
std::string float_literal(double v, ScalarType t);
std::string int_literal(int64_t v, ScalarType t);
std::string renamed_calls(std::string s);
std::string isl_c(isl_ast_expr* e);
isl_printer* c_printer(isl_ctx* ctx);
std::string c_of(isl_printer* printer);

// prelude.cpp: the warps' totals of reductions across threads, after the prelude in the texts
// that use them.
const char* warp_totals_text();

// Sets a variable for a scope and gives it its former value back at the scope's end, an
// exception included.
template <typename T>
class Scoped {
 public:
  Scoped(T& variable, T value) : variable_(variable), old_(variable) { variable_ = value; }
  ~Scoped() { variable_ = old_; }
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;

 private:
  T& variable_;
  T old_;
};

class Printer {
 public:
  // `m`: the def's polyhedral model, which the isl schedule's printing reads (run); the row
  // route's (run_rows) reads none, and takes null.
  Printer(const ir::BoundDef& b, const PolyModel* m, const PrintOptions& o)
      : b_(b),
        m_(m),
        checked_(o.checked),
        private_(o.registers),
        atomic_lanes_(o.atomic_lanes),
        fma_(o.fma),
        statement_marks_(o.statement_marks),
        idx_(o.index32 ? "int" : "long long"),
        index_suffix_(o.index32 ? "" : "ll") {}

  CudaSource run(const isl_schedule* mapped);
  // The row route's kernel (rows.cpp): no schedule, the plan's statements in order.
  CudaSource run_rows(const RowPlan& plan);

 private:
  CudaSource finished();  // out_ with the prelude, the kernels and the parameters
  void row_statement(const RowStatement& rs, std::string& out, int depth);
  std::string row_value(const ir::Stmt& st, size_t s, const std::string& element, std::string& out, int depth);

  void top(isl_ast_node* node);

  // ---- which block and thread runs a statement instance ----
  // A mapped member's values (the mark "block.x:32": blockIdx.x, step 32) go round robin to
  // the blocks or threads along its axis (tc_owner). A marked loop isl printed strides over
  // the values its block or thread owns; where isl printed no loop (a single value for the
  // statements there, say a 0-d statement after a loop over the same member), the statement
  // is guarded by the owner of its value instead. Either way an instance runs on the thread
  // that owns its values, so dependences of zero distance along the mapped members (all
  // that isl's coincidence leaves within a kernel) stay within one thread, in schedule order.
  struct Mapping {
    std::string index, count;  // "threadIdx.x", "blockDim.x"
    int64_t stride = 1;
  };

  static bool is_mapping(const std::string& mark) { return mark.rfind("block.", 0) == 0 || mark.rfind("thread.", 0) == 0; }

  static Mapping mapping_of(const std::string& mark);

  struct OpenMark {
    std::string mark;
    const isl_union_pw_aff* values;  // the member's value per statement instance (the mark's user data)
  };

  static isl_stat enter_mark(isl_id* mark, isl_ast_build* build, void* user);
  static isl_ast_node* leave_mark(isl_ast_node* node, isl_ast_build*, void* user);

  // ---- shared memory (cuda.shared): the reused tiles of a kernel's read-only tensors ----
  // At a "shared" mark (above a point band, inside the tile loops, which are the same for
  // every thread of a block), each tensor that the kernel reads but does not write, whose
  // every read is proven in bounds (so its index needs no clamping) and whose elements are
  // read more than once (its reads are not injective), is copied to shared memory: the box
  // isl finds around what one tile reads (isl_map_get_range_simple_fixed_box_hull: a fixed
  // size, an offset affine in the tile loops), if it fits the budget left. All of a block's
  // threads copy it (the elements inside the tensor), between two __syncthreads, and the
  // tile's reads of the tensor read the copy.
  // CUDA's static shared memory per block, less the prelude's tc_warp_totals.
  static constexpr int64_t kSharedBytes = 48 * 1024 - 32 * 8;

  struct SharedArray {
    size_t tensor = 0;
    std::string name;                 // tc_shared<k>
    std::vector<std::string> offset;  // per dimension: the box's first index, C over the tile loops' iterators
    std::vector<int64_t> size;        // per dimension
    int64_t elements() const {
      int64_t n = 1;
      for (int64_t x : size) n *= x;
      return n;
    }
    // Rows (the innermost dimension) of an even size are stored one element longer: threads of
    // a warp that read one column of several rows then hit distinct banks (rows 32 floats apart
    // all fall in one bank).
    int64_t row() const {
      if (size.empty()) return 1;
      return size.size() >= 2 && size.back() % 2 == 0 ? size.back() + 1 : size.back();
    }
    int64_t stored_elements() const { return size.empty() ? 1 : elements() / size.back() * row(); }
    // The distance between consecutive indices of dimension k in the stored array.
    int64_t stride(size_t k) const {
      if (k + 1 == size.size()) return 1;
      int64_t n = row();
      for (size_t j = k + 1; j + 1 < size.size(); ++j) n *= size[j];
      return n;
    }
  };

  size_t tensor_of(const std::string& tuple) const;
  bool read_unproven(const std::set<size_t>& stmts, size_t t) const;
  std::vector<SharedArray> promote(isl_ast_build* build);
  std::optional<SharedArray> box_of(isl_ast_build* build, isl_map* footprint, size_t t) const;
  void shared_scope(isl_ast_node* inner, const std::vector<SharedArray>& arrays, std::string& out, int depth);

  void shared_scope(const std::vector<SharedArray>& arrays, std::string& out, int depth,
                    const std::function<void(std::string&, int)>& inner);

  void copy_into_shared(const SharedArray& a, std::string& out, int d);

  // Dimension k of the box's first index.
  static std::string offset_name(const SharedArray& a, size_t k) { return "(" + a.offset[k] + ")"; }

  const SharedArray* shared_copy(size_t t) const;
  static isl_ast_node* at_statement(isl_ast_node* node, isl_ast_build* build, void* user);
  static std::string c_text(isl_pw_aff* value);
  std::string ownership_guard(const std::string& annotation) const;
  void kernel(isl_ast_node* node);

  std::string index_literal(int64_t v) const { return std::to_string(v) + index_suffix_; }

  static std::string pad(int depth) { return std::string(2 * static_cast<size_t>(depth), ' '); }

  void walk(isl_ast_node* node, std::string& out, int depth);
  static std::string mark_name(isl_ast_node* mark);

  // What a mapping mark node says: the loop of its member ("c<depth>", from its annotation) and,
  // for a thread mark, its register tile (MemberMark).
  struct MarkedMember {
    std::string loop;
    int64_t copies = 1, tile = 0;
  };
  static MarkedMember member_of(isl_ast_node* mark_node);
  void child(isl_ast_node* node, std::string& out, int depth);
  void mapped(isl_ast_node* inner, const std::string& mark, const MarkedMember& member, std::string& out, int depth);

  static bool iterates(isl_ast_node* loop, const std::string& iterator);
  static int64_t trip_count(isl_ast_node* node);
  void loop(isl_ast_node* node, std::string& out, int depth, const std::string& mark);
  void loop_as_is(isl_ast_node* node, std::string& out, int depth, const std::string& mark = "");

  // ---- statements ----

  // A statement instance as the AST gives it: its name (Z<t>, I<s>, S<s>), its variables' values
  // (C expressions of the loop iterators) and its ownership guard ("" for none).
  struct Call {
    std::string name;
    size_t index = 0;  // t or s
    std::vector<std::string> args;
    std::string guard;
  };

  Call call_of(isl_ast_node* node) const;
  std::string variable(size_t k, const std::string& value) const;
  void statement(isl_ast_node* node, std::string& out, int depth);
  static bool mentions(const std::string& text, const std::string& name);

  // ---- registers (cuda.private=1) ----
  // A loop, or a run of two or more statements (an unrolled loop's), all of whose statement
  // instances are one reduction updating one element keeps the element in a register: one
  // load before, one store after, instead of a load and a store per update. The element's
  // written subscripts and guard must not use the iterators of loops inside (nor the guard
  // the statement's reduction variables), and its right-hand side must not read the tensor it
  // writes. The load and the store run only where some instance does (`reached`): a loop may
  // be empty where its element's subscripts leave the tensor.
  struct Element {
    size_t stmt = 0;
    std::vector<std::string> lhs;  // the written subscripts, C over the enclosing iterators
    std::string guard;
    std::string reached;  // C over the enclosing iterators: some instance runs ("": always)
    bool operator==(const Element& o) const { return stmt == o.stmt && lhs == o.lhs && guard == o.guard; }
  };

  bool one_element(isl_ast_node* node, std::optional<Element>& e, std::vector<std::string>& inner) const;
  std::optional<std::string> reached(isl_ast_node* node) const;
  static std::string runs(isl_ast_node* loop);
  static std::string at_first_value(isl_ast_node* loop, const std::string& text);
  static std::string both(const std::string& a, const std::string& b);
  static std::string either(const std::string& a, const std::string& b);
  bool promotable(isl_ast_node* node, std::optional<Element>& e) const;
  void in_runs(isl_ast_node* node, const std::function<void(isl_ast_node_list*, int, int, const Element*)>& each);
  void in_register(const Element& e, std::string& out, int depth, const std::function<void(std::string&, int)>& body);
  const ir::Tensor& written_tensor(const Element& e) const;
  std::string element_of(const Element& e) const;
  int open_element(const Element& e, const std::string& how, const std::string& guard, std::string& out, int depth);
  void close_element(std::string& out, int d, int depth);
  void accumulate(const Element& e, const std::function<void(std::string&, int)>& body, std::string& out, int d);

  // ---- register tiles (cuda.regtile) ----
  // A thread mark with copies R > 1 (mapping.h) over a loop with the mark's step: each thread
  // runs R of the values it owns at once, `c = c_t + r * step * blockDim` for r < R, each with
  // a flag saying whether the loop's condition holds for it. What the loop contains is printed
  // once for all of them where it can be (loops and conditions that do not depend on the copies'
  // values, a nested register-tiled thread loop: its copies multiply), else once per copy,
  // with its values bound (`const int c3 = c3_2;`) and under its flag. The values a thread owns
  // are independent of one another (the mark's member is parallel: every dependence inside the
  // kernel has distance 0 along it), so running them interleaved computes what running them in
  // turn does. A reduction loop that cuda.private keeps in a register (in_register) keeps one
  // register per copy (tc_acc_<r>...), loaded before the loop and stored after it: a loop of
  // R·R' fused multiply-adds per iteration whose operands (a row of A, a column of B) each
  // serve R or R' of them. Where every copy is inside (the flags all hold, as in every full
  // tile) the loop runs without the flags.
  struct Copy {
    std::vector<std::pair<std::string, std::string>> values;  // iterator, the copy's value
    std::vector<std::string> flags;                           // each tiled loop's: inside its bounds
    std::string suffix;                                       // "_3_1": the copy's index per tiled loop
    // Where a tiled loop hands out runs (run_of): the copy's place in its run, and a key equal
    // for the copies of one run ("_3_r0": suffix with the run's index in place of the copy's).
    int64_t lane = -1;
    std::string run_key;
    std::string inside() const {
      std::string all;
      for (const std::string& f : flags) all += (all.empty() ? "" : " && ") + f;
      return all;
    }
  };

  static std::string all_inside(const std::vector<Copy>& copies);
  bool tiles_copies(isl_ast_node* loop_node, const std::string& mark, const MarkedMember& member);
  static int64_t run_of(isl_ast_node* node, const std::string& mark);
  static std::string loop_header_text(isl_ast_node* loop);
  static bool is_multiple_literal(const std::string& text, int64_t n);
  static bool depends_on_copies(const std::string& text, const std::vector<Copy>& copies);
  static std::string replaced(const std::string& text, const std::string& name, const std::string& by);

  void register_tile(isl_ast_node* node, const std::string& mark, const MarkedMember& member,
                     const std::vector<Copy>& outer, std::string& out, int depth);

  std::string first_value(isl_ast_node* node, const std::string& mark) const;
  std::string thread_step(isl_ast_node* node, const std::string& mark) const;

  std::vector<Copy> open_copies(isl_ast_node* node, const std::string& mark, const MarkedMember& member,
                                const std::vector<Copy>& outer, std::string& out, int depth);

  // ---- registers across a loop of tiles (the reduction's tiles: matmul's k tiles) ----
  // A loop L that no thread is mapped to (matmul's loop over k tiles, c2) whose body is, below
  // an optional shared mark, register-tiled thread loops around (an initialisation of the
  // element under a condition on L, then) a loop updating one element per copy, where neither
  // the thread loops' bounds nor the element depend on L: each thread updates the same
  // elements in every iteration of L. Where each thread loop runs once per thread (its copies
  // times the block's threads along its axis cover its tile: the auto block), the registers live
  // across L: loaded before it, stored after it (global memory sees each element once, besides
  // the first read), the initialisation setting the registers. Else (a smaller block) L is
  // printed as it is, loading and storing the registers in each iteration.
  struct HoistLevel {
    isl_ast_node* loop;  // the thread loop (borrowed from Hoist::nodes)
    std::string mark;
    MarkedMember member;
  };
  struct Hoist {
    std::vector<isl::ast_node> nodes;  // every node taken from isl, freed with the plan
    size_t shared = SIZE_MAX;          // the shared mark's promotions, if there is one
    std::vector<HoistLevel> levels;    // the thread loops, outermost first
    isl_ast_node* init = nullptr;      // the if node of the initialisation, if there is one
    isl_ast_node* region = nullptr;    // the loop updating the elements
    Element e;
    isl_ast_node* keep(isl_ast_node* n) {
      nodes.push_back(isl::manage(n));
      return n;
    }
  };

  bool plan_hoist(isl_ast_node* loop, Hoist& plan);
  std::vector<std::string> owned_with(const std::vector<HoistLevel>& levels) const;
  bool plan_hoisted_body(isl_ast_node* node, Hoist& plan, std::vector<std::string> outer_its);
  void hoisted(isl_ast_node* loop, const Hoist& plan, std::string& out, int depth);
  void lockstep_child(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth);
  void lockstep(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth);
  void plain_loop(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth);
  void per_copy(isl_ast_node* node, const std::vector<Copy>& copies, std::string& out, int depth);

  void registers_per_copy(const Element& e, const std::vector<Copy>& copies, std::string& out, int depth,
                          const std::function<void(std::string&, int)>& body);

  void each_element(const Element& e, const std::vector<Copy>& copies, std::string& out, int d,
                    const std::function<std::string(const Copy&)>& action);

  void load_registers(const Element& e, const std::vector<Copy>& copies, std::string& out, int d);
  void store_registers(const Element& e, const std::vector<Copy>& copies, std::string& out, int d);

  // ---- 128-bit accesses of a register tile's runs (mapping.h, kVectorValues) ----
  std::vector<Copy> vector_runs(const Element& e, const std::vector<Copy>& copies, bool load, std::string& out, int d);

  void accumulate_copies(const Element& e, const std::vector<Copy>& copies, std::string& out, int d,
                         const std::function<void(std::string&, int)>& body);

  // ---- reductions across the threads along x (cuda.reduction=tree|atomic) ----
  std::string lane_zero(const std::string& guard) const;
  void across_lanes(const Element& e, std::string& out, int depth, const std::function<void(std::string&, int)>& body);
  static std::string total_member(ScalarType t);
  void warp_tree(ir::ReduceOp op, ScalarType type, std::string& out, int d) const;
  void group_tree(ir::ReduceOp op, ScalarType type, std::string& out, int d);
  static std::string combined(ir::ReduceOp op, const std::string& acc, const std::string& value);
  void statement_update(const std::string& name, size_t s, size_t rank, std::string& out, int depth);
  bool fused(const ir::Stmt& st) const;
  std::string updated(const ir::Stmt& st, size_t s, const std::string& acc, bool checks_write, std::string& out, int depth);
  std::string begin_statement(const ir::Stmt& st, size_t s, bool checks_write, std::string& out, int depth);
  void begin_statement_variables(const ir::Stmt& st, size_t s, bool checks_write, std::string& out, int depth);
  void scatter(const ir::Stmt& st, size_t s, std::string& out, int depth);

  static std::string zero_of(ScalarType t) { return is_float(t) ? float_literal(0, t) : int_literal(0, t); }

  std::string identity(ir::ReduceOp op, ScalarType t) const;
  std::string offset(size_t t, const std::vector<std::string>& subs) const;
  std::string expr(const ir::Node& e);
  std::string builtin(const ir::Node& e);
  std::string load(const ir::Node& e);

  const ir::BoundDef& b_;
  const PolyModel* m_;
  bool checked_;
  bool private_;  // register promotion of accumulators (cuda.private)
  bool atomic_lanes_;  // reductions across lanes combined with atomics (cuda.reduction=atomic), else shuffles
  bool fma_;                  // cuda.fma
  bool statement_marks_;      // TC_STATEMENT(); before each statement instance (the profile's)
  std::string acc_name_ = "tc_acc";  // the accumulator statements update (a register tile's copy: tc_acc_<r>...)
  bool unguarded_copies_ = false;    // copies printed without their in-bounds flags (all are inside)
  int not_hoisting_ = 0;             // printing a loop as it is, in hoisted()'s other branch
  int tiles_printed_ = 0;            // register tiles so far: unique names for their flags
  std::string idx_;           // the C type of iterators, variables and offsets: "int" or "long long"
  std::string index_suffix_;  // of their integer literals: "" or "ll"
  std::vector<OpenMark> open_marks_;  // while isl builds the AST
  std::vector<std::string> member_loops_;  // while isl builds the AST: the open mapping marks' loop iterators
  std::vector<std::vector<std::pair<std::string, std::string>>> statement_values_;  // per annotation: (mark, value)
  std::vector<std::string> owned_;  // while printing: the marks of the enclosing mapped loops
  std::vector<std::vector<SharedArray>> promotions_;  // per shared mark (its annotation "shared<k>")
  std::vector<size_t> open_shared_;                   // while isl builds the AST
  std::vector<const std::vector<SharedArray>*> active_shared_;  // while printing
  size_t shared_arrays_ = 0;
  std::map<std::string, std::string> shared_declarations_;  // while printing a kernel: its shared arrays
  int64_t shared_budget_ = 0;  // while isl builds the AST: the bytes the current kernel's shared marks have left
  std::exception_ptr callback_error_;  // thrown in a callback from isl, rethrown after it returns
  const Element* accumulating_ = nullptr;  // while printing in_register's or across_lanes' body
  int lanes_ = 0;                          // inside a "lanes" mark
  bool warp_totals_ = false;               // a tree across threads printed: the text needs kWarpTotals
  const ir::Stmt* stmt_ = nullptr;
  size_t stmt_index_ = 0;
  Launch* axes_ = nullptr;
  std::string kernels_;
  CudaSource out_;
};

}  // namespace tc::backends::cuda::print
