/// Every target of the registry names a check the tests have, and that check passes what the
/// target emits and fails source that is broken.
#include "target_checks.hpp"

#include <gtest/gtest.h>

#include "checks_test_support.hpp"
#include "iron/codegen/targets.hpp"
#include "iron/dsl/kernel.hpp"

namespace iron::checks_test {
namespace {

TEST(TargetChecks, EveryTargetNamesACheckTheTestsHave) {
  for (const codegen::Target& t : codegen::targets()) {
    EXPECT_NE(find_target_checker(t.checker), nullptr)
        << "target " << t.name << " names the check '" << t.checker
        << "', which tests/codegen/target_checks.hpp does not have";
  }
  EXPECT_EQ(find_target_checker("no-such-check"), nullptr);
}

TEST(TargetChecks, EachCheckPassesEmittedCodeAndFailsBrokenCode) {
  const ir::Kernel traced = dsl::kernel_ir_for("iron_scale", DType::F32);
  for (const codegen::TargetProfile& profile : codegen::TargetProfile::defaults()) {
    const codegen::Target& target = codegen::target_of(profile);
    const TargetChecker* checker = find_target_checker(target.checker);
    ASSERT_NE(checker, nullptr) << target.name;
    if (const std::string missing = checker->missing(); !missing.empty()) {
      if (nvrtc_may_be_missing()) continue;
      ADD_FAILURE() << checker->name << " cannot run here: " << missing;
      continue;
    }
    codegen::CompiledKernel compiled = codegen::compile_kernel(traced, profile);
    EXPECT_EQ(checker->check(compiled, profile), "") << target.name << "\n" << compiled.source;
    compiled.source += "\nthis is not a declaration\n";
    EXPECT_NE(checker->check(compiled, profile), "") << target.name;
  }
}

}  // namespace
}  // namespace iron::checks_test
