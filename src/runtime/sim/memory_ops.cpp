/// Loads, stores (scalar and vector) and atomics on tensors and threadgroup memory, bounds-checked,
/// race-checked and checked for reads of memory nobody wrote.
#include <optional>
#include <string>

#include "interpreter.hpp"

namespace iron::runtime::sim {

using ir::OpKind;

std::uint32_t GroupRunner::checked_index(const Instr& in, std::uint32_t thread,
                                         std::uint64_t count) {
  check_index_wrap(in, thread);
  const std::int64_t i = int_value(row(in.args[0])[thread], in.arg_types[0]);
  if (i < 0 || static_cast<std::uint64_t>(i) >= count) {
    throw report_.out_of_bounds(in, thread, buffer_name(in), i, count);
  }
  return static_cast<std::uint32_t>(i);
}

std::uint32_t GroupRunner::checked_vector_index(const Instr& in, std::uint32_t thread,
                                                std::uint64_t count) {
  check_index_wrap(in, thread);
  const std::int64_t i = int_value(row(in.args[0])[thread], in.arg_types[0]);
  if (i < 0 || static_cast<std::uint64_t>(i) + in.lanes > count) {
    throw report_.out_of_bounds(in, thread, buffer_name(in), i, count);
  }
  if (i % in.lanes != 0) throw report_.misaligned(in, thread, buffer_name(in), i);
  return static_cast<std::uint32_t>(i);
}

const std::string& GroupRunner::buffer_name(const Instr& in) const {
  const ir::Kernel& k = *program_.kernel;
  return in.on_shared ? k.shared[in.buffer].name : k.params[in.buffer].name;
}

void GroupRunner::record_shared(const Instr& in, std::uint32_t thread, std::uint32_t index,
                                Access access) {
  record_shared(in, in.buffer, thread, index, access);
}

void GroupRunner::record_shared(const Instr& in, int alloc, std::uint32_t thread,
                                std::uint32_t index, Access access) {
  const std::string& name = program_.kernel->shared[alloc].name;
  if (shared_.pending(alloc, index)) {
    throw report_.pending_copy(in, thread, access, name, index, shared_.size(alloc));
  }
  if (access != Access::Read && shared_.product_reads(alloc, index) != 0) {
    throw report_.operand_overwritten(in, thread, access, name, index, shared_.size(alloc));
  }
  if (!copy_tags_[alloc].empty()) check_copy_observed(in, thread, alloc, index, access);
  if (auto first = shared_.record(alloc, index, thread, access, instr_index(in))) {
    throw report_.race(in, thread, access, *first, name, index, shared_.size(alloc));
  }
  if (auto found = shared_.record_overlap(alloc, thread, access, instr_index(in))) {
    throw report_.overlap(in, thread, access, *found, name, index,
                          program_.kernel->shared[found->other].name);
  }
  if (access != Access::Read && program_.warpgroup_products) {
    shared_.mark_last_write(alloc, index, thread, proxy_fences_[thread], instr_index(in));
  }
  if (access == Access::Write) return shared_.mark_written(alloc, index);
  if (!shared_.written(alloc, index)) {
    const int by = shared_.overwritten_by(alloc);
    throw report_.unwritten_shared(in, thread, name, index, shared_.size(alloc),
                                   by >= 0 ? program_.kernel->shared[by].name : std::string());
  }
}

void GroupRunner::record_tensor(const Instr& in, std::uint32_t thread, std::uint64_t index,
                                Access access) {
  const Actor a{first_id_ + thread, interval_, instr_index(in)};
  const std::optional<TensorFinding> found =
      access == Access::Read    ? shadow_.load(in.buffer, index, a)
      : access == Access::Write ? shadow_.store(in.buffer, index, a)
                                : shadow_.atomic(in.buffer, index, a);
  if (!found) return;
  const std::string& name = buffer_name(in);
  const std::uint64_t count = bindings_.tensors[in.buffer].count;
  if (found->unwritten) throw report_.unwritten_output(in, thread, name, index, count);
  throw report_.global_race(in, thread, access, *found, name, index, count);
}

void GroupRunner::load(const Instr& in, Active active) {
  if (in.lanes > 1) return vector_load(in, active);
  Slot* r = row(in.result);
  if (in.on_shared) {
    const Slot* data = shared_.data(in.buffer);
    const std::uint32_t count = shared_.size(in.buffer);
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_index(in, t, count);
      record_shared(in, t, i, Access::Read);
      r[t] = data[i];
    }
    return;
  }
  const TensorView& view = bindings_.tensors[in.buffer];
  with_type(in.type, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_index(in, t, view.count);
      if (in.on_output) record_tensor(in, t, i, Access::Read);
      r[t] = decode<D>(view.data + std::size_t{i} * sizeof_dtype<D>);
    }
  });
}

