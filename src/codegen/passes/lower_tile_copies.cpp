/// lower_tile_copies: a copy.tile of an R×C box (W elements per 16 bytes) becomes, for the
/// group's threads t = simdgroup·32 + lane and each chunk v = t, t + T, … < R·C/W,
///
///   r = v / (C/W); c = v % (C/W) · W; inside = row0 + r < height && col0 + c < width
///   copy.async @dst[at + r·C + c], src[inside ? base + (row0 + r)·width + col0 + c : base], inside
///
/// unrolled over T = the group size when the dispatch fixes it (exactly N), a loop otherwise. An
/// image copy's rows are pixels of an NHWC image, checked against the image's bounds in place of
/// the matrix's (image_chunk).
/// On a target with tensor maps (TargetProfile::tensor_maps), the copies of a pipeline's load
/// block stay as they are when every op of the block is pure or a qualifying copy.tile
/// (tile_tensor_map): expand_pipelines makes each one TMA copy on an mbarrier ring. There, a
/// specialized pipeline (one with consumers) whose copies cannot stay is refused: its producer
/// would be lost and every thread would copy in groups.
#include "iron/codegen/passes/lower_tile_copies.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "iron/core/builder.hpp"
#include "iron/core/error.hpp"

namespace iron::codegen {
namespace {

using ir::OpKind;
using ir::SizeExpr;
using ir::ValueId;

constexpr std::uint32_t kSwizzleRowBytes = 128;  ///< TMA's widest swizzle, wgmma's too
constexpr std::uint64_t kSwizzledAlignment = 1024;
constexpr std::uint64_t kPlainAlignment = 128;

using Definitions = std::unordered_map<ValueId, const ir::Op*>;

Definitions definitions(const ir::Kernel& kernel) {
  Definitions out;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.result != ir::kNoValue) out[op.result] = &op;
  });
  return out;
}

/// `v` as a host expression of literals and constexprs, when it is one.
std::optional<SizeExpr> host_expression(const ir::Kernel& kernel, const Definitions& defs,
                                        ValueId v, int depth = 0) {
  const auto it = defs.find(v);
  if (it == defs.end() || depth > 32) return std::nullopt;
  const ir::Op& op = *it->second;
  if (op.type != DType::U32 && op.type != DType::I32) return std::nullopt;
  SizeExpr e;
  switch (op.kind) {
    case OpKind::Const:
      e.kind = SizeExpr::Kind::Literal;
      e.value = op.ivalue;
      return e;
    case OpKind::ConstexprRef:
      e.kind = SizeExpr::Kind::Constexpr;
      e.name = kernel.params.at(static_cast<std::size_t>(op.param)).name;
      return e;
    case OpKind::Add:
      e.kind = SizeExpr::Kind::Add;
      break;
    case OpKind::Sub:
      e.kind = SizeExpr::Kind::Sub;
      break;
    case OpKind::Mul:
      e.kind = SizeExpr::Kind::Mul;
      break;
    case OpKind::Div:
      e.kind = SizeExpr::Kind::Div;
      break;
    case OpKind::Min:
      e.kind = SizeExpr::Kind::Min;
      break;
    case OpKind::Max:
      e.kind = SizeExpr::Kind::Max;
      break;
    default:
      return std::nullopt;
  }
  for (const ValueId a : op.args) {
    auto operand = host_expression(kernel, defs, a, depth + 1);
    if (!operand) return std::nullopt;
    e.args.push_back(std::move(*operand));
  }
  return e;
}

/// Whether `v` is a multiple of `n` for every value its operands may take.
bool multiple_of(const Definitions& defs, ValueId v, std::uint64_t n, int depth = 0) {
  const auto it = defs.find(v);
  if (it == defs.end() || depth > 32) return false;
  const ir::Op& op = *it->second;
  switch (op.kind) {
    case OpKind::Const:
      return op.ivalue >= 0 && static_cast<std::uint64_t>(op.ivalue) % n == 0;
    case OpKind::Add:
      return multiple_of(defs, op.args[0], n, depth + 1) &&
             multiple_of(defs, op.args[1], n, depth + 1);
    case OpKind::Mul:
      return multiple_of(defs, op.args[0], n, depth + 1) ||
             multiple_of(defs, op.args[1], n, depth + 1);
    default:
      return false;
  }
}

