// mapping.cpp — see mapping.h.
#include "backends/cuda/mapping.h"

#include <algorithm>
#include <array>
#include <string>

#include <isl/ast.h>
#include <isl/aff.h>
#include <isl/ast_build.h>
#include <isl/id.h>
#include <isl/ilp.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/map.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include "backends/cuda/isl_util.h"

namespace tc::backends::cuda {
namespace {

// Tile loops are scaled (their values are multiples of the tile size) and point loops shifted
// (0 to the tile size - 1): the strides marks declare rely on the first.
struct IslTilingOptions {
  explicit IslTilingOptions(isl_ctx* ctx) {
    isl_options_set_tile_scale_tile_loops(ctx, 1);
    isl_options_set_tile_shift_point_loops(ctx, 1);
  }
};



// How many of the band's leading members are coincident (parallel loops).
constexpr int kMaxAxes = 3;
int coincident_prefix(isl_schedule_node* band) {
  isl_size members = isl_schedule_node_band_n_member(band);
  int n = 0;
  while (n < members && isl_schedule_node_band_member_get_coincident(band, n) == isl_bool_true) ++n;
  return n;
}

// The band's leading coincident members, at most kMaxAxes: the grid's.
int leading_coincident(isl_schedule_node* band) { return std::min(coincident_prefix(band), kMaxAxes); }

void free_member_mark(void* user) {
  auto* mark = static_cast<MemberMark*>(user);
  isl_union_pw_aff_free(mark->values);
  delete mark;
}

// The first n members of `band` (outermost first) each become a band of their own under a
// mark "<kind>.<axis>:<stride>", the innermost of them on axis x (consecutive threads then
// touch consecutive elements), the next y, then z; <stride> is the spacing of the member's
// values (a tile loop's: its tile size), which the printer's ownership rule divides by.
// Returns the node at `band`'s position (the first mark).
// Thread marks also carry their register tile: `copies` and `tiles` per axis (x first).
isl_schedule_node* mark_members(isl_schedule_node* band, int n, const char* kind, const std::vector<int64_t>& strides,
                                int first_axis = 0, const std::array<int64_t, 3>& copies = {1, 1, 1},
                                const std::array<int64_t, 3>& tiles = {0, 0, 0}) {
  static const char kAxes[] = "xyz";
  isl_ctx* ctx = isl_schedule_node_get_ctx(band);
  isl_schedule_node* node = band;
  for (int i = 0; i < n; ++i) {
    if (isl_schedule_node_band_n_member(node) > 1) node = isl_schedule_node_band_split(node, 1);
    int64_t stride = static_cast<size_t>(i) < strides.size() ? strides[static_cast<size_t>(i)] : 1;
    std::string name = std::string(kind) + "." + kAxes[first_axis + n - 1 - i] + ":" + std::to_string(stride);
    isl_multi_union_pw_aff* partial = isl_schedule_node_band_get_partial_schedule(node);
    size_t axis = static_cast<size_t>(first_axis + n - 1 - i);
    auto* mark = new MemberMark{isl_multi_union_pw_aff_get_union_pw_aff(partial, 0), isl_schedule_node_get_schedule_depth(node),
                                copies[axis], tiles[axis]};
    isl_multi_union_pw_aff_free(partial);
    isl_id* id = isl_id_set_free_user(isl_id_alloc(ctx, name.c_str(), mark), free_member_mark);
    node = isl_schedule_node_insert_mark(node, id);
    node = isl_schedule_node_child(node, 0);                 // the band of one member
    if (i + 1 < n) node = isl_schedule_node_child(node, 0);  // the members after it
  }
  return n > 0 ? isl_schedule_node_ancestor(node, 2 * n - 1) : node;
}

// Marks the last (innermost) kMaxAxes of the point band's leading coincident members as the
// block's threads, the innermost on x, so that consecutive threads touch consecutive elements
// (coalescing: conv's w rather than its h); coincident members before them stay loops that
// every thread runs. With `lanes`, x is left to the reductions: y and z only. Returns the node
// at `band`'s position.
// A register tile along x of a multiple of kVectorValues copies gives each thread runs of
// kVectorValues consecutive values (the mark's stride: the ownership rule hands out runs).
isl_schedule_node* mark_threads(isl_schedule_node* band, bool lanes, const std::array<int64_t, 3>& copies,
                                const std::array<int64_t, 3>& tiles) {
  int first_axis = lanes ? 1 : 0;
  int parallel = coincident_prefix(band), n = std::min(parallel, kMaxAxes - first_axis), skip = parallel - n;
  std::vector<int64_t> strides(static_cast<size_t>(n), 1);  // outermost first: x is the last
  if (n > 0 && first_axis == 0 && copies[0] % kVectorValues == 0) strides.back() = kVectorValues;
  if (skip == 0) return mark_members(band, n, "thread", strides, first_axis, copies, tiles);
  isl_schedule_node* node = isl_schedule_node_band_split(band, skip);
  node = mark_members(isl_schedule_node_child(node, 0), n, "thread", strides, first_axis, copies, tiles);
  return isl_schedule_node_parent(node);
}

// The band member a thread axis (0: x) goes to, given its leading parallel members, or -1.
int member_of_axis(int parallel, int axis) {
  int n = std::min(parallel, kMaxAxes);
  return axis < n ? parallel - 1 - axis : -1;
}

// The most loops a statement under `band` has beyond its `parallel` leading members: its
// reduction's (isl may give a convolution's window loops a band of their own, below).
int reduction_loops(isl_schedule_node* band, int parallel) {
  isl_union_set* domain = isl_schedule_node_get_domain(band);
  int most = 0;
  isl_union_set_foreach_set(
      domain,
      [](isl_set* set, void* user) {
        int& m = *static_cast<int*>(user);
        m = std::max(m, static_cast<int>(isl_set_dim(set, isl_dim_set)));
        isl_set_free(set);
        return isl_stat_ok;
      },
      &most);
  isl_union_set_free(domain);
  return most - parallel;
}

// The statement variables (input dimensions) member `m` of `band`'s partial schedule uses for
// `stmt` (a set of its instances), as a bit mask; all of them where it is not one affine piece.
uint64_t member_variables(isl_schedule_node* band, int m, isl_set* stmt) {
  isl_size dims = isl_set_dim(stmt, isl_dim_set);
  uint64_t all = dims >= 64 ? ~uint64_t{0} : (uint64_t{1} << dims) - 1, used = 0;
  isl_multi_union_pw_aff* partial = isl_schedule_node_band_get_partial_schedule(band);
  isl_union_pw_aff* member = isl_multi_union_pw_aff_get_union_pw_aff(partial, m);
  isl_multi_union_pw_aff_free(partial);
  isl_space* space = isl_space_add_dims(isl_space_from_domain(isl_set_get_space(stmt)), isl_dim_out, 1);
  isl_pw_aff* value = isl_union_pw_aff_extract_pw_aff(member, space);
  isl_union_pw_aff_free(member);
  if (!value || isl_pw_aff_n_piece(value) != 1) {
    isl_pw_aff_free(value);
    return all;
  }
  for (int d = 0; d < dims && d < 64; ++d)
    if (isl_pw_aff_involves_dims(value, isl_dim_in, static_cast<unsigned>(d), 1) != isl_bool_false) used |= uint64_t{1} << d;
  isl_pw_aff_free(value);
  return used;
}

// Whether a statement of `band` reads an element that does not depend on the variables of the
// x or the y thread axis (so copies along that axis share it), and no statement of it has an
// unproven read (see MappingOptions::reads).
bool reuses_an_operand(isl_schedule_node* band, int parallel, const MappingOptions& options) {
  if (!options.reads) return false;
  struct Search {
    isl_schedule_node* band;
    int parallel;
    const MappingOptions* options;
    bool reuse = false, unproven = false;
  } search{band, parallel, &options};
  isl_union_set* domain = isl_schedule_node_get_domain(band);
  isl_union_set_foreach_set(
      domain,
      [](isl_set* stmt, void* user) {
        auto& s = *static_cast<Search*>(user);
        std::string name = isl_set_get_tuple_name(stmt);
        if (s.options->unproven_statements.count(name)) s.unproven = true;
        uint64_t axes[2] = {member_variables(s.band, s.parallel - 1, stmt), member_variables(s.band, s.parallel - 2, stmt)};
        isl_union_map* reads = isl_union_map_intersect_domain(isl_union_map_copy(const_cast<isl_union_map*>(s.options->reads)),
                                                              isl_union_set_from_set(isl_set_copy(stmt)));
        struct Reads {
          uint64_t* axes;
          bool reuse = false;
        } r{axes};
        isl_union_map_foreach_map(
            reads,
            [](isl_map* read, void* user) {
              auto& r = *static_cast<Reads*>(user);
              // Without the statement's own bounds, which involve every variable: what is left
              // ties the element to the variables it depends on.
              isl_set* instances = isl_map_domain(isl_map_copy(read));
              read = isl_map_gist_domain(read, instances);
              for (int a = 0; a < 2; ++a) {
                bool involved = false;
                for (int d = 0; d < 64 && !involved; ++d)
                  if ((r.axes[a] >> d & 1) && d < isl_map_dim(read, isl_dim_in))
                    involved = isl_map_involves_dims(read, isl_dim_in, static_cast<unsigned>(d), 1) != isl_bool_false;
                if (!involved && r.axes[a] != 0) r.reuse = true;
              }
              isl_map_free(read);
              return isl_stat_ok;
            },
            &r);
        isl_union_map_free(reads);
        s.reuse = s.reuse || r.reuse;
        isl_set_free(stmt);
        return isl_stat_ok;
      },
      &search);
  isl_union_set_free(domain);
  return search.reuse && !search.unproven;
}

// How many values member `m` of `band` takes over the band's domain (its largest minus its
// smallest, plus one); -1 where that is not a finite number.
int64_t member_extent(isl_schedule_node* band, int m) {
  isl_multi_union_pw_aff* partial = isl_schedule_node_band_get_partial_schedule(band);
  isl_union_pw_aff* member = isl_multi_union_pw_aff_get_union_pw_aff(partial, m);
  isl_multi_union_pw_aff_free(partial);
  member = isl_union_pw_aff_intersect_domain_union_set(member, isl_schedule_node_get_domain(band));
  isl_val* hi = isl_union_pw_aff_max_val(isl_union_pw_aff_copy(member));
  isl_val* lo = isl_union_pw_aff_min_val(member);
  int64_t extent = -1;
  if (hi && lo && isl_val_is_int(hi) == isl_bool_true && isl_val_is_int(lo) == isl_bool_true)
    extent = isl_val_get_num_si(hi) - isl_val_get_num_si(lo) + 1;
  isl_val_free(hi);
  isl_val_free(lo);
  return extent;
}

// Auto's copies along thread axis `axis` (0: x) whose member takes `extent` values: `most`, or
// where the member is too short for kRegisterTileThreads threads of that many copies each, the
// fewest (a power of 2; along x 1 or a multiple of kVectorValues, for runs of 128-bit accesses)
// that still cover it: a 4 x 3 output gets no register tile, rather than one thread computing
// all of it in 64 registers (and a text NVRTC takes seconds to compile).
int64_t auto_copies(int axis, int64_t extent, int64_t most) {
  if (extent < 0) return most;
  int64_t copies = 1;
  while (copies < most && copies * kRegisterTileThreads < extent) copies *= 2;
  if (axis == 0 && copies > 1 && copies < kVectorValues) copies = std::min(most, kVectorValues);
  return copies;
}

// A band's register tile (copies per thread axis, x first): where it has a reduction member
// (a member after its parallel ones) and threads, cuda.regtile's, or auto's where it has two
// thread axes or more; 1 elsewhere, and under `lanes` (threadIdx.x is the reduction's).
std::array<int64_t, 3> register_tile(isl_schedule_node* band, const MappingOptions& options) {
  std::array<int64_t, 3> copies{1, 1, 1};
  int parallel = coincident_prefix(band);
  if (options.lanes || parallel == 0 || parallel == isl_schedule_node_band_n_member(band)) return copies;
  if (options.regtile_auto) {
    if (parallel < 2 || !reuses_an_operand(band, parallel, options)) return copies;
    int64_t most = reduction_loops(band, parallel) > 1 ? kAutoRegisterTileSeveralReductions : kAutoRegisterTile;
    for (int a = 0; a < 2; ++a)
      copies[static_cast<size_t>(a)] = auto_copies(a, member_extent(band, member_of_axis(parallel, a)), most);
    return copies;
  }
  for (size_t a = 0; a < copies.size() && a < options.regtile.size(); ++a)
    if (static_cast<int>(a) < std::min(parallel, kMaxAxes)) copies[a] = std::max<int64_t>(1, options.regtile[a]);
  return copies;
}

// The tile size of member i where cuda.tile does not give one: a register-tiled
// band's thread axes kRegisterTileThreads per copy, its other parallel members 1, its reduction
// kDefaultTile, or where it has several, kReductionTileSeveralReductions each. Elsewhere
// kDefaultTile, but 1 for a parallel member on no thread axis of more than one thread (under
// `lanes`: kDefaultTile): its values then go to the grid's blocks instead of a loop in every
// thread (a maxpool's batch and channels: 2 blocks of 32 x 8 threads, each thread walking 32
// images, became 2048 blocks).
int64_t default_tile(int i, int parallel, bool several_reductions, const std::array<int64_t, 3>& copies,
                     const MappingOptions& options) {
  bool tiled = copies[0] > 1 || copies[1] > 1 || copies[2] > 1;
  if (!tiled) {
    if (i >= parallel || options.lanes) return kDefaultTile;
    for (int a = 0; a < kMaxAxes; ++a)
      if (member_of_axis(parallel, a) == i) return options.block[static_cast<size_t>(a)] > 1 ? kDefaultTile : 1;
    return 1;
  }
  if (i >= parallel) return several_reductions ? kReductionTileSeveralReductions : kDefaultTile;
  // Auto's x and y keep kRegisterTileThreads threads where a short member has 1 copy.
  for (int a = 0; a < kMaxAxes; ++a)
    if (member_of_axis(parallel, a) == i && (copies[static_cast<size_t>(a)] > 1 || (options.regtile_auto && a < 2)))
      return kRegisterTileThreads * copies[static_cast<size_t>(a)];
  return 1;
}

// Where a band's blocks would be fewer than the GPU's SMs (kBlocksWanted), the defaulted tile
// of each thread axis past x is cut to the block's threads along that axis: each thread then
// computes one value along it where it walked several, and the values go to more blocks (1LUT's
// 128 x 64 outputs in tiles of 32 x 32 were 8 blocks for 132 SMs; in tiles of 8 x 32, 32).
// Register-tiled bands keep their tiles (their copies need them), as do reductions across lanes.
void fill_the_gpu(isl_schedule_node* band, int parallel, const std::array<int64_t, 3>& copies,
                  const MappingOptions& options, std::vector<int64_t>& tiles) {
  if (copies[0] > 1 || copies[1] > 1 || copies[2] > 1 || options.lanes) return;
  auto blocks = [&] {
    int64_t count = 1;
    for (int i = 0; i < parallel; ++i) {
      int64_t extent = member_extent(band, i);
      if (extent < 0) return kBlocksWanted;  // not a constant: leave the tiles
      count *= (extent + tiles[static_cast<size_t>(i)] - 1) / tiles[static_cast<size_t>(i)];
    }
    return count;
  };
  for (int a = 1; a < kMaxAxes; ++a) {
    int m = member_of_axis(parallel, a);
    if (m < 0 || static_cast<size_t>(m) < options.tile.size()) continue;  // cuda.tile gave it
    int64_t threads = std::max<int64_t>(1, options.block[static_cast<size_t>(a)]);
    if (tiles[static_cast<size_t>(m)] > threads && blocks() < kBlocksWanted) tiles[static_cast<size_t>(m)] = threads;
  }
}

// Point loops after the leading coincident ones (a reduction's: no thread is mapped to them)
// whose tile size is at most `unroll` are unrolled by isl's AST generator.
isl_schedule_node* mark_unrolled(isl_schedule_node* band, const std::vector<int64_t>& sizes, int64_t unroll) {
  isl_size members = isl_schedule_node_band_n_member(band);
  for (int i = coincident_prefix(band); i < members; ++i)
    if (sizes[static_cast<size_t>(i)] <= unroll)
      band = isl_schedule_node_band_member_set_ast_loop_type(band, i, isl_ast_loop_unroll);
  return band;
}

// Tiles an outermost band and marks it; any other node is returned as it is. Returns a node
// at the position of the one it was given (now the "kernel" mark), as
// isl_schedule_node_map_descendant_bottom_up requires.
isl_schedule_node* tile_outermost_band(isl_schedule_node* node, void* user) {
  if (isl_schedule_node_get_type(node) != isl_schedule_node_band) return node;
  if (isl_schedule_node_get_schedule_depth(node) != 0) return node;  // a band above it
  const MappingOptions& options = *static_cast<const MappingOptions*>(user);
  const std::vector<int64_t>& tile = options.tile;
  isl_ctx* ctx = isl_schedule_node_get_ctx(node);
  isl_size members = isl_schedule_node_band_n_member(node);
  bool tileable = members > 0 && (members == 1 || isl_schedule_node_band_get_permutable(node) == isl_bool_true);
  std::vector<int64_t> block_strides;  // untiled: consecutive values
  if (tileable) {
    std::array<int64_t, 3> copies = register_tile(node, options), thread_tiles{0, 0, 0};
    int parallel = coincident_prefix(node);
    bool several = reduction_loops(node, parallel) > 1;
    std::vector<int64_t> tiles;
    for (int i = 0; i < members; ++i)
      tiles.push_back(std::max<int64_t>(
          1, static_cast<size_t>(i) < tile.size() ? tile[static_cast<size_t>(i)] : default_tile(i, parallel, several, copies, options)));
    fill_the_gpu(node, parallel, copies, options, tiles);
    isl_multi_val* sizes = isl_multi_val_zero(isl_schedule_node_band_get_space(node));
    for (int i = 0; i < members; ++i) {
      int64_t size = tiles[static_cast<size_t>(i)];
      for (int a = 0; a < kMaxAxes; ++a)
        if (member_of_axis(parallel, a) == i) thread_tiles[static_cast<size_t>(a)] = size;
      sizes = isl_multi_val_set_val(sizes, i, isl_val_int_from_si(ctx, size));
      block_strides.push_back(size);  // tile loops step by the tile size (isl scales them)
    }
    node = isl_schedule_node_band_tile(node, sizes);  // the tile band, the point band below it
    node = isl_schedule_node_child(node, 0);
    node = mark_unrolled(node, block_strides, options.unroll);
    bool lanes = options.lanes && coincident_prefix(node) < isl_schedule_node_band_n_member(node);
    node = mark_threads(node, lanes, copies, thread_tiles);
    if (lanes) node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, "lanes", nullptr));
    if (options.shared) node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, "shared", nullptr));
    node = isl_schedule_node_parent(node);
  }
  node = mark_members(node, leading_coincident(node), "block", block_strides);
  return isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, "kernel", nullptr));
}

}  // namespace

isl_schedule* tile_and_mark(isl_schedule* schedule, const MappingOptions& options) {
  isl_ctx* ctx = isl_schedule_get_ctx(schedule);
  IslTilingOptions tiling(ctx);
  isl_schedule_node* root = isl_schedule_get_root(schedule);
  isl_schedule_free(schedule);
  root = isl_schedule_node_map_descendant_bottom_up(root, tile_outermost_band,
                                                    const_cast<MappingOptions*>(&options));
  isl_schedule* mapped = isl_schedule_node_get_schedule(root);
  isl_schedule_node_free(root);
  return checked(mapped, ctx, "tiling");
}

std::string loop_nest_text(const PolyModel& model, const isl_schedule* schedule) {
  isl_ast_build* build = isl_ast_build_alloc(model.ctx());
  isl_ast_node* tree = isl_ast_build_node_from_schedule(build, isl_schedule_copy(const_cast<isl_schedule*>(schedule)));
  isl_ast_build_free(build);
  checked(tree, model.ctx(), "generating the loop nest");
  std::string text = owned_text(isl_ast_node_to_C_str(tree));
  isl_ast_node_free(tree);
  return text;
}

}  // namespace tc::backends::cuda
