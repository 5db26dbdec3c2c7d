# Usage: cmake -DCXX=… -DGUIDE=docs/kernel-style-guide.md -DINCLUDE=dir -DOUT=file.cpp -P …
# Extracts the kernel file template from the style guide (the first ```cpp block of its section
# "## 2. File shape"), writes it to OUT and compiles it against Iron's headers both ways the build
# compiles a kernel file: as iron_kernels does (the kernel alone, which must include nothing of
# the test harness or the bench layer), and as iron_kernel_tests does (kernel_tests.hpp forced
# in, the tests and benches on). So the guide cannot drift from the code.
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
set(flags -std=c++20 -Wall -Wextra -I${INCLUDE})
set(as_tests -include ${INCLUDE}/iron/testing/kernel_tests.hpp)
foreach(library iron_kernels iron_kernel_tests)
  if(library STREQUAL "iron_kernel_tests")
    set(mode_flags ${as_tests})
  else()
    set(mode_flags)
  endif()
  execute_process(COMMAND ${CXX} ${flags} ${mode_flags} -fsyntax-only ${OUT}
    RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT "${err}" STREQUAL "")
    message(FATAL_ERROR "The style guide's template (${GUIDE}, section 2, extracted to ${OUT}) "
      "does not compile cleanly as a kernel file of ${library}:\n${err}${out}")
  endif()
endforeach()

# The headers the kernel part includes: none of the harness's.
execute_process(COMMAND ${CXX} ${flags} -M ${OUT}
  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE headers)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "listing the headers of ${OUT} failed:\n${err}")
endif()
if(headers MATCHES "iron/(testing|bench)/[a-z_]+\\.hpp")
  message(FATAL_ERROR "The style guide's template includes ${CMAKE_MATCH_0} outside its "
    "`#if IRON_KERNEL_TESTS` section: the kernel library would depend on the test harness")
endif()
