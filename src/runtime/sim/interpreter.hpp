/// Runs one threadgroup at a time: all its threads in lock-step over the structured IR, each op
/// applied to the active threads, with every sanitizer check on the way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arith.hpp"
#include "iron/runtime/sim.hpp"
#include "memory.hpp"
#include "program.hpp"
#include "report.hpp"

namespace iron::runtime::sim {

/// The launch's arguments by parameter index (a tensor view or a scalar, the other one unset).
struct Bindings {
  std::vector<TensorView> tensors;
  std::vector<const Scalar*> scalars;
};

/// Holds the per-thread values and threadgroup memory of one group; reused group after group.
class GroupRunner {
 public:
  GroupRunner(const Program& program, const Bindings& bindings, const Grid& grid,
              const SimOptions& options);

  /// Runs the group; throws SimError on the first finding.
  void run(const Dim3& group);

 private:
  void exec(Range block, Active active, std::uint32_t depth);
  void exec_op(const Instr& in, Active active, std::uint32_t depth);
  void run_for(const Instr& in, Active active, std::uint32_t depth);
  void run_if(const Instr& in, Active active, std::uint32_t depth);
  void run_leaf(const Instr& in, Active active);
  void run_builtin(const Instr& in, Active active);
  void run_lanewise(const Instr& in, Active active);

  // memory_ops.cpp
  void load(const Instr& in, Active active);
  void store(const Instr& in, Active active);
  void atomic(const Instr& in, Active active);
  void vector_load(const Instr& in, Active active);
  void vector_store(const Instr& in, Active active);
  std::uint32_t checked_index(const Instr& in, std::uint32_t thread, std::uint64_t count);
  /// The first element of a vector access: all its lanes in bounds, aligned to its width.
  std::uint32_t checked_vector_index(const Instr& in, std::uint32_t thread, std::uint64_t count);
  const std::string& buffer_name(const Instr& in) const;
  void record_shared(const Instr& in, std::uint32_t thread, std::uint32_t index, Access access);

  // collective.cpp
  void barrier(const Instr& in, Active active);
  void simd(const Instr& in, Active active);
  void reduce(const Instr& in, Active active);

  Slot* row(std::uint32_t value) { return values_.data() + std::size_t{value} * threads_; }
  std::uint32_t instr_index(const Instr& in) const {
    return static_cast<std::uint32_t>(&in - program_.code.data());
  }

  const Program& program_;
  const Bindings& bindings_;
  Grid grid_;
  SimOptions options_;
  std::uint32_t threads_;
  std::vector<std::uint32_t> tid_[3];  // each thread's coordinates, per axis
  std::vector<std::uint32_t> all_;     // 0 .. threads-1
  std::vector<Slot> values_;           // row-major: one row of `threads_` slots per value
  std::vector<std::vector<std::uint32_t>> masks_;  // two per nesting depth
  SharedMemory shared_;
  Reporter report_;
  Dim3 group_;
  std::uint64_t trips_ = 0;
};

}  // namespace iron::runtime::sim
