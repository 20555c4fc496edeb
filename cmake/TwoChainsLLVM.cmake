# Locates LLVM, Clang and LLD 19 through their CMake package configs.
# Debian installs them under /usr/lib/llvm-19; LLVM_DIR/Clang_DIR override.

set(TWOCHAINS_LLVM_MAJOR 19)
set(_tc_llvm_root "/usr/lib/llvm-${TWOCHAINS_LLVM_MAJOR}")

find_package(LLVM CONFIG HINTS "${_tc_llvm_root}/lib/cmake/llvm")
if(NOT LLVM_FOUND)
  message(FATAL_ERROR
    "Two-Chains needs LLVM ${TWOCHAINS_LLVM_MAJOR} development files "
    "(Debian: llvm-${TWOCHAINS_LLVM_MAJOR}-dev). Run scripts/install-deps.sh "
    "or point LLVM_DIR at <llvm>/lib/cmake/llvm.")
endif()
if(NOT LLVM_VERSION_MAJOR EQUAL TWOCHAINS_LLVM_MAJOR)
  message(FATAL_ERROR
    "Two-Chains needs LLVM ${TWOCHAINS_LLVM_MAJOR}, but LLVM_DIR=${LLVM_DIR} "
    "is LLVM ${LLVM_PACKAGE_VERSION}. Point LLVM_DIR at an LLVM "
    "${TWOCHAINS_LLVM_MAJOR} install (Debian: ${_tc_llvm_root}/lib/cmake/llvm).")
endif()

find_package(Clang CONFIG HINTS "${LLVM_INSTALL_PREFIX}/lib/cmake/clang" NO_DEFAULT_PATH)
if(NOT Clang_FOUND)
  message(FATAL_ERROR
    "Two-Chains needs Clang ${TWOCHAINS_LLVM_MAJOR} development files matching "
    "LLVM ${LLVM_PACKAGE_VERSION} (Debian: libclang-${TWOCHAINS_LLVM_MAJOR}-dev).")
endif()

find_package(LLD CONFIG HINTS "${LLVM_INSTALL_PREFIX}/lib/cmake/lld" NO_DEFAULT_PATH)
if(NOT LLD_FOUND)
  message(FATAL_ERROR
    "Two-Chains needs LLD ${TWOCHAINS_LLVM_MAJOR} as a library matching "
    "LLVM ${LLVM_PACKAGE_VERSION} (Debian: liblld-${TWOCHAINS_LLVM_MAJOR}-dev).")
endif()

if(NOT LLVM_LINK_LLVM_DYLIB)
  # The plugin is loaded into clang and opt; it must share their libLLVM
  # rather than carry a second copy of LLVM's global state.
  message(FATAL_ERROR "Two-Chains needs an LLVM built with LLVM_LINK_LLVM_DYLIB=ON.")
endif()

message(STATUS "Two-Chains: LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_INSTALL_PREFIX}")

set(TWOCHAINS_LLVM_TOOLS_DIR "${LLVM_TOOLS_BINARY_DIR}")
set(TWOCHAINS_CLANG "${LLVM_TOOLS_BINARY_DIR}/clang")
if(NOT EXISTS "${TWOCHAINS_CLANG}")
  message(FATAL_ERROR "Two-Chains needs the clang ${TWOCHAINS_LLVM_MAJOR} compiler "
                      "(Debian: clang-${TWOCHAINS_LLVM_MAJOR}); not found at ${TWOCHAINS_CLANG}.")
endif()
