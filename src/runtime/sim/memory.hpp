/// Buffers as the interpreter sees them: tensor views, and per-group threadgroup memory with the
/// bookkeeping that finds races between two barriers and reads of elements nobody wrote.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "iron/core/ir.hpp"
#include "value.hpp"

namespace iron::runtime::sim {

/// A tensor argument: raw elements of the parameter's dtype.
struct TensorView {
  std::byte* data = nullptr;
  std::uint64_t count = 0;
};

enum class Access : std::uint8_t { Read, Write, Atomic };

/// "No thread" in the race bookkeeping.
inline constexpr std::uint32_t kNoThread = 0xFFFFFFFFu;

/// Lanes of a simdgroup: threads t and u are one simdgroup's when t / 32 == u / 32.
inline constexpr std::uint32_t kSimdgroupLanes = 32;

/// An earlier access, by another thread in the same barrier interval, that a new access races with.
struct Conflict {
  std::uint32_t thread = 0;
  Access access = Access::Read;
  std::uint32_t instr = 0;  ///< index into Program::code
};

/// Why an access of an allocation conflicts with an allocation sharing its bytes (an overlay and
/// its base, or two overlays of one base): `other` is that allocation.
struct OverlapFinding {
  enum class Kind : std::uint8_t {
    Race,          ///< `conflict` touched `other` in this barrier interval
    PendingCopy,   ///< an asynchronous copy into `other` has not been waited for
    ProductReads,  ///< a started warpgroup product still reads `other`
  };
  Kind kind = Kind::Race;
  int other = -1;
  Conflict conflict;
};

/// The threadgroup allocations of the group being run. Two accesses race when different threads
/// touch one element between the same two barriers and one of them is a plain write; a
/// simdgroup barrier between them orders two lanes of that simdgroup (not other threads).
///
/// Allocations that share bytes (ir::SharedAlloc::overlays) are tracked as wholes: an access of
/// one races with another thread's access of the other in the same barrier interval when either
/// writes, and a write to one leaves every element of the other unwritten (a read of it is
/// reported, as it would read what the other put there).
class SharedMemory {
 public:
  explicit SharedMemory(const ir::Kernel& kernel);

  /// Starts a group: every element unwritten (a read of one is reported, so its stale value
  /// never shows), no access recorded.
  void start_group();
  /// Accesses before a barrier never race with accesses after it.
  void barrier() { ++epoch_; }
  /// Accesses of simdgroup `simdgroup`'s lanes before this never race with its lanes' after it.
  void simdgroup_barrier(std::uint32_t simdgroup) {
    if (simdgroup >= simd_syncs_.size()) simd_syncs_.resize(simdgroup + 1);
    ++simd_syncs_[simdgroup];
  }

  Slot* data(int alloc) { return allocs_[alloc].data.data(); }
  std::uint32_t size(int alloc) const {
    return static_cast<std::uint32_t>(allocs_[alloc].data.size());
  }

  /// Records an access and returns the earlier access it races with, if any.
  std::optional<Conflict> record(int alloc, std::uint32_t index, std::uint32_t thread,
                                 Access access, std::uint32_t instr);

  /// Checks an access against the allocations sharing `alloc`'s bytes and records it as an
  /// access of the whole allocation; a write leaves those others unwritten.
  std::optional<OverlapFinding> record_overlap(int alloc, std::uint32_t thread, Access access,
                                               std::uint32_t instr);
  /// The allocation sharing `alloc`'s bytes whose write last left it unwritten, or -1.
  int overwritten_by(int alloc) const { return allocs_[alloc].overwritten_by; }

  /// Whether a thread of the group has stored to the element since the group started and since
  /// an allocation sharing its bytes was last written (an atomic on an unwritten element reads
  /// undefined contents, so only stores count).
  bool written(int alloc, std::uint32_t index) const {
    return allocs_[alloc].written[index] == allocs_[alloc].stamp;
  }
  void mark_written(int alloc, std::uint32_t index) {
    allocs_[alloc].written[index] = allocs_[alloc].stamp;
  }

