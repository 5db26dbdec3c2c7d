# Usage: cmake -DIRON=path/to/iron -DOUT=dir -DLIMIT_MS_PER_FORM=15 -P expect_fast_build.cmake
# Runs `iron build --emit all -o OUT` and fails unless it succeeds within LIMIT_MS_PER_FORM
# milliseconds of CPU per kernel form on average (CUDA and MSL for each kernel and dtype), as
# measured and printed by iron itself ("… for N kernel forms … in S s (C s of CPU)"). A budget per
# form keeps the check as strict as the library grows; CPU time, not wall time, keeps it from
# failing when other tests share the machine's cores.
execute_process(COMMAND ${IRON} build --emit all -o ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "iron build --emit all failed (exit ${rc})")
endif()
if(NOT out MATCHES
   "for ([0-9]+) kernel forms .* in [0-9.]+ s \\(([0-9]+)\\.([0-9][0-9][0-9]) s of CPU\\)\n$")
  message(FATAL_ERROR "iron build did not print its form count and CPU time")
endif()
set(forms ${CMAKE_MATCH_1})
math(EXPR ms "${CMAKE_MATCH_2} * 1000 + ${CMAKE_MATCH_3}")
math(EXPR budget "${forms} * ${LIMIT_MS_PER_FORM}")
if(ms GREATER budget)
  message(FATAL_ERROR "iron build --emit all took ${ms} ms of CPU for ${forms} kernel forms, over "
                      "the budget of ${LIMIT_MS_PER_FORM} ms a form (${budget} ms)")
endif()
