# twochains_add_package(NAME <name> SOURCE_DIR <dir> [ISA <isa>...] [JOBS <n>])
#
# Builds the jams and rieds under SOURCE_DIR into a Two-Chains package with
# twochains-pkg-gen as part of the build, and defines:
#   <name>            an INTERFACE library whose include path has the package
#                     header: #include <twochains/packages/<name>.h>
#   <name>_package    the target that builds it
# The package is laid out under ${CMAKE_CURRENT_BINARY_DIR}/twochains/<name>
# (property TWOCHAINS_PACKAGE_PREFIX of <name>) and installed under
# CMAKE_INSTALL_PREFIX by `cmake --install`. ISA defaults to x86_64.
# pkg-gen keeps the element IDs in SOURCE_DIR/twochains.ids: commit it.
function(twochains_add_package)
  cmake_parse_arguments(TC "" "NAME;SOURCE_DIR;JOBS" "ISA" ${ARGN})
  if(NOT TC_NAME OR NOT TC_SOURCE_DIR)
    message(FATAL_ERROR "twochains_add_package: NAME and SOURCE_DIR are required")
  endif()
  if(NOT TC_ISA)
    set(TC_ISA x86_64)
  endif()
  if(NOT TC_JOBS)
    cmake_host_system_information(RESULT TC_JOBS QUERY NUMBER_OF_PHYSICAL_CORES)
  endif()
  get_filename_component(source "${TC_SOURCE_DIR}" ABSOLUTE)
  set(prefix "${CMAKE_CURRENT_BINARY_DIR}/twochains/${TC_NAME}")
  set(header "${prefix}/include/twochains/packages/${TC_NAME}.h")
  set(manifest "${prefix}/lib/twochains/packages/${TC_NAME}/manifest.tcm")
  string(REPLACE ";" "," isas "${TC_ISA}")
  file(GLOB_RECURSE inputs CONFIGURE_DEPENDS
       "${source}/*.amc" "${source}/*.rdc" "${source}/*.h")

  add_custom_command(
    OUTPUT "${header}" "${manifest}"
    COMMAND "${TWOCHAINS_PKG_GEN}" --package ${TC_NAME} --source "${source}"
            --prefix "${prefix}" --isa ${isas} -j ${TC_JOBS}
            --build-dir "${CMAKE_CURRENT_BINARY_DIR}/twochains-build/${TC_NAME}"
    DEPENDS ${inputs} ${TWOCHAINS_PKG_GEN_DEPENDS}
    COMMENT "Building Two-Chains package ${TC_NAME} (${isas})"
    VERBATIM)
  add_custom_target(${TC_NAME}_package ALL DEPENDS "${header}" "${manifest}")
  add_library(${TC_NAME} INTERFACE)
  target_include_directories(${TC_NAME} INTERFACE "${prefix}/include")
  target_link_libraries(${TC_NAME} INTERFACE TwoChains::headers)
  add_dependencies(${TC_NAME} ${TC_NAME}_package)
  set_target_properties(${TC_NAME} PROPERTIES TWOCHAINS_PACKAGE_PREFIX "${prefix}")
  install(DIRECTORY "${prefix}/" DESTINATION .
          PATTERN "*.so" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
                                     GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endfunction()
