# Usage: cmake -DIRON=… -DCXX=… -DSOURCE=examples/aot/main.cpp -DWORK=dir -P expect_aot_bundle.cmake
# Writes an AOT bundle of iron_scale, iron_gemm_nk, iron_gemm_warpgroup_nk and
# iron_sdpa_prefill_d128 (bf16; the last has no sm_90a cubin: without tensor maps its producer
# warpgroup's registers stay with it, and the bundle says its sm_90 cubin serves 9.0 devices),
# compiles the example against the
# bundle's header alone (no Iron or CUDA include paths, no libraries), and runs it: "ok" passes;
# with no CUDA driver or device here it prints "SKIPPED:" (the test's skip expression).
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${IRON} build --aot ${WORK}/bundle --dtype bf16
                        --filter "^(iron_scale|iron_gemm_nk|iron_gemm_warpgroup_nk|iron_sdpa_prefill_d128)$"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  if(DEFINED ENV{IRON_ALLOW_NO_NVRTC} AND err MATCHES "needs NVRTC")
    message("SKIPPED: no NVRTC here (IRON_ALLOW_NO_NVRTC is set)")
    return()
  endif()
  message(FATAL_ERROR "iron build --aot failed:\n${out}\n${err}")
endif()
if(NOT out MATCHES "no sm_90a cubin for iron_sdpa_prefill_d128_bf16" OR
   EXISTS ${WORK}/bundle/iron_sdpa_prefill_d128_bf16.sm_90a.cubin OR
   NOT EXISTS ${WORK}/bundle/iron_sdpa_prefill_d128_bf16.sm_90.cubin)
  message(FATAL_ERROR "the prefill's sm_90 cubin should serve 9.0 devices, with a note:\n${out}")
endif()
execute_process(COMMAND ${CXX} -std=c++17 -Wall -Wextra -Werror -I${WORK}/bundle ${SOURCE}
                        -o ${WORK}/aot_app
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the example does not build against the bundle alone:\n${err}")
endif()
execute_process(COMMAND ${WORK}/aot_app ${WORK}/bundle RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(rc EQUAL 77)
  message("SKIPPED: ${out}")
elseif(NOT rc EQUAL 0 OR NOT out MATCHES "\nok\n$")
  message(FATAL_ERROR "the bundle's kernels ran wrong (${rc}):\n${out}")
else()
  message("${out}")
endif()
