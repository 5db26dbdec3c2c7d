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

/// An earlier access, by another thread in the same barrier interval, that a new access races with.
struct Conflict {
  std::uint32_t thread = 0;
  Access access = Access::Read;
  std::uint32_t instr = 0;  ///< index into Program::code
};

/// The threadgroup allocations of the group being run. Two accesses race when different threads
/// touch one element between the same two barriers and one of them is a plain write.
class SharedMemory {
 public:
  explicit SharedMemory(const ir::Kernel& kernel);

  /// Starts a group: every element unwritten (a read of one is reported, so its stale value
  /// never shows), no access recorded.
  void start_group();
  /// Accesses before a barrier never race with accesses after it.
  void barrier() { ++epoch_; }

  Slot* data(int alloc) { return allocs_[alloc].data.data(); }
  std::uint32_t size(int alloc) const {
    return static_cast<std::uint32_t>(allocs_[alloc].data.size());
  }

  /// Records an access and returns the earlier access it races with, if any.
  std::optional<Conflict> record(int alloc, std::uint32_t index, std::uint32_t thread,
                                 Access access, std::uint32_t instr);

  /// Whether a thread of the group has stored to the element (an atomic on an unwritten element
  /// reads undefined contents, so only stores count).
  bool written(int alloc, std::uint32_t index) const {
    return allocs_[alloc].written[index] == group_;
  }
  void mark_written(int alloc, std::uint32_t index) { allocs_[alloc].written[index] = group_; }

  /// Whether an asynchronous copy into the element has started and not been waited for.
  bool pending(int alloc, std::uint32_t index) const {
    return allocs_[alloc].pending[index] == group_;
  }
  void set_pending(int alloc, std::uint32_t index, bool pending) {
    allocs_[alloc].pending[index] = pending ? group_ : 0;
  }

  /// How many started and unfinished warpgroup products read the element (wg.mma).
  std::uint32_t product_reads(int alloc, std::uint32_t index) const {
    return allocs_[alloc].product_reads[index];
  }
  void add_product_reads(int alloc, std::uint32_t index, std::int32_t delta) {
    allocs_[alloc].product_reads[index] += static_cast<std::uint32_t>(delta);
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
  // Who touched one element in the current barrier interval (two distinct readers and two
  // distinct atomic users are enough to name one that is not the thread asking).
  struct Cell {
    std::uint32_t epoch = 0;
    std::uint32_t writer = kNoThread, writer_at = 0;
    std::uint32_t readers[2] = {kNoThread, kNoThread}, reader_at[2] = {};
    std::uint32_t atomics[2] = {kNoThread, kNoThread}, atomic_at[2] = {};
  };

  struct Alloc {
    DType dtype;
    std::vector<Slot> data;
    std::vector<Cell> cells;
    std::vector<std::uint32_t> written;  ///< the group stamp of the element's last store
    std::vector<std::uint32_t> pending;  ///< the group stamp while a copy into it is pending
    std::vector<std::uint32_t> product_reads;
    std::vector<LastWrite> last_write;  ///< kept only for kernels with warpgroup products
  };

  std::vector<Alloc> allocs_;
  std::uint32_t epoch_ = 0;
  std::uint32_t group_ = 0;  ///< stamp of the group being run
};

}  // namespace iron::runtime::sim
