# Usage: cmake -DCXX=… -DGUIDE=docs/kernel-style-guide.md -DINCLUDE=dir -DOUT=file.cpp -P …
# Extracts the kernel file template from the style guide (the first ```cpp block of its section
# "## 2. File shape"), writes it to OUT and compiles it against Iron's headers as a kernel file,
# so the guide cannot drift from the code.
file(READ ${GUIDE} text)
string(FIND "${text}" "\n## 2. File shape\n" section)
if(section EQUAL -1)
  message(FATAL_ERROR "${GUIDE}: no section `## 2. File shape`")
endif()
string(SUBSTRING "${text}" ${section} -1 text)
string(FIND "${text}" "\n```cpp\n" open)
string(FIND "${text}" "\n## 3." next_section)
if(open EQUAL -1 OR (NOT next_section EQUAL -1 AND open GREATER next_section))
  message(FATAL_ERROR "${GUIDE}: section 2 has no ```cpp block")
endif()
math(EXPR open "${open} + 8")
string(SUBSTRING "${text}" ${open} -1 text)
string(FIND "${text}" "\n```\n" close)
if(close EQUAL -1)
  message(FATAL_ERROR "${GUIDE}: the template's ```cpp block is not closed")
endif()
string(SUBSTRING "${text}" 0 ${close} code)
file(WRITE ${OUT} "${code}\n")
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -I${INCLUDE} ${OUT}
  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT "${err}" STREQUAL "")
  message(FATAL_ERROR "The style guide's template (${GUIDE}, section 2, extracted to ${OUT}) "
    "does not compile cleanly as a kernel file:\n${err}${out}")
endif()
