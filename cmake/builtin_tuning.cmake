# Usage: cmake -DOUTPUT=builtin_tuning.inc -DFILES="a.txt;b.txt" -P builtin_tuning.cmake
# Writes each committed tuning file (tuning/*.txt) as a C++ initializer {"name", R"(text)"}, so
# that the library carries the configurations measured on the devices Iron is benchmarked on.
set(out "// Generated from tuning/*.txt by cmake/builtin_tuning.cmake; do not edit.\n")
foreach(file ${FILES})
  file(READ ${file} text)
  string(FIND "${text}" ")iron_tuning\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file}: holds the literal's delimiter )iron_tuning\"")
  endif()
  get_filename_component(name ${file} NAME)
  string(APPEND out "{\"${name}\", R\"iron_tuning(${text})iron_tuning\"},\n")
endforeach()
file(WRITE ${OUTPUT} "${out}")
