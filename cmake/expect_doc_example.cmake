# Usage: cmake -DIRON=path/to/iron -DDOC=docs/compiler.md -P expect_doc_example.cmake
# The IR example of docs/compiler.md (the first ``` block of its section "### Example") must be
# exactly what `iron inspect iron_scale --ir --dtype f16` prints, so the doc cannot show an old
# kernel.
file(READ ${DOC} text)
string(FIND "${text}" "\n### Example\n" section)
if(section EQUAL -1)
  message(FATAL_ERROR "${DOC}: no section `### Example`")
endif()
string(SUBSTRING "${text}" ${section} -1 text)
string(FIND "${text}" "\n```\n" open)
if(open EQUAL -1)
  message(FATAL_ERROR "${DOC}: the example has no ``` block")
endif()
math(EXPR open "${open} + 5")
string(SUBSTRING "${text}" ${open} -1 text)
string(FIND "${text}" "```\n" close)
string(SUBSTRING "${text}" 0 ${close} example)
execute_process(COMMAND ${IRON} inspect iron_scale --ir --dtype f16
  RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "iron inspect iron_scale failed:\n${err}")
endif()
if(NOT example STREQUAL printed)
  message(FATAL_ERROR "${DOC}: the example is not what `iron inspect iron_scale --ir --dtype f16` "
    "prints now; paste its output into the example.\nThe doc shows:\n${example}\n"
    "iron prints:\n${printed}")
endif()
