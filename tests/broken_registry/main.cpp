// A program with broken registrations: it must reach main (no abort in a static initialiser),
// and every registry read must throw an Error naming each problem. Prints the Error and exits
// with 3, as the CLI does for an Error; exits with 1 when a read does not throw or differs.
#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "iron/bench/registry.hpp"
#include "iron/core/error.hpp"
#include "iron/dsl/kernel.hpp"
#include "iron/dsl/registration.hpp"
#include "iron/testing/registry.hpp"

int main() {
  const std::vector<std::pair<const char*, std::function<void()>>> reads = {
      {"check_registrations", [] { iron::dsl::check_registrations(); }},
      {"registered_kernels", [] { iron::dsl::registered_kernels(); }},
      {"find_kernel", [] { iron::dsl::find_kernel("dup_copy"); }},
      {"kernel_ir_for", [] { iron::dsl::kernel_ir_for("dup_copy", iron::DType::F32); }},
      {"registered_tests", [] { iron::testing::registered_tests(); }},
      {"registered_benches", [] { iron::bench::registered_benches(); }},
  };
  std::string message;
  for (const auto& [name, read] : reads) {
    try {
      read();
      fmt::print(stderr, "{} returned although the registrations are broken\n", name);
      return 1;
    } catch (const iron::Error& e) {
      if (!message.empty() && message != e.what()) {
        fmt::print(stderr, "{} reported another error:\n{}\n", name, e.what());
        return 1;
      }
      message = e.what();
    }
  }
  fmt::print(stderr, "broken_registry: {}\n", message);
  return 3;
}
