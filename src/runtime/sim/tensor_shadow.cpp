/// Race and initcheck bookkeeping on the tensors a kernel writes.
#include "tensor_shadow.hpp"

namespace iron::runtime::sim {

TensorShadow::TensorShadow(const Program& program, const std::vector<TensorView>& tensors,
                           std::uint32_t threads_per_group)
    : tensors_(program.kernel->params.size()), threads_per_group_(threads_per_group) {
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const ir::Param& p = program.kernel->params[i];
    if (!ir::is_output(p.kind)) continue;
    const TensorUse& use = program.tensor_use[i];
    const std::uint64_t count = tensors[i].count;
    Tensor& t = tensors_[i];
    t.defined_at_entry = p.kind == ir::ParamKind::InOut;
    t.writes.resize(count);
    if (use.loaded) t.reads.resize(count);
    if (use.atomic) t.atomics.resize(count);
  }
}

bool TensorShadow::unordered(std::uint32_t id, std::uint32_t interval, const Actor& a) const {
  return id != a.id && (interval == a.interval || group_of(id) != group_of(a.id));
}

// Every earlier access is by a group no later than a's (groups run in order), so the first one is
// by another group exactly when any is; within a's group only its current interval races.
std::optional<TensorFinding> TensorShadow::conflict(const TouchCell& c, const Actor& a,
                                                    Access kind) const {
  if (c.first != 0 && group_of(c.first) != group_of(a.id)) {
    return TensorFinding{false, c.first, c.first_at, kind};
  }
  if (c.interval != a.interval) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    if (c.recent[k] != 0 && c.recent[k] != a.id) {
      return TensorFinding{false, c.recent[k], c.recent_at[k], kind};
    }
  }
  return std::nullopt;
}

void TensorShadow::note(TouchCell& c, const Actor& a) {
  if (c.first == 0) {
    c.first = a.id;
    c.first_at = a.instr;
  }
  if (c.interval != a.interval) {
    c.interval = a.interval;
    c.recent[0] = a.id;
    c.recent_at[0] = a.instr;
    c.recent[1] = 0;
    return;
  }
  for (int k = 0; k < 2; ++k) {
    if (c.recent[k] == a.id) return;
    if (c.recent[k] == 0) {
      c.recent[k] = a.id;
      c.recent_at[k] = a.instr;
      return;
    }
  }
}

std::optional<TensorFinding> TensorShadow::store(int param, std::uint64_t index, const Actor& a) {
  Tensor& t = tensors_[param];
  WriteCell& w = t.writes[index];
  if (w.owner != 0 && w.owner != a.id) {
    return TensorFinding{false, w.owner, w.owner_at, Access::Write};
  }
  if (!t.reads.empty()) {
    if (auto r = conflict(t.reads[index], a, Access::Read)) return r;
  }
  if (!t.atomics.empty()) {
    if (auto r = conflict(t.atomics[index], a, Access::Atomic)) return r;
  }
  w.owner = a.id;
  w.owner_at = a.instr;
  w.owner_interval = a.interval;
  w.last_at = a.instr + 1;
  return std::nullopt;
}

std::optional<TensorFinding> TensorShadow::load(int param, std::uint64_t index, const Actor& a) {
  Tensor& t = tensors_[param];
  const WriteCell& w = t.writes[index];
  if (!t.defined_at_entry && w.last_at == 0) return TensorFinding{true};
  if (w.owner != 0 && unordered(w.owner, w.owner_interval, a)) {
    return TensorFinding{false, w.owner, w.owner_at, Access::Write};
  }
  if (!t.atomics.empty()) {
    if (auto r = conflict(t.atomics[index], a, Access::Atomic)) return r;
  }
  note(t.reads[index], a);
  return std::nullopt;
}

std::optional<TensorFinding> TensorShadow::atomic(int param, std::uint64_t index, const Actor& a) {
  Tensor& t = tensors_[param];
  WriteCell& w = t.writes[index];
  if (!t.defined_at_entry && w.last_at == 0) return TensorFinding{true};
  if (w.owner != 0 && unordered(w.owner, w.owner_interval, a)) {
    return TensorFinding{false, w.owner, w.owner_at, Access::Write};
  }
  if (!t.reads.empty()) {
    if (auto r = conflict(t.reads[index], a, Access::Read)) return r;
  }
  note(t.atomics[index], a);
  w.last_at = a.instr + 1;
  return std::nullopt;
}

bool TensorShadow::overlaps(const TensorShadow& other) const {
  for (std::size_t p = 0; p < tensors_.size(); ++p) {
    const Tensor& a = tensors_[p];
    const Tensor& b = other.tensors_[p];
    for (std::size_t i = 0; i < a.writes.size(); ++i) {
      const bool wrote_a = a.writes[i].last_at != 0;
      const bool wrote_b = b.writes[i].last_at != 0;
      const bool read_a = !a.reads.empty() && a.reads[i].first != 0;
      const bool read_b = !b.reads.empty() && b.reads[i].first != 0;
      if ((wrote_a && (wrote_b || read_b)) || (wrote_b && read_a)) return true;
    }
  }
  return false;
}

void TensorShadow::export_writers(const Program& program, SimWriters& out,
                                  const TensorShadow* also) const {
  out.writer.assign(tensors_.size(), {});
  out.where.clear();
  std::vector<std::uint32_t> slot_of(program.code.size() + 1, 0);  // 1 + instr -> 1 + where
  auto slot = [&](std::uint32_t last_at) -> std::uint32_t {
    if (last_at == 0) return 0;
    if (slot_of[last_at] == 0) {
      out.where.push_back(format_loc(program.code[last_at - 1].op->loc));
      slot_of[last_at] = static_cast<std::uint32_t>(out.where.size());
    }
    return slot_of[last_at];
  };
  for (std::size_t p = 0; p < tensors_.size(); ++p) {
    const std::vector<WriteCell>& mine = tensors_[p].writes;
    std::vector<std::uint32_t>& writer = out.writer[p];
    writer.resize(mine.size());
    for (std::size_t i = 0; i < mine.size(); ++i) {
      std::uint32_t last = mine[i].last_at;
      if (last == 0 && also != nullptr) last = also->tensors_[p].writes[i].last_at;
      writer[i] = slot(last);
    }
  }
}

}  // namespace iron::runtime::sim

namespace iron::runtime {

std::optional<std::string> SimWriters::of(std::size_t param, std::uint64_t index) const {
  if (param >= writer.size() || index >= writer[param].size()) return std::nullopt;
  const std::uint32_t w = writer[param][index];
  return w == 0 ? std::string() : where[w - 1];
}

}  // namespace iron::runtime