void GroupRunner::store(const Instr& in, Active active) {
  if (in.lanes > 1) return vector_store(in, active);
  const Slot* v = row(in.args[1]);
  if (in.on_shared) {
    Slot* data = shared_.data(in.buffer);
    const std::uint32_t count = shared_.size(in.buffer);
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_index(in, t, count);
      record_shared(in, t, i, Access::Write);
      data[i] = v[t];
    }
    return;
  }
  const TensorView& view = bindings_.tensors[in.buffer];
  with_type(in.type, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_index(in, t, view.count);
      record_tensor(in, t, i, Access::Write);
      encode<D>(v[t], view.data + std::size_t{i} * sizeof_dtype<D>);
    }
  });
}

// Lane l of the vector is element index + l; its value lives in row result + l.
void GroupRunner::vector_load(const Instr& in, Active active) {
  if (in.on_shared) {
    const Slot* data = shared_.data(in.buffer);
    const std::uint32_t count = shared_.size(in.buffer);
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_vector_index(in, t, count);
      for (std::uint32_t l = 0; l < in.lanes; ++l) {
        record_shared(in, t, i + l, Access::Read);
        row(in.result + l)[t] = data[i + l];
      }
    }
    return;
  }
  const TensorView& view = bindings_.tensors[in.buffer];
  with_type(in.type, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_vector_index(in, t, view.count);
      const std::byte* p = view.data + std::size_t{i} * sizeof_dtype<D>;
      for (std::uint32_t l = 0; l < in.lanes; ++l) {
        if (in.on_output) record_tensor(in, t, i + l, Access::Read);
        row(in.result + l)[t] = decode<D>(p + l * sizeof_dtype<D>);
      }
    }
  });
}

void GroupRunner::vector_store(const Instr& in, Active active) {
  const std::uint32_t* lane_rows = program_.lane_args.data() + in.lane_args;
  if (in.on_shared) {
    Slot* data = shared_.data(in.buffer);
    const std::uint32_t count = shared_.size(in.buffer);
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_vector_index(in, t, count);
      for (std::uint32_t l = 0; l < in.lanes; ++l) {
        record_shared(in, t, i + l, Access::Write);
        data[i + l] = row(lane_rows[l])[t];
      }
    }
    return;
  }
  const TensorView& view = bindings_.tensors[in.buffer];
  with_type(in.type, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_vector_index(in, t, view.count);
      std::byte* p = view.data + std::size_t{i} * sizeof_dtype<D>;
      for (std::uint32_t l = 0; l < in.lanes; ++l) {
        record_tensor(in, t, i + l, Access::Write);
        encode<D>(row(lane_rows[l])[t], p + l * sizeof_dtype<D>);
      }
    }
  });
}

// Threads update in increasing order; each gets the value it replaced.
void GroupRunner::atomic(const Instr& in, Active active) {
  Slot* r = row(in.result);
  const Slot* v = row(in.args[1]);
  const std::optional<OpKind> combiner = ir::combiner_of(in.kind);  // none: an exchange
  auto update = [&](Slot old, Slot x) {
    return combiner ? combine(*combiner, in.type, old, x) : x;
  };
  if (in.on_shared) {
    Slot* data = shared_.data(in.buffer);
    const std::uint32_t count = shared_.size(in.buffer);
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_index(in, t, count);
      record_shared(in, t, i, Access::Atomic);
      const Slot old = data[i];
      data[i] = update(old, v[t]);
      r[t] = old;
    }
    return;
  }
  const TensorView& view = bindings_.tensors[in.buffer];
  with_type(in.type, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    for (std::uint32_t t : active) {
      const std::uint32_t i = checked_index(in, t, view.count);
      record_tensor(in, t, i, Access::Atomic);
      std::byte* p = view.data + std::size_t{i} * sizeof_dtype<D>;
      const Slot old = decode<D>(p);
      encode<D>(update(old, v[t]), p);
      r[t] = old;
    }
  });
}

}  // namespace iron::runtime::sim
