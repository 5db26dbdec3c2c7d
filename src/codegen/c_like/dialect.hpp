/// The per-language half of the C-like emitters: CUDA or MSL spellings behind one interface.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "iron/core/ir.hpp"

namespace iron::codegen::c_like {

/// What the kernel body needs from outside it, collected while it is written: the file around
/// the body (prelude, includes, signature) is assembled from it.
struct Needs {
  std::set<std::string> helpers;            ///< prelude helpers, by the dialect's own keys
  std::set<std::pair<DType, int>> vectors;  ///< vector types: element type and lanes
  std::set<std::string> inputs;             ///< built-in kernel inputs read (MSL)
};

/// Where a memory access goes.
enum class Space : std::uint8_t { Input, Output, Shared };

/// One load, store or atomic: `base[index]`, of `lanes` consecutive elements of `type`.
struct Access {
  Space space = Space::Input;
  std::string base;
  std::string index;
  DType type = DType::F32;
  int lanes = 1;
};

class Dialect {
 public:
  virtual ~Dialect() = default;

  /// The scalar type's name ("__half", "half").
  virtual std::string type(DType t) const = 0;
  /// An f32 expression with exactly these bits (used for inf and NaN).
  virtual std::string float_bits(std::uint32_t bits) const = 0;
  /// `expr` of type `from` converted to `to` (they differ) with Iron's cast semantics.
  virtual std::string convert(const std::string& expr, DType from, DType to,
                              Needs& needs) const = 0;
  /// `expr`, + - * / or negation on values of the float type `t`, as a `t` expression.
  virtual std::string float_arithmetic(const std::string& expr, DType t) const = 0;
  /// `expr` reinterpreted as `to`, a type of the same size (they differ).
  virtual std::string bitcast(const std::string& expr, DType from, DType to) const = 0;
  /// The f32 function of a unary or binary math op, fma, rem, min or max ("expf", "exp").
  virtual std::string_view float_function(ir::OpKind k) const = 0;
  /// A u32 expression for the built-in.
  virtual std::string builtin(ir::Builtin b, int axis, Needs& needs) const = 0;

  /// simd.sum/max/min/prefix_sum/prefix_exclusive_sum of `v`, of type f32, i32 or u32.
  virtual std::string simd_reduce(ir::OpKind k, DType t, const std::string& v,
                                  Needs& needs) const = 0;
  /// simd.shuffle/shuffle_xor/shuffle_up/shuffle_down/broadcast of `v` (f32, i32 or u32) with
  /// a constant operand in 0..31.
  virtual std::string simd_move(ir::OpKind k, DType t, const std::string& v, int operand,
                                Needs& needs) const = 0;
  /// `v` (f32, i32 or u32) as lane `source` (a u32 expression) holds it, or the lane's own
  /// value when `source` is not in 0..31. Every lane of the simdgroup must call it.
  virtual std::string simd_read(DType t, const std::string& v, const std::string& source,
                                Needs& needs) const = 0;

  /// The atomic op on `a` with operand `v`, an expression giving the previous value.
  virtual std::string atomic(ir::OpKind k, const Access& a, const std::string& v,
                             Needs& needs) const = 0;
  virtual std::string barrier() const = 0;
  /// The declaration of a threadgroup allocation; `vector_access` when vector loads or stores
  /// use it, so it must be 16-byte aligned.
  virtual std::string shared_declaration(const ir::SharedAlloc& s, bool vector_access) const = 0;

  /// The type of a vector value of `lanes` elements.
  virtual std::string vector_type(DType t, int lanes, Needs& needs) const = 0;
  /// A vector load of `a` (a.lanes > 1).
  virtual std::string vector_load(const Access& a, Needs& needs) const = 0;
  /// The statements of a vector store of `values` (one per lane) into `a`.
  virtual std::vector<std::string> vector_store(const Access& a,
                                                const std::vector<std::string>& values,
                                                Needs& needs) const = 0;
  /// Lane `lane` of the vector value `v` of `lanes` elements.
  virtual std::string extract(const std::string& v, int lanes, int lane) const = 0;
};

}  // namespace iron::codegen::c_like
