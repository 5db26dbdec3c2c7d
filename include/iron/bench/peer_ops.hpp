/// The peer operations bench/peer_ops.py implements, known to the binary from a list generated
/// at build time (cmake/peer_ops_list.cmake), so `iron bench --dry-run` can check each bench's
/// `peer(op, dims)` without the source tree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace iron::bench {

/// The operation names in bench/peer_ops.py's CASES table, in its order.
const std::vector<std::string_view>& peer_ops();

/// "" when bench/peer_ops.py has operation `op`; else a message naming it and the known ones.
std::string unknown_peer_op(std::string_view op);

}  // namespace iron::bench
