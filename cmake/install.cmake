# `cmake --install`: the headers, the layers an application links (core, dsl, codegen, runtime),
# the kernel library's objects, the `iron` command, and a package that `find_package(iron)`
# finds (docs/applications.md). iron::iron is what an application links: every library kernel
# registered, and the runtime that traces, compiles and launches them.
include(CMakePackageConfigHelpers)

foreach(layer core dsl codegen runtime kernels)
  set_target_properties(iron_${layer} PROPERTIES EXPORT_NAME ${layer})
endforeach()
add_library(iron_application INTERFACE)
# The kernel objects themselves (a link to an object library only brings them in directly), so
# that every kernel's registration is in the application.
target_sources(iron_application INTERFACE $<BUILD_INTERFACE:$<TARGET_OBJECTS:iron_kernels>>
  $<INSTALL_INTERFACE:$<TARGET_OBJECTS:iron::kernels>>)
target_link_libraries(iron_application INTERFACE iron_kernels iron_runtime)
set_target_properties(iron_application PROPERTIES EXPORT_NAME iron)

install(TARGETS iron_core iron_dsl iron_codegen iron_runtime iron_kernels iron_application
  EXPORT ironTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/iron/kernels
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The command line, also exported as iron::cli (an application's build can run `iron build`).
set_target_properties(iron PROPERTIES EXPORT_NAME cli)
install(TARGETS iron EXPORT ironTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/iron DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(IRON_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/iron)
install(EXPORT ironTargets NAMESPACE iron:: DESTINATION ${IRON_PACKAGE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/ironConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ironConfig.cmake INSTALL_DESTINATION ${IRON_PACKAGE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ironConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ironConfig.cmake ${CMAKE_BINARY_DIR}/ironConfigVersion.cmake
  DESTINATION ${IRON_PACKAGE_DIR})
