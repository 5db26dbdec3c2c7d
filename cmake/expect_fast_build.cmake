# Usage: cmake -DIRON=path/to/iron -DOUT=dir -DLIMIT_SECONDS=2 -P expect_fast_build.cmake
# Runs `iron build --emit all -o OUT` and fails unless it succeeds within LIMIT_SECONDS, as
# measured and printed by iron itself ("… in S s").
execute_process(COMMAND ${IRON} build --emit all -o ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "iron build --emit all failed (exit ${rc})")
endif()
if(NOT out MATCHES "in ([0-9.]+) s\n$")
  message(FATAL_ERROR "iron build did not print its time")
endif()
set(seconds ${CMAKE_MATCH_1})
if(seconds GREATER ${LIMIT_SECONDS})
  message(FATAL_ERROR "iron build --emit all took ${seconds} s, over the ${LIMIT_SECONDS} s budget")
endif()