std::optional<ir::TensorMap> map_of(const ir::Kernel& kernel, const Definitions& defs,
                                    const ir::Op& op) {
  const ir::SharedAlloc& dst = kernel.shared.at(static_cast<std::size_t>(op.shared));
  const std::uint64_t size = dtype_size(op.type);
  const std::uint32_t cols = op.fragment.cols;
  const bool swizzled = dst.swizzle != 0;
  if (size > 4 || size == 3) return std::nullopt;
  if (swizzled && (dst.swizzle != cols || cols * size != kSwizzleRowBytes)) return std::nullopt;
  const std::uint64_t alignment = swizzled ? kSwizzledAlignment : kPlainAlignment;
  if (!multiple_of(defs, op.args[0], alignment / size)) return std::nullopt;
  ir::TensorMap map;
  map.param = op.param;
  map.box_rows = op.fragment.rows;
  map.box_cols = cols;
  map.swizzle = dst.swizzle;
  auto base = host_expression(kernel, defs, op.args[1]);
  auto height = host_expression(kernel, defs, op.args[2]);
  auto width = host_expression(kernel, defs, op.args[3]);
  if (!base || !height || !width) return std::nullopt;
  map.base = std::move(*base);
  map.height = std::move(*height);
  map.width = std::move(*width);
  if (op.ivalue != 0) {  // an image copy: its images and their width too
    auto images = host_expression(kernel, defs, op.args[6]);
    auto image_width = host_expression(kernel, defs, op.args[7]);
    if (!images || !image_width) return std::nullopt;
    map.images = std::move(*images);
    map.image_width = std::move(*image_width);
    map.box_width = static_cast<std::uint32_t>(op.ivalue);
  }
  return map;
}

/// The threads of a group when the dispatch fixes them (a literal `exactly`), else 0.
std::uint32_t fixed_group_size(const ir::Kernel& kernel) {
  for (const ir::SizeRule& r : kernel.dispatch.group_size_rules) {
    if (r.kind == ir::SizeRule::Kind::Exactly && r.constexpr_name.empty() && r.value > 0) {
      return static_cast<std::uint32_t>(r.value);
    }
  }
  return 0;
}

class Lowering {
 public:
  /// Decides which pipelines keep their copies before any op moves (defs_ points into the body).
  Lowering(ir::Kernel& kernel, const TargetProfile& target)
      : kernel_(kernel),
        target_(target),
        defs_(definitions(kernel)),
        threads_(fixed_group_size(kernel)) {
    ir::walk(kernel.body, [&](const ir::Op& op) {
      if (op.kind != OpKind::Pipeline || !target_.tensor_maps) return;
      const ir::Block& load = op.blocks[0];
      if (!has_tile_copies(load)) return;
      const ir::Op* blocker = keeping_blocker(load);
      if (blocker != nullptr) {
        if (op.consumers != 0) refuse_lost_producer(op, *blocker);
      } else if (load.ops.front().result != ir::kNoValue) {
        kept_.push_back(load.ops.front().result);
      }
    });
    defs_.clear();
  }

  void block(ir::Block& b) {
    std::vector<ir::Op> out;
    out.reserve(b.ops.size());
    for (ir::Op& op : b.ops) {
      if (op.kind == OpKind::Pipeline && kept(op.blocks[0])) {
        block(op.blocks[1]);
        out.push_back(std::move(op));
        continue;
      }
      for (ir::Block& inner : op.blocks) block(inner);
      if (op.kind == OpKind::CopyTile) {
        lower(op, out);
        continue;
      }
      out.push_back(std::move(op));
    }
    b.ops = std::move(out);
  }

 private:
  bool kept(const ir::Block& load) const {
    return !load.ops.empty() &&
           std::find(kept_.begin(), kept_.end(), load.ops.front().result) != kept_.end();
  }

  /// The first op of a load block that keeps its tile copies from being TMA's: an op that is
  /// neither pure nor a tile copy, or a tile copy without a tensor map (tile_tensor_map).
  const ir::Op* keeping_blocker(const ir::Block& load) const {
    for (const ir::Op& op : load.ops) {
      const bool fine = op.kind == OpKind::CopyTile ? map_of(kernel_, defs_, op).has_value()
                                                    : ir::op_info(op.kind).has(ir::kPure) ||
                                                          op.kind == OpKind::PipelineIndex;
      if (!fine) return &op;
    }
    return nullptr;
  }

  /// A specialized pipeline whose copies cannot be TMA's (`blocker` in the way) would lose its
  /// producer on a target with tensor maps and run as copy groups of every thread (0.55× in
  /// bench/NOTES.md §56): refused, naming what stands in the way.
  void refuse_lost_producer(const ir::Op& pipe, const ir::Op& blocker) const {
    const std::string what =
        blocker.kind == OpKind::CopyTile
            ? "the tile copy there has no tensor map, which wants a destination at a multiple "
              "of 128 bytes (1024 when swizzled, in 128-byte rows) and a base, height and width "
              "computed from literals and constexprs"
            : fmt::format("{} there is neither pure arithmetic nor a tile copy",
                          ir::op_info(blocker.kind).name);
    throw Error(fmt::format(
        "kernel {}: the specialized pipeline at {}:{} cannot load by TMA ({}:{}: {}); keep its "
        "load block to pure arithmetic and tile copies",
        kernel_.name, pipe.loc.file, pipe.loc.line, blocker.loc.file, blocker.loc.line, what));
  }

