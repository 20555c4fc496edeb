# twochains_add_package(NAME <name> SOURCE_DIR <dir> [ISA <isa>...] [JOBS <n>]
#                       [COMPILE_OPTIONS <flag>...]
#                       [ELEMENT_COMPILE_OPTIONS <element>=<flag>...]
#                       [EXTERN_SYMBOLS <name>...]
#                       [EXCLUDE <pattern>...]
#                       [JAM_OBJECTS <jam>=<object library or object>...]
#                       [SIGN_KEY <key.pem>])
#
# Builds the jams and rieds under SOURCE_DIR into a Two-Chains package with
# twochains-pkg-gen as part of the build, and defines:
#   <name>            an INTERFACE library whose include path has the package
#                     header: #include <twochains/packages/<name>.h>
#   <name>_package    the target that builds it
# The package is laid out under ${CMAKE_CURRENT_BINARY_DIR}/twochains/<name>
# (property TWOCHAINS_PACKAGE_PREFIX of <name>) and installed under
# CMAKE_INSTALL_PREFIX by `cmake --install`. ISA defaults to x86_64.
# COMPILE_OPTIONS apply to every element: -I<dir>, -D<macro>, -U<macro>,
# -O<level>, -std=<std> (or -W/-f flags). ELEMENT_COMPILE_OPTIONS add
# flags for one element, after those. EXTERN_SYMBOLS names what the
# receiving program provides to jams beyond rieds and the C library.
# EXCLUDE leaves out what .gitignore-style patterns, relative to
# SOURCE_DIR, match (a vendored library's tests and examples: '*_test.c',
# 'jam_md5/examples/'); a jam folder's .tcignore does the same for its own
# files (docs/porting.md).
# JAM_OBJECTS adds jams given as objects of another compiler rather than
# source (docs/porting.md): <jam>=<target> names an OBJECT library (this
# function builds it position-independent with -fno-plt, and the package
# after it), <jam>=<file.o> an object; give one per ISA the package is
# built for. The entry is <jam>_main.
# SIGN_KEY signs the manifest with that Ed25519 private key (PEM, from
# `openssl genpkey -algorithm ed25519`): manifest.tcm.sig beside it, for
# receivers whose code-trust policy is `signed` (docs/packages.md).
# The package is rebuilt when any file pkg-gen read changes (sources,
# headers, .c files a jam includes: a DEPFILE pkg-gen writes), and when a
# file is added under SOURCE_DIR.
# pkg-gen keeps the element IDs in SOURCE_DIR/twochains.ids: commit it.
function(twochains_add_package)
  cmake_parse_arguments(TC "" "NAME;SOURCE_DIR;JOBS;SIGN_KEY"
                        "ISA;COMPILE_OPTIONS;ELEMENT_COMPILE_OPTIONS;EXTERN_SYMBOLS;EXCLUDE;JAM_OBJECTS"
                        ${ARGN})
  if(TC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "twochains_add_package: unknown arguments: ${TC_UNPARSED_ARGUMENTS}")
  endif()
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
       "${source}/*.amc" "${source}/*.rdc" "${source}/*.c" "${source}/*.h"
       "${source}/.tcignore")
  set(flags)
  foreach(flag IN LISTS TC_COMPILE_OPTIONS)
    if(flag MATCHES "^-[IDUO]" OR flag MATCHES "^-std=")
      list(APPEND flags "${flag}")
    else()
      list(APPEND flags "--flag=${flag}")
    endif()
  endforeach()
  foreach(flag IN LISTS TC_ELEMENT_COMPILE_OPTIONS)
    list(APPEND flags "--element-flag=${flag}")
  endforeach()
  foreach(sym IN LISTS TC_EXTERN_SYMBOLS)
    list(APPEND flags "--extern-symbol=${sym}")
  endforeach()
  foreach(pattern IN LISTS TC_EXCLUDE)
    list(APPEND flags "--exclude=${pattern}")
  endforeach()
  set(object_targets)
  foreach(item IN LISTS TC_JAM_OBJECTS)
    if(NOT item MATCHES "^([A-Za-z0-9_]+)=(.+)$")
      message(FATAL_ERROR "twochains_add_package: JAM_OBJECTS '${item}': expected "
                          "<jam>=<object library target> or <jam>=<object file>")
    endif()
    set(jam "${CMAKE_MATCH_1}")
    set(objects "${CMAKE_MATCH_2}")
    if(TARGET "${objects}")
      get_target_property(type "${objects}" TYPE)
      if(NOT type STREQUAL "OBJECT_LIBRARY")
        message(FATAL_ERROR "twochains_add_package: JAM_OBJECTS '${item}': "
                            "${objects} is a ${type}, not an OBJECT library")
      endif()
      # What jamlink needs of another compiler's objects: every outside
      # reference through the GOT (docs/jamlink.md).
      set_target_properties("${objects}" PROPERTIES POSITION_INDEPENDENT_CODE ON)
      target_compile_options("${objects}" PRIVATE -fno-plt)
      list(APPEND object_targets "${objects}")
      set(objects "$<TARGET_OBJECTS:${objects}>")
    else()
      get_filename_component(objects "${objects}" ABSOLUTE)
    endif()
    list(APPEND inputs "${objects}")
    # One --jam-object per object: an OBJECT library's list is joined
    # with the option between its items and split again as arguments.
    list(APPEND flags "--jam-object=${jam}=$<JOIN:${objects},$<SEMICOLON>--jam-object=${jam}=>")
  endforeach()
  set(signature)
  set(sign_key)
  if(TC_SIGN_KEY)
    # Not checked here: the key may be made by the build (pkg-gen says
    # clearly when it is missing or unusable, before compiling anything).
    get_filename_component(sign_key "${TC_SIGN_KEY}" ABSOLUTE)
    list(APPEND flags --sign-key "${sign_key}")
    set(signature "${manifest}.sig")
  endif()
  set(build_dir "${CMAKE_CURRENT_BINARY_DIR}/twochains-build/${TC_NAME}")
  set(depfile "${build_dir}/package.d")
  set(depfile_arg)
  if(CMAKE_GENERATOR MATCHES "Ninja|Makefiles")
    set(depfile_arg DEPFILE "${depfile}")
  endif()

  add_custom_command(
    OUTPUT "${header}" "${manifest}" ${signature}
    COMMAND "${TWOCHAINS_PKG_GEN}" --package ${TC_NAME} --source "${source}"
            --prefix "${prefix}" --isa ${isas} -j ${TC_JOBS}
            --build-dir "${build_dir}" --depfile "${depfile}" ${flags}
    DEPENDS ${inputs} ${sign_key} ${TWOCHAINS_PKG_GEN_DEPENDS}
    ${depfile_arg}
    COMMENT "Building Two-Chains package ${TC_NAME} (${isas})"
    COMMAND_EXPAND_LISTS
    VERBATIM)
  add_custom_target(${TC_NAME}_package ALL DEPENDS "${header}" "${manifest}" ${signature})
  if(object_targets)
    add_dependencies(${TC_NAME}_package ${object_targets})
  endif()
  add_library(${TC_NAME} INTERFACE)
  target_include_directories(${TC_NAME} INTERFACE "${prefix}/include")
  target_link_libraries(${TC_NAME} INTERFACE TwoChains::headers)
  add_dependencies(${TC_NAME} ${TC_NAME}_package)
  set_target_properties(${TC_NAME} PROPERTIES TWOCHAINS_PACKAGE_PREFIX "${prefix}")
  install(DIRECTORY "${prefix}/" DESTINATION .
          PATTERN "*.so" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
                                     GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endfunction()
