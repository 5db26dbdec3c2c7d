# Usage: cmake -DPROGRAM=… -DEXPECT_RC=N "-DEXPECT=regex;regex…" -P expect_clean_failure.cmake
# Passes when PROGRAM exits with status EXPECT_RC (an exit, not a signal such as SIGABRT) and its
# output matches every regex.
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "${PROGRAM} ended with `${rc}`, expected exit status ${EXPECT_RC}:\n${out}${err}")
endif()
foreach(regex ${EXPECT})
  if(NOT "${out}${err}" MATCHES "${regex}")
    message(FATAL_ERROR "${PROGRAM}'s output lacks `${regex}`:\n${out}${err}")
  endif()
endforeach()