  /// Whether an asynchronous copy into the element has started and not been waited for.
  bool pending(int alloc, std::uint32_t index) const {
    return allocs_[alloc].pending[index] == group_;
  }
  void set_pending(int alloc, std::uint32_t index, bool pending) {
    Alloc& a = allocs_[alloc];
    if (pending != (a.pending[index] == group_)) pending ? ++a.pending_count : --a.pending_count;
    a.pending[index] = pending ? group_ : 0;
  }

  /// How many started and unfinished warpgroup products read the element (wg.mma).
  std::uint32_t product_reads(int alloc, std::uint32_t index) const {
    return allocs_[alloc].product_reads[index];
  }
  void add_product_reads(int alloc, std::uint32_t index, std::int32_t delta) {
    allocs_[alloc].product_reads[index] += static_cast<std::uint32_t>(delta);
    allocs_[alloc].product_read_count += static_cast<std::uint32_t>(delta);
  }

  /// The element's last write in the group being run: by `thread` (kNoThread for none) at
  /// instruction `instr`, after `fences` of that thread's fence.proxy.async ops.
  struct LastWrite {
    std::uint32_t group = 0, thread = kNoThread, fences = 0, instr = 0;
  };
  LastWrite last_write(int alloc, std::uint32_t index) const {
    const LastWrite& w = allocs_[alloc].last_write[index];
    return w.group == group_ ? w : LastWrite{};
  }
  void mark_last_write(int alloc, std::uint32_t index, std::uint32_t thread, std::uint32_t fences,
                       std::uint32_t instr) {
    allocs_[alloc].last_write[index] = {group_, thread, fences, instr};
  }

 private:
  // One thread's access of an element: where, and how many barriers its simdgroup had passed.
  struct Toucher {
    std::uint32_t thread = kNoThread, at = 0, syncs = 0;
  };
  // Who touched one element in the current barrier interval (two distinct readers and two
  // distinct atomic users are enough to name one that is not the thread asking).
  struct Cell {
    std::uint32_t epoch = 0;
    Toucher writer;
    Toucher readers[2];
    Toucher atomics[2];
  };
  // The simdgroup barriers simdgroup `s` has passed.
  std::uint32_t syncs(std::uint32_t s) const { return s < simd_syncs_.size() ? simd_syncs_[s] : 0; }
  // Whether `earlier`'s access is unordered with one by `thread` now: another thread, and not
  // a lane of its simdgroup with a simdgroup barrier between.
  bool unordered(const Toucher& earlier, std::uint32_t thread) const;
  // The first of `touchers` unordered with an access by `thread` now, as a Conflict.
  std::optional<Conflict> unordered_of(const Toucher (&touchers)[2], std::uint32_t thread,
                                       Access access) const;
  void remember_touch(Toucher (&touchers)[2], std::uint32_t thread, std::uint32_t instr) const;

  // Who touched a whole allocation in the current barrier interval, for allocations that share
  // bytes (atomics count as writes).
  struct Use {
    std::uint32_t epoch = 0;
    std::uint32_t writers[2] = {kNoThread, kNoThread}, writer_at[2] = {};
    std::uint32_t readers[2] = {kNoThread, kNoThread}, reader_at[2] = {};
  };

  struct Alloc {
    DType dtype;
    std::vector<Slot> data;
    std::vector<Cell> cells;
    std::vector<std::uint32_t> written;  ///< `stamp` as it was at the element's last store
    std::vector<std::uint32_t> pending;  ///< the group stamp while a copy into it is pending
    std::vector<std::uint32_t> product_reads;
    std::vector<LastWrite> last_write;  ///< kept only for kernels with warpgroup products
    std::uint32_t stamp = 0;  ///< new at each group and each write to an overlapping allocation
    std::uint32_t pending_count = 0;       ///< elements with a pending copy
    std::uint32_t product_read_count = 0;  ///< the sum of product_reads
    std::vector<int> overlapping;          ///< the allocations sharing its bytes
    Use use;
    int overwritten_by = -1;
  };

  std::vector<Alloc> allocs_;
  std::uint32_t epoch_ = 0;
  std::uint32_t group_ = 0;                ///< stamp of the group being run
  std::uint32_t next_stamp_ = 0;           ///< the last Alloc::stamp handed out
  std::vector<std::uint32_t> simd_syncs_;  ///< per simdgroup: the simdgroup barriers it passed
};

}  // namespace iron::runtime::sim
