/// Threadgroup memory: race and written bookkeeping per element.
#include "memory.hpp"

namespace iron::runtime::sim {
namespace {

// Another thread than `thread` among the (up to two) recorded ones, or none.
std::optional<Conflict> other_thread(const std::uint32_t (&threads)[2],
                                     const std::uint32_t (&at)[2], std::uint32_t thread,
                                     Access access) {
  for (int i = 0; i < 2; ++i) {
    if (threads[i] != kNoThread && threads[i] != thread) return Conflict{threads[i], access, at[i]};
  }
  return std::nullopt;
}

void remember(std::uint32_t (&threads)[2], std::uint32_t (&at)[2], std::uint32_t thread,
              std::uint32_t instr) {
  for (int i = 0; i < 2; ++i) {
    if (threads[i] == thread) return;
    if (threads[i] == kNoThread) {
      threads[i] = thread;
      at[i] = instr;
      return;
    }
  }
}

}  // namespace

SharedMemory::SharedMemory(const ir::Kernel& kernel) {
  for (const ir::SharedAlloc& a : kernel.shared) {
    allocs_.push_back({a.dtype, std::vector<Slot>(a.size), std::vector<Cell>(a.size),
                       std::vector<std::uint32_t>(a.size), std::vector<std::uint32_t>(a.size),
                       std::vector<std::uint32_t>(a.size), std::vector<LastWrite>(a.size)});
  }
  // An overlay shares bytes with its base and with the base's other overlays. One wider than its
  // base as this launch has it takes bytes of its own on every target (layout_shared_memory), yet
  // it is held to its promise (never live beside them) all the same: a target whose rings keep
  // more stages places it there.
  for (std::size_t i = 0; i < kernel.shared.size(); ++i) {
    for (std::size_t j = 0; j < kernel.shared.size(); ++j) {
      const ir::SharedAlloc& a = kernel.shared[i];
      const ir::SharedAlloc& b = kernel.shared[j];
      const int root_a = a.overlays >= 0 ? a.overlays : static_cast<int>(i);
      const int root_b = b.overlays >= 0 ? b.overlays : static_cast<int>(j);
      if (i != j && root_a == root_b) allocs_[i].overlapping.push_back(static_cast<int>(j));
    }
  }
}

void SharedMemory::start_group() {
  ++epoch_;
  ++group_;
  for (Alloc& a : allocs_) {
    a.stamp = ++next_stamp_;
    a.pending_count = 0;
    a.overwritten_by = -1;
  }
}

std::optional<OverlapFinding> SharedMemory::record_overlap(int alloc, std::uint32_t thread,
                                                           Access access, std::uint32_t instr) {
  Alloc& self = allocs_[alloc];
  if (self.overlapping.empty()) return std::nullopt;
  const bool writes = access != Access::Read;
  for (const int other : self.overlapping) {
    Alloc& o = allocs_[other];
    if (o.pending_count != 0) return OverlapFinding{OverlapFinding::Kind::PendingCopy, other, {}};
    if (o.product_read_count != 0) {
      return OverlapFinding{OverlapFinding::Kind::ProductReads, other, {}};
    }
    if (o.use.epoch != epoch_) continue;
    if (auto w = other_thread(o.use.writers, o.use.writer_at, thread, Access::Write)) {
      return OverlapFinding{OverlapFinding::Kind::Race, other, *w};
    }
    if (!writes) continue;
    if (auto r = other_thread(o.use.readers, o.use.reader_at, thread, Access::Read)) {
      return OverlapFinding{OverlapFinding::Kind::Race, other, *r};
    }
  }
  if (self.use.epoch != epoch_) self.use = Use{epoch_};
  if (writes) {
    remember(self.use.writers, self.use.writer_at, thread, instr);
    for (const int other : self.overlapping) {
      allocs_[other].stamp = ++next_stamp_;
      allocs_[other].overwritten_by = alloc;
    }
  } else {
    remember(self.use.readers, self.use.reader_at, thread, instr);
  }
  return std::nullopt;
}

bool SharedMemory::unordered(const Toucher& earlier, std::uint32_t thread) const {
  if (earlier.thread == kNoThread || earlier.thread == thread) return false;
  const std::uint32_t simdgroup = earlier.thread / kSimdgroupLanes;
  return simdgroup != thread / kSimdgroupLanes || syncs(simdgroup) == earlier.syncs;
}

std::optional<Conflict> SharedMemory::unordered_of(const Toucher (&touchers)[2],
                                                   std::uint32_t thread, Access access) const {
  for (const Toucher& t : touchers) {
    if (unordered(t, thread)) return Conflict{t.thread, access, t.at};
  }
  return std::nullopt;
}

void SharedMemory::remember_touch(Toucher (&touchers)[2], std::uint32_t thread,
                                  std::uint32_t instr) const {
  // A lane of the same simdgroup before one of its barriers races with whatever the new access
  // races with, and with fewer: the new access takes its place.
  const std::uint32_t simdgroup = thread / kSimdgroupLanes;
  const Toucher now{thread, instr, syncs(simdgroup)};
  for (Toucher& t : touchers) {
    const bool superseded =
        t.thread != kNoThread && t.thread / kSimdgroupLanes == simdgroup && t.syncs != now.syncs;
    if (t.thread == thread || t.thread == kNoThread || superseded) {
      t = now;
      return;
    }
  }
}

std::optional<Conflict> SharedMemory::record(int alloc, std::uint32_t index, std::uint32_t thread,
                                             Access access, std::uint32_t instr) {
  Cell& c = allocs_[alloc].cells[index];
  if (c.epoch != epoch_) c = Cell{epoch_};
  if (unordered(c.writer, thread)) return Conflict{c.writer.thread, Access::Write, c.writer.at};
  switch (access) {
    case Access::Read:
      remember_touch(c.readers, thread, instr);
      break;
    case Access::Atomic:
      remember_touch(c.atomics, thread, instr);
      break;
    case Access::Write:
      if (auto r = unordered_of(c.readers, thread, Access::Read)) return r;
      if (auto a = unordered_of(c.atomics, thread, Access::Atomic)) return a;
      c.writer = {thread, instr, syncs(thread / kSimdgroupLanes)};
      break;
  }
  return std::nullopt;
}

}  // namespace iron::runtime::sim