  void lower(const ir::Op& copy, std::vector<ir::Op>& out) {
    const DType u32 = DType::U32;
    const auto width = static_cast<std::uint32_t>(16 / dtype_size(copy.type));
    const std::uint32_t per_row = copy.fragment.cols / width;
    const std::uint32_t chunks = copy.fragment.rows * per_row;
    ir::Builder b(kernel_, out);
    b.at(copy.loc);
    const ValueId simdgroup = b.builtin(ir::Builtin::Simdgroup);
    const ValueId lane = b.builtin(ir::Builtin::Lane);
    const ValueId first =
        b.make(OpKind::Add, u32,
               {b.make(OpKind::Mul, u32, {simdgroup, b.constant(u32, 32)}).result, lane})
            .result;
    if (threads_ != 0) {
      for (std::uint32_t j = 0; j * threads_ < chunks; ++j) {
        const ValueId v = b.make(OpKind::Add, u32, {first, b.constant(u32, j * threads_)}).result;
        if ((j + 1) * threads_ <= chunks) {
          chunk(b, copy, v, per_row, width);
          continue;
        }
        const ValueId within = b.make(OpKind::Lt, DType::Bool, {v, b.constant(u32, chunks)}).result;
        std::vector<ir::Op> guarded;
        ir::Builder g(kernel_, guarded);
        g.at(copy.loc);
        chunk(g, copy, v, per_row, width);
        b.branch(within);
        out.back().blocks[0].ops = std::move(guarded);
      }
      return;
    }
    ValueId threads = b.builtin(ir::Builtin::GroupSize, 0);
    for (std::uint8_t axis = 1; axis < 3; ++axis) {
      threads = b.make(OpKind::Mul, u32, {threads, b.builtin(ir::Builtin::GroupSize, axis)}).result;
    }
    const ValueId v = b.loop(first, b.constant(u32, chunks), threads, u32).result;
    std::vector<ir::Op> body;
    ir::Builder l(kernel_, body);
    l.at(copy.loc);
    chunk(l, copy, v, per_row, width);
    out.back().blocks[0].ops = std::move(body);
  }

  /// The copy of chunk `v` of the box (an image copy's: image_chunk).
  static void chunk(ir::Builder& b, const ir::Op& copy, ValueId v, std::uint32_t per_row,
                    std::uint32_t width) {
    if (copy.ivalue != 0) {
      image_chunk(b, copy, v, per_row, width);
      return;
    }
    const DType u32 = DType::U32;
    const ValueId base = copy.args[1];
    const ValueId height = copy.args[2];
    const ValueId matrix_width = copy.args[3];
    const ValueId r = b.make(OpKind::Div, u32, {v, b.constant(u32, per_row)}).result;
    const ValueId piece = b.make(OpKind::Rem, u32, {v, b.constant(u32, per_row)}).result;
    const ValueId c = b.make(OpKind::Mul, u32, {piece, b.constant(u32, width)}).result;
    const ValueId row = b.make(OpKind::Add, u32, {copy.args[4], r}).result;
    const ValueId col = b.make(OpKind::Add, u32, {copy.args[5], c}).result;
    const ValueId inside = b.make(OpKind::And, DType::Bool,
                                  {b.make(OpKind::Lt, DType::Bool, {row, height}).result,
                                   b.make(OpKind::Lt, DType::Bool, {col, matrix_width}).result})
                               .result;
    const ValueId offset = b.make(OpKind::Mul, u32, {row, matrix_width}).result;
    const ValueId element =
        b.make(OpKind::Add, u32, {b.make(OpKind::Add, u32, {base, offset}).result, col}).result;
    start_chunk(b, copy, inside, element, r, c, width);
  }

  /// Starts the chunk of box row r, column c: element `element` of the source where `inside`,
  /// else zeros (from the base, a valid index).
  static void start_chunk(ir::Builder& b, const ir::Op& copy, ValueId inside, ValueId element,
                          ValueId r, ValueId c, std::uint32_t width) {
    const DType u32 = DType::U32;
    const ValueId from = b.make(OpKind::Select, u32, {inside, element, copy.args[1]}).result;
    const ValueId place = b.make(OpKind::Mul, u32, {r, b.constant(u32, copy.fragment.cols)}).result;
    const ValueId to =
        b.make(OpKind::Add, u32, {b.make(OpKind::Add, u32, {copy.args[0], place}).result, c})
            .result;
    ir::Op& started = b.make(OpKind::CopyAsync, copy.type, {to, from, inside});
    started.shared = copy.shared;
    started.param = copy.param;
    started.lanes = static_cast<std::uint8_t>(width);
  }

