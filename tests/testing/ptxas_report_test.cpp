/// The ptxas log reader on logs NVRTC 13.0 printed with --ptxas-options=-v for sm_90/sm_90a:
/// registers, barriers, shared memory, stack, spills, device functions and warnings.
#include "iron/runtime/ptxas_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace iron::runtime {
namespace {

constexpr const char* kOneKernel = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'iron_check_scale' for 'sm_90'
ptxas info    : Function properties for iron_check_scale
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 6.729 ms
)";

/// Three kernels in one program, one calling a device function that was not inlined.
constexpr const char* kSharedAndCall = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'iron_check_call' for 'sm_90'
ptxas info    : Function properties for iron_check_call
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 3.093 ms
ptxas info    : Function properties for _Z6helperf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'iron_check_shared' for 'sm_90'
ptxas info    : Function properties for iron_check_shared
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 2.050 ms
ptxas info    : Compiling entry function 'iron_check_local' for 'sm_90'
ptxas info    : Function properties for iron_check_local
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 132 registers, used 0 barriers
ptxas info    : Compile time = 22.867 ms
)";

/// 96 floats per thread under __launch_bounds__(1024, 2), with -warn-spills.
constexpr const char* kSpills =
    R"(ptxas warning : Registers are spilled to local memory in function 'iron_check_spill', 2096 bytes spill stores, 2348 bytes spill loads
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'iron_check_spill' for 'sm_90'
ptxas info    : Function properties for iron_check_spill
ptxas         .     912 bytes stack frame, 2096 bytes spill stores, 2348 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 912 bytes cumulative stack size
ptxas info    : Compile time = 158.768 ms
)";

/// A device variable, and a kernel whose stack is its callee's dynamically indexed array.
constexpr const char* kCalleeStack = R"(ptxas info    : 64 bytes gmem
ptxas info    : Compiling entry function 'iron_check_deep' for 'sm_90'
ptxas info    : Function properties for iron_check_deep
ptxas         .     128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 128 bytes cumulative stack size
ptxas info    : Compile time = 48.499 ms
ptxas info    : Function properties for _Z4deepPKii
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";

/// wgmma whose accumulator is read while it is in flight, for sm_90a.
constexpr const char* kWgmmaNotes =
    R"(ptxas info    : (C7517) warpgroup.wait is injected in around line 50 by compiler to allow use of registers defined by GMMA in function 'iron_check_wgmma'
ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function 'iron_check_wgmma'
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'iron_check_wgmma' for 'sm_90a'
ptxas info    : Function properties for iron_check_wgmma
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 0 barriers
ptxas info    : Compile time = 14.629 ms
)";

/// setmaxnreg without launch bounds, for sm_90a.
constexpr const char* kSetmaxnregNote =
    R"(ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'iron_check_maxnreg' for 'sm_90a'
ptxas info    : Function properties for iron_check_maxnreg
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 6.741 ms
)";

/// A front-end warning, then ptxas's report, as one program log.
constexpr const char* kFrontEndAndPtxas =
    R"(k.cu(2): warning #177-D: variable "unused" was declared but never referenced
    int unused = 3;
        ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'iron_check_warns' for 'sm_90'
ptxas info    : Function properties for iron_check_warns
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 7.054 ms

)";

TEST(PtxasReport, ReadsOneKernel) {
  const ResourceReport report = parse_ptxas_log(kOneKernel);
  ASSERT_EQ(report.functions.size(), 1U);
  const FunctionResources& f = report.functions[0];
  EXPECT_EQ(f.function, "iron_check_scale");
  EXPECT_TRUE(f.entry);
  EXPECT_EQ(f.registers, 10);
  EXPECT_EQ(f.barriers, 0);
  EXPECT_EQ(f.shared_bytes, 0);
  EXPECT_FALSE(f.uses_local_memory());
  EXPECT_TRUE(report.warnings.empty());
  EXPECT_TRUE(report.problems().empty());
}

TEST(PtxasReport, ReadsSeveralKernelsSharedMemoryAndADeviceFunction) {
  const ResourceReport report = parse_ptxas_log(kSharedAndCall);
  ASSERT_EQ(report.functions.size(), 4U);
  EXPECT_EQ(report.functions[0].function, "iron_check_call");
  const FunctionResources* helper = report.find("_Z6helperf");
  ASSERT_NE(helper, nullptr);
  EXPECT_FALSE(helper->entry);
  EXPECT_EQ(helper->registers, 0);
  const FunctionResources* shared = report.find("iron_check_shared");
  ASSERT_NE(shared, nullptr);
  EXPECT_TRUE(shared->entry);
  EXPECT_EQ(shared->registers, 14);
  EXPECT_EQ(shared->barriers, 1);
  EXPECT_EQ(shared->shared_bytes, 1024);
  EXPECT_EQ(report.find("iron_check_local")->registers, 132);
  EXPECT_EQ(report.find("iron_check_nothing"), nullptr);
  EXPECT_TRUE(report.problems().empty());
}

