# Usage: cmake -DBUILD=dir -DEXAMPLE=dir -DWORK=dir -DCXX=… -DGENERATOR=… -P expect_installed_package.cmake
# Installs the build into WORK/prefix, then configures, builds and runs the example application
# against it with find_package(iron): the package is complete when the program prints "ok".
file(REMOVE_RECURSE ${WORK})
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
step("configuring the example" ${CMAKE_COMMAND} -S ${EXAMPLE} -B ${WORK}/app -G ${GENERATOR}
     -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK}/prefix)
step("building the example" ${CMAKE_COMMAND} --build ${WORK}/app)
step("running the example" ${WORK}/app/iron_example_app)
if(NOT step_output MATCHES "\nok\n$")
  message(FATAL_ERROR "the example ran but did not print ok:\n${step_output}")
endif()
message(STATUS "${step_output}")