  /// The copy of chunk `v` of an image copy's box: row r = v / per_row is pixel (y0 + r / W,
  /// x0 + r % W) of the image, W the box's width; a pixel outside the image (a coordinate
  /// below 0 wraps past the image as u32) or a column past the channels copies zeros.
  static void image_chunk(ir::Builder& b, const ir::Op& copy, ValueId v, std::uint32_t per_row,
                          std::uint32_t width) {
    const DType u32 = DType::U32;
    const DType i32 = DType::I32;
    const DType boolean = DType::Bool;
    const ValueId base = copy.args[1];
    const ValueId height = copy.args[2];
    const ValueId channels = copy.args[3];
    const ValueId images = copy.args[6];
    const ValueId image_width = copy.args[7];
    const ValueId image = copy.args[8];
    const auto box_width = static_cast<std::uint32_t>(copy.ivalue);
    const ValueId r = b.make(OpKind::Div, u32, {v, b.constant(u32, per_row)}).result;
    const ValueId piece = b.make(OpKind::Rem, u32, {v, b.constant(u32, per_row)}).result;
    const ValueId c = b.make(OpKind::Mul, u32, {piece, b.constant(u32, width)}).result;
    const auto coordinate = [&](ValueId first, OpKind part) {
      const ValueId along = b.make(part, u32, {r, b.constant(u32, box_width)}).result;
      const ValueId signed_along = b.make(OpKind::Cast, i32, {along}).result;
      const ValueId at_pixel = b.make(OpKind::Add, i32, {first, signed_along}).result;
      return b.make(OpKind::Cast, u32, {at_pixel}).result;
    };
    const ValueId y = coordinate(copy.args[4], OpKind::Div);
    const ValueId x = coordinate(copy.args[9], OpKind::Rem);
    const ValueId col = b.make(OpKind::Add, u32, {copy.args[5], c}).result;
    const auto below = [&](ValueId a, ValueId limit) {
      return b.make(OpKind::Lt, boolean, {a, limit}).result;
    };
    const auto both = [&](ValueId p, ValueId q) {
      return b.make(OpKind::And, boolean, {p, q}).result;
    };
    const ValueId in_rows = below(y, height);
    const ValueId in_columns = below(x, image_width);
    const ValueId in_pixels = both(in_rows, in_columns);
    const ValueId in_images = below(image, images);
    const ValueId in_channels = below(col, channels);
    const ValueId inside = both(in_pixels, both(in_images, in_channels));
    const ValueId image_row =
        b.make(OpKind::Add, u32, {b.make(OpKind::Mul, u32, {image, height}).result, y}).result;
    const ValueId pixel =
        b.make(OpKind::Add, u32, {b.make(OpKind::Mul, u32, {image_row, image_width}).result, x})
            .result;
    const ValueId offset = b.make(OpKind::Mul, u32, {pixel, channels}).result;
    const ValueId element =
        b.make(OpKind::Add, u32, {b.make(OpKind::Add, u32, {base, offset}).result, col}).result;
    start_chunk(b, copy, inside, element, r, c, width);
  }

  ir::Kernel& kernel_;
  const TargetProfile& target_;
  Definitions defs_;
  std::uint32_t threads_;
  std::vector<ValueId> kept_;  ///< the first value of each load block that keeps its copies
};

}  // namespace

std::optional<ir::TensorMap> tile_tensor_map(const ir::Kernel& kernel, const ir::Op& op) {
  if (op.kind != OpKind::CopyTile) return std::nullopt;
  return map_of(kernel, definitions(kernel), op);
}

bool has_tile_copies(const ir::Block& block) {
  return std::any_of(block.ops.begin(), block.ops.end(),
                     [](const ir::Op& op) { return op.kind == OpKind::CopyTile; });
}

bool has_tile_copies(const ir::Kernel& kernel) {
  bool any = false;
  ir::walk(kernel.body, [&](const ir::Op& op) { any |= op.kind == OpKind::CopyTile; });
  return any;
}

void lower_tile_copies(ir::Kernel& kernel, const TargetProfile& target) {
  if (has_tile_copies(kernel)) Lowering(kernel, target).block(kernel.body);
}

}  // namespace iron::codegen
