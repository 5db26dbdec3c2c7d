/// What ptxas says about the machine code it generated, read from its verbose log: per function
/// the registers, barriers, shared memory, stack frame and spills, plus its warnings, so that a
/// check can tell a kernel that touches local memory and `iron inspect` can show the numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace iron::runtime {

/// The resources ptxas reports for one function of a cubin. Fields ptxas does not print for a
/// function (a called device function has no "Used" line) stay 0.
struct FunctionResources {
  std::string function;  ///< as in the cubin: a kernel's name, or a device function's mangled one
  bool entry = false;    ///< a kernel (an entry function), not a device function it calls
  int registers = 0;     ///< per thread
  int barriers = 0;      ///< named barriers
  std::int64_t shared_bytes = 0;            ///< static shared memory per group
  std::int64_t stack_frame_bytes = 0;       ///< per thread, in local memory
  std::int64_t spill_store_bytes = 0;       ///< register spills written to local memory
  std::int64_t spill_load_bytes = 0;        ///< register spills read back
  std::int64_t cumulative_stack_bytes = 0;  ///< the stack with every callee's frame

  /// Whether the function uses local memory: a stack frame, a spill, or a callee's stack.
  [[nodiscard]] bool uses_local_memory() const;
};

/// ptxas's report on one compile.
struct ResourceReport {
  std::vector<FunctionResources> functions;  ///< in the order ptxas names them
  /// ptxas's warnings and the numbered notes it prints as info ("(C7514) Potential Performance
  /// Loss: ..."), each without its "ptxas warning :" or "ptxas info :" prefix.
  std::vector<std::string> warnings;
  std::int64_t global_bytes = 0;  ///< module-scope device variables

  /// The function named `name`; nullptr when ptxas did not report one.
  [[nodiscard]] const FunctionResources* find(std::string_view name) const;
  /// One line per function that uses local memory (its name and every number) and per warning;
  /// empty when there is neither.
  [[nodiscard]] std::vector<std::string> problems() const;
};

/// An NVRTC program log cut in two: the lines ptxas wrote, and everything else (the front
/// end's messages, with their source excerpts).
struct SplitProgramLog {
  std::string ptxas;
  std::string front_end;
};

/// Splits `log` line by line: a line starting with "ptxas" belongs to ptxas. Each part is
/// without blank lines at its ends, so a part with no message is empty.
SplitProgramLog split_program_log(std::string_view log);

/// Reads the lines of ptxas's verbose log (-v) that describe resources and warnings; lines it
/// does not know are skipped, and a log without -v gives an empty report.
ResourceReport parse_ptxas_log(std::string_view log);

/// "912 bytes stack frame, 2096 bytes spill stores, 2348 bytes spill loads, 32 registers": the
/// local-memory numbers of `f` and its register count, for messages.
std::string describe_local_memory(const FunctionResources& f);

}  // namespace iron::runtime
