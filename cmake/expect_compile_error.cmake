# Usage: cmake -DCXX=… -DSOURCE=case.cpp -DINCLUDE=dir -P expect_compile_error.cmake
# The case's first line is `// expect-error: REGEX`. Passes when the case fails to compile with
# a message matching REGEX, its first error is reported at a line of the case itself (not inside
# Iron's headers, so the user sees their own line first), and it compiles cleanly with
# -DIRON_CONTROL.
file(STRINGS ${SOURCE} first_line LIMIT_COUNT 1)
string(REGEX REPLACE "^// expect-error: " "" expected "${first_line}")
if(expected STREQUAL first_line)
  message(FATAL_ERROR "${SOURCE}: first line must be `// expect-error: REGEX`")
endif()
set(flags -std=c++20 -fsyntax-only -I${INCLUDE})
execute_process(COMMAND ${CXX} ${flags} ${SOURCE} RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must be rejected (${expected})")
endif()
if(NOT "${err}${out}" MATCHES "${expected}")
  message(FATAL_ERROR "${SOURCE} failed for another reason than `${expected}`:\n${err}")
endif()
string(REGEX MATCH "[^\n]*: (fatal )?error: [^\n]*" first_error "${err}${out}")
string(FIND "${first_error}" "${SOURCE}:" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "${SOURCE}: the first error must name the case's own line, but it is\n"
    "${first_error}\nin:\n${err}")
endif()
execute_process(COMMAND ${CXX} ${flags} -DIRON_CONTROL ${SOURCE} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} with -DIRON_CONTROL must compile, but:\n${err}")
endif()
