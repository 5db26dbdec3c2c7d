/// The peer operation names generated from bench/peer_ops.py, and the check against them.
#include "iron/bench/peer_ops.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace iron::bench {

const std::vector<std::string_view>& peer_ops() {
  static const std::vector<std::string_view> ops = {
#include "peer_ops.inc"
  };
  return ops;
}

std::string unknown_peer_op(std::string_view op) {
  const auto& ops = peer_ops();
  if (std::find(ops.begin(), ops.end(), op) != ops.end()) return "";
  return fmt::format(
      "peer case '{}' is not in bench/peer_ops.py's CASES (add it there; it has: {})", op,
      fmt::join(ops, " "));
}

}  // namespace iron::bench