TEST(PtxasReport, ReportsSpillsWithEveryNumber) {
  const ResourceReport report = parse_ptxas_log(kSpills);
  ASSERT_EQ(report.functions.size(), 1U);
  const FunctionResources& f = report.functions[0];
  EXPECT_EQ(f.stack_frame_bytes, 912);
  EXPECT_EQ(f.spill_store_bytes, 2096);
  EXPECT_EQ(f.spill_load_bytes, 2348);
  EXPECT_EQ(f.cumulative_stack_bytes, 912);
  EXPECT_EQ(f.registers, 32);
  EXPECT_TRUE(f.uses_local_memory());
  EXPECT_EQ(report.problems(),
            (std::vector<std::string>{
                "iron_check_spill uses local memory: 912 bytes stack frame, 2096 bytes spill "
                "stores, 2348 bytes spill loads, 912 bytes cumulative stack, 32 registers",
                "ptxas: Registers are spilled to local memory in function 'iron_check_spill', "
                "2096 bytes spill stores, 2348 bytes spill loads"}));
}

TEST(PtxasReport, ReportsACalleesStackOnTheKernelAndGlobalBytes) {
  const ResourceReport report = parse_ptxas_log(kCalleeStack);
  EXPECT_EQ(report.global_bytes, 64);
  const FunctionResources* kernel = report.find("iron_check_deep");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->stack_frame_bytes, 128);
  EXPECT_EQ(kernel->cumulative_stack_bytes, 128);
  EXPECT_TRUE(kernel->uses_local_memory());
  EXPECT_FALSE(report.find("_Z4deepPKii")->uses_local_memory());
  EXPECT_EQ(report.problems().size(), 1U);
}

TEST(PtxasReport, NumberedInfoNotesAreWarnings) {
  const ResourceReport wgmma = parse_ptxas_log(kWgmmaNotes);
  ASSERT_EQ(wgmma.warnings.size(), 2U);
  EXPECT_EQ(wgmma.warnings[0].rfind("(C7517) warpgroup.wait is injected", 0), 0U);
  EXPECT_EQ(wgmma.warnings[1].rfind("(C7514) Potential Performance Loss: wgmma.mma_async", 0), 0U);
  EXPECT_EQ(wgmma.find("iron_check_wgmma")->registers, 30);
  EXPECT_EQ(wgmma.problems().size(), 2U);

  const ResourceReport maxnreg = parse_ptxas_log(kSetmaxnregNote);
  EXPECT_EQ(maxnreg.warnings,
            (std::vector<std::string>{"(C7508) Potential Performance Loss: 'setmaxnreg' ignored; "
                                      "unable to determine register count at entry."}));
}

TEST(PtxasReport, SplitsTheFrontEndsMessagesFromPtxas) {
  const SplitProgramLog split = split_program_log(kFrontEndAndPtxas);
  EXPECT_EQ(split.front_end.rfind("k.cu(2): warning #177-D", 0), 0U) << split.front_end;
  EXPECT_EQ(split.front_end.back(), '"') << split.front_end;  // ends with the remark
  EXPECT_EQ(split.front_end.find("ptxas"), std::string::npos);
  EXPECT_EQ(split.ptxas.rfind("ptxas info    : 0 bytes gmem", 0), 0U);
  EXPECT_EQ(split.ptxas.find("warning"), std::string::npos);
  EXPECT_EQ(parse_ptxas_log(split.ptxas).find("iron_check_warns")->registers, 8);

  const SplitProgramLog quiet = split_program_log(kOneKernel);
  EXPECT_EQ(quiet.front_end, "");
  EXPECT_EQ(quiet.ptxas.back(), 's');  // "Compile time = 6.729 ms", no newline after it
}

TEST(PtxasReport, AnEmptyOrForeignLogGivesAnEmptyReport) {
  EXPECT_TRUE(parse_ptxas_log("").functions.empty());
  const ResourceReport foreign = parse_ptxas_log(
      "k.cu(1): error: identifier \"x\" is undefined\n"
      "ptxas application ptx input, line 33; error   : Arguments mismatch for instruction 'vote'\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n"
      "ptxas         .     8 bytes stack frame\n");
  EXPECT_TRUE(foreign.functions.empty());
  EXPECT_TRUE(foreign.warnings.empty());
}

TEST(PtxasReport, SkipsFieldsItDoesNotKnow) {
  const ResourceReport report = parse_ptxas_log(
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Used 12 registers, 368 bytes cmem[0], used 2 barriers, 16 bytes smem\n");
  const FunctionResources& f = report.functions.at(0);
  EXPECT_EQ(f.registers, 12);
  EXPECT_EQ(f.barriers, 2);
  EXPECT_EQ(f.shared_bytes, 16);
}

}  // namespace
}  // namespace iron::runtime
