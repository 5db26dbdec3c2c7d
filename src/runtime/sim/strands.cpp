/// Strands: the two sides of an `if` that both run threads, one of which waits on an mbarrier (a
/// specialized pipeline's producer and consumers), run concurrently, each on a host thread of its
/// own, one at a time, handing the turn over explicitly, so a run is deterministic. A strand runs
/// until it waits for an mbarrier phase that has not completed, or ends; a strand whose wait a
/// completed phase lets pass runs at once (its earliest turn, where early or stale reads show).
/// When no strand can run, the waiting one reports the hang. A finding in one strand unwinds the
/// others and is reported by the group. exit ends the strand whose threads all reach it.
#include <fmt/format.h>

#include "interpreter.hpp"

namespace iron::runtime::sim {
namespace {

/// Thrown into a strand that unwinds because another one failed.
struct StrandAbort {};

}  // namespace

GroupRunner::~GroupRunner() {
  for (auto& s : strands_) {
    if (s->host.joinable()) s->host.join();
  }
}

Active GroupRunner::live_threads(Active active, std::vector<std::uint32_t>& into) const {
  std::vector<std::uint32_t> live;
  live.reserve(active.size());
  for (std::uint32_t t : active) {
    if (exited_[t] == 0) live.push_back(t);
  }
  into = std::move(live);
  return into;
}

void GroupRunner::run_concurrently(const Instr& in, Active then_threads, Active else_threads,
                                   std::uint32_t depth) {
  const std::size_t self = current_;
  const Range sides[2] = {in.body, in.other};
  const Active threads[2] = {then_threads, else_threads};
  std::size_t children[2] = {};
  for (int side = 0; side < 2; ++side) {
    auto strand = std::make_unique<Strand>();
    strand->masks.assign(2 * std::size_t{program_.depth}, std::vector<std::uint32_t>(threads_));
    strand->threads.assign(threads[side].begin(), threads[side].end());
    strand->parent = self;
    const std::size_t id = strands_.size();
    children[side] = id;
    // The host thread waits for its turn, which comes once both sides exist.
    strand->host =
        std::thread([this, id, body = sides[side], depth] { strand_main(id, body, depth + 1); });
    strands_.push_back(std::move(strand));
  }
  Strand& parent = *strands_[self];
  parent.state = Strand::State::Joining;
  parent.children = 2;
  hand_over(static_cast<int>(children[0]));
  for (const std::size_t id : children) strands_[id]->host.join();
  if (!aborting_) return;
  if (self != 0) throw StrandAbort{};
  const std::exception_ptr failure = strand_failure_;
  strand_failure_ = nullptr;
  aborting_ = false;
  strands_.resize(1);
  std::rethrow_exception(failure);
}

void GroupRunner::strand_main(std::size_t id, Range block, std::uint32_t depth) {
  {
    std::unique_lock<std::mutex> lock(turn_mutex_);
    turn_changed_.wait(lock, [&] { return current_ == id; });
  }
  Strand& strand = *strands_[id];
  masks_ = &strand.masks;
  try {
    if (!aborting_) exec(block, Active(strand.threads), depth);
  } catch (const StrandExit&) {
  } catch (const StrandAbort&) {
  } catch (...) {
    if (!aborting_) strand_failure_ = std::current_exception();
    aborting_ = true;
  }
  strand.state = Strand::State::Done;
  Strand& parent = *strands_[strand.parent];
  if (--parent.children == 0) parent.state = Strand::State::Runnable;
  const int next = next_strand(true);  // the parent at the latest, once both sides are done
  const std::lock_guard<std::mutex> lock(turn_mutex_);
  current_ = next >= 0 ? static_cast<std::size_t>(next) : strand.parent;
  turn_changed_.notify_all();
}

int GroupRunner::next_strand(bool any_waiting) {
  const std::size_t n = strands_.size();
  int waiting = -1;
  for (std::size_t k = 1; k <= n; ++k) {
    const std::size_t i = (current_ + k) % n;
    Strand& s = *strands_[i];
    if (s.state == Strand::State::Runnable) return static_cast<int>(i);
    if (s.state != Strand::State::Waiting) continue;
    if (aborting_ || wait_passes(*s.wait, Active(s.waiters))) return static_cast<int>(i);
    if (waiting < 0) waiting = static_cast<int>(i);
  }
  return any_waiting ? waiting : -1;
}

void GroupRunner::hand_over(int next) {
  const std::size_t self = current_;
  std::unique_lock<std::mutex> lock(turn_mutex_);
  current_ = static_cast<std::size_t>(next);
  turn_changed_.notify_all();
  turn_changed_.wait(lock, [&] { return current_ == self; });
  masks_ = &strands_[self]->masks;
}

void GroupRunner::wait_for_phase(const Instr& in, Active active) {
  Strand& self = *strands_[current_];
  while (!wait_passes(in, active)) {
    self.state = Strand::State::Waiting;
    self.wait = &in;
    self.waiters.assign(active.begin(), active.end());
    const int next = next_strand(false);
    if (next < 0 || static_cast<std::size_t>(next) == current_) {
      self.state = Strand::State::Runnable;
      std::uint32_t t = active.front();
      for (std::uint32_t u : active) {
        if ((mbarriers_[barrier_id(in, in.buffer, in.args[0], u)].phases & 1u) ==
            (row(in.args[1])[u] & 1u)) {
          t = u;
          break;
        }
      }
      throw report_.mbarrier_hang(in, t, barrier_name(barrier_id(in, in.buffer, in.args[0], t)),
                                  row(in.args[1])[t] & 1u, hang_state(in, t));
    }
    hand_over(next);
    self.state = Strand::State::Runnable;
    if (aborting_) throw StrandAbort{};
  }
}

std::string GroupRunner::hang_state(const Instr& in, std::uint32_t thread) {
  auto missing = [&](const Instr& wait, std::uint32_t t) {
    const Mbarrier& bar = mbarriers_[barrier_id(wait, wait.buffer, wait.args[0], t)];
    return fmt::format("{} of {} arrivals and {} bytes of TMA copies", bar.arrivals, bar.count,
                       bar.bytes);
  };
  std::string state = missing(in, thread);
  for (std::size_t i = 0; i < strands_.size(); ++i) {
    const Strand& s = *strands_[i];
    if (i == current_ || s.state != Strand::State::Waiting) continue;
    const std::uint32_t t = s.waiters.front();
    const Instr& wait = *s.wait;
    state += fmt::format(
        "; meanwhile {} waits on {} for the phase of parity {}, which waits for {}",
        report_.thread_text(t), barrier_name(barrier_id(wait, wait.buffer, wait.args[0], t)),
        row(wait.args[1])[t] & 1u, missing(wait, t));
  }
  return state;
}

void GroupRunner::wake_waiters() {
  if (!woke_) return;
  woke_ = false;
  if (strands_.size() == 1) return;
  for (std::size_t i = 0; i < strands_.size(); ++i) {
    Strand& s = *strands_[i];
    if (i == current_ || s.state != Strand::State::Waiting) continue;
    if (!wait_passes(*s.wait, Active(s.waiters))) continue;
    hand_over(static_cast<int>(i));
    if (aborting_) throw StrandAbort{};
    return;
  }
}

void GroupRunner::exit_threads(const Instr& in, Active active) {
  const Strand& self = *strands_[current_];
  std::size_t live = 0;
  for (std::uint32_t t : self.threads) live += exited_[t] == 0 ? 1 : 0;
  if (active.size() != live) {
    throw SimError(SimError::Kind::BadArgument,
                   fmt::format("{}: exit reached by {} of the {} threads of its branch at {}: the "
                               "simulator runs exit only where every thread of a branch of an "
                               "if reaches it",
                               program_.kernel->name, active.size(), live, format_loc(in.op->loc)));
  }
  for (std::uint32_t t : active) exited_[t] = 1;
  exits_ += static_cast<std::uint32_t>(active.size());
  throw StrandExit{};
}

}  // namespace iron::runtime::sim
