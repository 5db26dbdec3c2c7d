/// The bookkeeping of one launch's accesses to the tensors a kernel writes (Out and InOut): who
/// wrote each element, who read it and who updated it atomically, so that accesses by two threads
/// that nothing orders are reported as races, and reads of Out elements nobody wrote as
/// uninitialized.
///
/// Threads of different groups are never ordered. Threads of one group are ordered by a barrier.
/// The rules, for an element touched by two different threads:
/// - two plain stores: a race, even across a barrier (an element has one plain writer);
/// - a plain store and a load, or a plain store and an atomic: a race unless a barrier of their
///   group lies between them;
/// - a load and an atomic: the same (the load sees the atomic or not, depending on timing);
/// - two loads, or two atomics: never a race.
/// A thread re-storing, re-reading or re-updating an element it touched itself is fine. A load
/// or atomic of an Out element that no thread has written yet reads undefined contents (InOut
/// elements are defined at entry).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "iron/runtime/sim.hpp"
#include "memory.hpp"
#include "program.hpp"

namespace iron::runtime::sim {

/// One thread of the launch making one access.
struct Actor {
  std::uint32_t id = 0;        ///< 1 + group * threads per group + thread; 0 is nobody
  std::uint32_t interval = 0;  ///< its group's barrier interval, unique within one shadow
  std::uint32_t instr = 0;     ///< index into Program::code
};

/// What an access is reported for: the earlier access by another thread it races with, or
/// (`unwritten`) the read of an Out element no thread has written.
struct TensorFinding {
  bool unwritten = false;
  std::uint32_t other = 0;  ///< the earlier access's thread (Actor::id)
  std::uint32_t other_at = 0;
  Access other_access = Access::Read;
};

class TensorShadow {
 public:
  /// Tables for every tensor the program writes; reads and atomics are tracked only for the
  /// tensors the program loads or updates atomically.
  TensorShadow(const Program& program, const std::vector<TensorView>& tensors,
               std::uint32_t threads_per_group);

  std::optional<TensorFinding> store(int param, std::uint64_t index, const Actor& a);
  std::optional<TensorFinding> load(int param, std::uint64_t index, const Actor& a);
  std::optional<TensorFinding> atomic(int param, std::uint64_t index, const Actor& a);

  /// Whether an element is written in one shadow and touched in the other: two groups run
  /// against different shadows conflict there.
  bool overlaps(const TensorShadow& other) const;
  /// Exports the last writer of every element (instructions named by their source lines); with
  /// `also`, elements this shadow never saw written take `also`'s writer.
  void export_writers(const Program& program, SimWriters& out,
                      const TensorShadow* also = nullptr) const;

 private:
  /// The writes of one element.
  struct WriteCell {
    std::uint32_t owner = 0;           ///< the thread of the plain stores; 0 = none yet
    std::uint32_t owner_at = 0;        ///< its latest store
    std::uint32_t owner_interval = 0;  ///< the interval of that store
    std::uint32_t last_at = 0;         ///< 1 + the latest store or atomic; 0 = never written
  };
  /// The reads (or atomics) of one element: the launch's first, which tells whether an earlier
  /// group did one, and up to two distinct threads of the latest interval.
  struct TouchCell {
    std::uint32_t first = 0, first_at = 0;
    std::uint32_t interval = 0;
    std::uint32_t recent[2] = {}, recent_at[2] = {};
  };
  struct Tensor {
    bool defined_at_entry = false;   ///< InOut
    std::vector<WriteCell> writes;   ///< empty for tensors the kernel does not write
    std::vector<TouchCell> reads;    ///< empty unless the kernel loads the tensor
    std::vector<TouchCell> atomics;  ///< empty unless the kernel updates it atomically
  };

  std::uint32_t group_of(std::uint32_t id) const { return (id - 1) / threads_per_group_; }
  /// Whether an access by `a` and an earlier one by `id` in `interval` race.
  bool unordered(std::uint32_t id, std::uint32_t interval, const Actor& a) const;
  std::optional<TensorFinding> conflict(const TouchCell& c, const Actor& a, Access kind) const;
  static void note(TouchCell& c, const Actor& a);

  std::vector<Tensor> tensors_;
  std::uint32_t threads_per_group_;
};

}  // namespace iron::runtime::sim
