/// Threadgroup memory: race and written bookkeeping per element.
#include "memory.hpp"

namespace iron::runtime::sim {
namespace {

// Another thread than `thread` among the (up to two) recorded ones, or none.
std::optional<Conflict> other(const std::uint32_t (&threads)[2], const std::uint32_t (&at)[2],
                              std::uint32_t thread, Access access) {
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
}

void SharedMemory::start_group() {
  ++epoch_;
  ++group_;
}

std::optional<Conflict> SharedMemory::record(int alloc, std::uint32_t index, std::uint32_t thread,
                                             Access access, std::uint32_t instr) {
  Cell& c = allocs_[alloc].cells[index];
  if (c.epoch != epoch_) c = Cell{epoch_};
  if (c.writer != kNoThread && c.writer != thread)
    return Conflict{c.writer, Access::Write, c.writer_at};
  switch (access) {
    case Access::Read:
      remember(c.readers, c.reader_at, thread, instr);
      break;
    case Access::Atomic:
      remember(c.atomics, c.atomic_at, thread, instr);
      break;
    case Access::Write:
      if (auto r = other(c.readers, c.reader_at, thread, Access::Read)) return r;
      if (auto a = other(c.atomics, c.atomic_at, thread, Access::Atomic)) return a;
      c.writer = thread;
      c.writer_at = instr;
      break;
  }
  return std::nullopt;
}

}  // namespace iron::runtime::sim
