# Cross-building the runtime for aarch64 on x86_64 Debian: clang 19 and
# lld with Debian's arm64 cross libraries (libc6-dev-arm64-cross,
# libstdc++-12-dev-arm64-cross), UCX from Debian's arm64 packages unpacked
# by scripts/install-deps.sh (TWOCHAINS_ARM64_ROOT), programs run under
# qemu-aarch64. ../shared/DESIGN.md, "aarch64 on this x86_64 machine".
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
find_program(TC_CROSS_CLANG NAMES clang-19 clang PATHS /usr/lib/llvm-19/bin REQUIRED)
find_program(TC_CROSS_CLANGXX NAMES clang++-19 clang++ PATHS /usr/lib/llvm-19/bin REQUIRED)
set(CMAKE_C_COMPILER ${TC_CROSS_CLANG})
set(CMAKE_CXX_COMPILER ${TC_CROSS_CLANGXX})
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# UCX's arm64 libraries lie outside the cross root (ucx.pc names them).
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
# UCX through pkg-config: a ucx.pc for the unpacked arm64 libraries (made
# by the host build, TWOCHAINS_CROSS_PKGCONFIG), never the host's.
if(DEFINED ENV{TWOCHAINS_CROSS_PKGCONFIG})
  set(TWOCHAINS_CROSS_PKGCONFIG $ENV{TWOCHAINS_CROSS_PKGCONFIG})
endif()
if(TWOCHAINS_CROSS_PKGCONFIG)
  set(ENV{PKG_CONFIG_LIBDIR} ${TWOCHAINS_CROSS_PKGCONFIG})
  set(ENV{PKG_CONFIG_PATH} "")
endif()
