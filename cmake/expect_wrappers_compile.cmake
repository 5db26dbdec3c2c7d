# Usage: cmake -DIRON=… -DOUT=dir -DCXX=… -DINCLUDE=dir -P expect_wrappers_compile.cmake
# Writes the launch-wrapper header with `iron build --emit msl` and compiles it (syntax only).
execute_process(COMMAND ${IRON} build --emit msl -o ${OUT} RESULT_VARIABLE rc OUTPUT_QUIET
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "iron build failed: ${err}")
endif()
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -I${INCLUDE} -x c++
                        ${OUT}/include/iron_kernels.hpp
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the launch-wrapper header does not compile:\n${err}")
endif()
