/// Reads ptxas's verbose log, as NVRTC's program log carries it, into a ResourceReport.
#include "iron/runtime/ptxas_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace iron::runtime {
namespace {

constexpr std::string_view kPtxas = "ptxas";

std::string_view trim(std::string_view text) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

/// Calls `fn` on each line of `text`, without its newline.
template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    fn(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

/// "(C7514) Potential Performance Loss: ...": a numbered note, which ptxas prints as info
/// although it reports a problem with the code.
bool is_numbered_note(std::string_view message) {
  if (!starts_with(message, "(C")) return false;
  const std::size_t close = message.find(')');
  if (close == std::string_view::npos || close <= 2) return false;
  const std::string_view digits = message.substr(2, close - 2);
  return std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

/// The name in "'NAME' ..." or "NAME", without the quotes.
std::string unquoted(std::string_view text) {
  text = trim(text);
  if (starts_with(text, "'")) {
    const std::size_t close = text.find('\'', 1);
    return std::string(text.substr(1, close == std::string_view::npos ? close : close - 1));
  }
  return std::string(text);
}

/// Applies one "N unit" item ("used 1 barriers", "912 bytes stack frame") to `f` or `report`.
void apply_field(std::string_view item, FunctionResources* f, ResourceReport& report) {
  item = trim(item);
  if (starts_with(item, "Used ") || starts_with(item, "used ")) item.remove_prefix(5);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
  if (error != std::errc()) return;
  const std::string_view unit = trim(item.substr(static_cast<std::size_t>(end - item.data())));
  if (unit == "bytes gmem") {
    report.global_bytes = value;
    return;
  }
  if (f == nullptr) return;
  if (unit == "registers") {
    f->registers = static_cast<int>(value);
  } else if (unit == "barriers") {
    f->barriers = static_cast<int>(value);
  } else if (unit == "bytes smem") {
    f->shared_bytes = value;
  } else if (unit == "bytes stack frame") {
    f->stack_frame_bytes = value;
  } else if (unit == "bytes spill stores") {
    f->spill_store_bytes = value;
  } else if (unit == "bytes spill loads") {
    f->spill_load_bytes = value;
  } else if (unit == "bytes cumulative stack size") {
    f->cumulative_stack_bytes = value;
  }
}

void apply_fields(std::string_view items, FunctionResources* f, ResourceReport& report) {
  std::size_t start = 0;
  while (start <= items.size()) {
    const std::size_t comma = items.find(',', start);
    apply_field(items.substr(start, comma == std::string_view::npos ? comma : comma - start), f,
                report);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

/// Reads ptxas's lines one at a time, remembering the function they describe.
class LogReader {
 public:
  void line(std::string_view text) {
    if (!starts_with(text, kPtxas)) return;
    text = trim(text.substr(kPtxas.size()));
    if (starts_with(text, ".")) {  // "ptxas         .     0 bytes stack frame, ..."
      apply_fields(text.substr(1), current(), report_);
      return;
    }
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view head = trim(text.substr(0, colon));
    const std::string_view kind = head.substr(head.find_last_of(' ') + 1);
    const std::string_view message = trim(text.substr(colon + 1));
    if (kind == "warning") {
      report_.warnings.emplace_back(message);
    } else if (kind == "info") {
      info(message);
    }
  }

  ResourceReport take() { return std::move(report_); }

 private:
  void info(std::string_view message) {
    constexpr std::string_view kEntry = "Compiling entry function ";
    constexpr std::string_view kProperties = "Function properties for ";
    if (is_numbered_note(message)) {
      report_.warnings.emplace_back(message);
    } else if (starts_with(message, kEntry)) {
      select(unquoted(message.substr(kEntry.size())));
      report_.functions[current_].entry = true;
    } else if (starts_with(message, kProperties)) {
      select(unquoted(message.substr(kProperties.size())));
    } else if (starts_with(message, "Used ")) {
      apply_fields(message, current(), report_);
    } else if (message.find("bytes gmem") != std::string_view::npos) {
      apply_fields(message, nullptr, report_);
    }
  }

  /// Makes the function named `name` the one later lines describe, adding it when new.
  void select(const std::string& name) {
    const auto& all = report_.functions;
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const FunctionResources& f) { return f.function == name; });
    current_ = static_cast<std::size_t>(it - all.begin());
    if (it == all.end()) report_.functions.push_back({.function = name});
  }

  FunctionResources* current() {
    return current_ < report_.functions.size() ? &report_.functions[current_] : nullptr;
  }

  ResourceReport report_;
  std::size_t current_ = static_cast<std::size_t>(-1);
};

}  // namespace

bool FunctionResources::uses_local_memory() const {
  return stack_frame_bytes > 0 || spill_store_bytes > 0 || spill_load_bytes > 0 ||
         cumulative_stack_bytes > 0;
}

const FunctionResources* ResourceReport::find(std::string_view name) const {
  const auto it = std::find_if(functions.begin(), functions.end(),
                               [&](const FunctionResources& f) { return f.function == name; });
  return it == functions.end() ? nullptr : &*it;
}

std::vector<std::string> ResourceReport::problems() const {
  std::vector<std::string> out;
  for (const FunctionResources& f : functions) {
    if (f.uses_local_memory()) {
      out.push_back(fmt::format("{} uses local memory: {}", f.function, describe_local_memory(f)));
    }
  }
  for (const std::string& warning : warnings) out.push_back("ptxas: " + warning);
  return out;
}

SplitProgramLog split_program_log(std::string_view log) {
  SplitProgramLog split;
  for_each_line(log, [&](std::string_view line) {
    std::string& part = starts_with(line, kPtxas) ? split.ptxas : split.front_end;
    if (part.empty() && trim(line).empty()) return;
    part.append(line).push_back('\n');
  });
  split.ptxas = std::string(trim(split.ptxas));
  split.front_end = std::string(trim(split.front_end));
  return split;
}

ResourceReport parse_ptxas_log(std::string_view log) {
  LogReader reader;
  for_each_line(log, [&](std::string_view line) { reader.line(line); });
  return reader.take();
}

std::string describe_local_memory(const FunctionResources& f) {
  return fmt::format(
      "{} bytes stack frame, {} bytes spill stores, {} bytes spill loads, {} bytes cumulative "
      "stack, {} registers",
      f.stack_frame_bytes, f.spill_store_bytes, f.spill_load_bytes, f.cumulative_stack_bytes,
      f.registers);
}

}  // namespace iron::runtime
