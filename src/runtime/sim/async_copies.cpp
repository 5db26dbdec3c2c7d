/// Asynchronous copies into shared memory, per thread: copy.async reads its source and marks its
/// destination pending (and counts as the thread's write from its start, for the race check);
/// async.commit closes a group; async.wait lands the oldest groups. Any access of a pending
/// element is reported, and so is a copy still pending when the group ends.
#include "interpreter.hpp"

namespace iron::runtime::sim {

void GroupRunner::copy_async(const Instr& in, Active active) {
  const Slot* conditions = row(in.args[2]);
  const std::uint32_t size = shared_.size(in.buffer);
  const TensorView& view = bindings_.tensors[in.source];
  for (std::uint32_t t : active) {
    const std::uint32_t to = checked_vector_index(in, t, size);
    PendingCopy copy{instr_index(in), to, in.lanes, {}};
    if (conditions[t] != 0) {
      if (wraps(in.args[1])[t] != 0) report_index_wrap(in, t, in.args[1]);
      const std::int64_t from = int_value(row(in.args[1])[t], in.arg_types[1]);
      if (from < 0 || static_cast<std::uint64_t>(from) + in.lanes > view.count) {
        throw report_.out_of_bounds(in, t, program_.kernel->params[in.source].name, from,
                                    view.count);
      }
      if (in.lanes > 1 && from % in.lanes != 0) {
        throw report_.misaligned(in, t, program_.kernel->params[in.source].name, from);
      }
      with_type(in.type, [&](auto d) {
        constexpr DType D = decltype(d)::value;
        for (std::uint32_t l = 0; l < in.lanes; ++l) {
          const auto i = static_cast<std::uint64_t>(from) + l;
          if (in.on_output) record_tensor(in, t, i, Access::Read);
          copy.values[l] = decode<D>(view.data + i * sizeof_dtype<D>);
        }
      });
    }  // else zeros: the values stay 0, the bits of +0 in every type
    for (std::uint32_t l = 0; l < in.lanes; ++l) {
      if (shared_.pending(in.buffer, to + l)) {
        throw report_.pending_copy(in, t, Access::Write, program_.kernel->shared[in.buffer].name,
                                   to + l, size);
      }
      // The copy may write any time until its wait: a write from now on, for the race check,
      // so overwriting a stage that another thread still reads before a barrier is reported.
      record_shared(in, t, to + l, Access::Write);
      shared_.set_pending(in.buffer, to + l, true);
    }
    open_copies_[t].push_back(copy);
  }
}

void GroupRunner::async_commit(Active active) {
  for (std::uint32_t t : active) {
    committed_copies_[t].push_back(std::move(open_copies_[t]));
    open_copies_[t].clear();
  }
}

void GroupRunner::async_wait(const Instr& in, Active active) {
  for (std::uint32_t t : active) {
    auto& groups = committed_copies_[t];
    while (groups.size() > in.inner) {
      for (const PendingCopy& copy : groups.front()) {
        const Instr& from = program_.code[copy.instr];
        Slot* data = shared_.data(from.buffer);
        for (std::uint32_t l = 0; l < copy.lanes; ++l) {
          shared_.set_pending(from.buffer, copy.index + l, false);
          record_shared(from, t, copy.index + l, Access::Write);
          data[copy.index + l] = copy.values[l];
        }
      }
      groups.pop_front();
    }
  }
}

void GroupRunner::check_copies_landed() {
  for (std::uint32_t t = 0; t < threads_; ++t) {
    std::size_t copies = open_copies_[t].size();
    const PendingCopy* first = nullptr;
    for (const auto& group : committed_copies_[t]) {  // oldest first
      copies += group.size();
      if (first == nullptr && !group.empty()) first = &group.front();
    }
    if (first == nullptr && !open_copies_[t].empty()) first = &open_copies_[t].front();
    if (copies > 0 && first != nullptr) {
      throw report_.copies_not_waited(program_.code[first->instr], t, copies);
    }
  }
}

}  // namespace iron::runtime::sim
