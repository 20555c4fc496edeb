# Debian's arm64 libraries for the aarch64 programs built on x86_64 and run
# under qemu-aarch64 (docs/heterogeneous.md): UCX and OpenSSL's libcrypto,
# unpacked by scripts/install-deps.sh into TWOCHAINS_ARM64_ROOT, never
# installed (../shared/DESIGN.md, "aarch64 on this x86_64 machine").
#
#   TWOCHAINS_ARM64_LIBDIR        the unpacked libraries
#   TWOCHAINS_ARM64_CRYPTO        whether libcrypto and its headers are there
#   TWOCHAINS_ARM64_CRYPTO_FLAGS  compile flags for <openssl/...>: the arm64
#                                 headers, whose configuration.h differs by ISA
#   TWOCHAINS_ARM64_CRYPTO_LIBS   link flags, with a run path to the library
set(TWOCHAINS_ARM64_ROOT /var/lib/twochains/arm64 CACHE PATH
    "Debian's arm64 UCX and libcrypto, unpacked (scripts/install-deps.sh)")
set(TWOCHAINS_ARM64_LIBDIR ${TWOCHAINS_ARM64_ROOT}/usr/lib/aarch64-linux-gnu)
set(TWOCHAINS_ARM64_CRYPTO_FLAGS -I${TWOCHAINS_ARM64_ROOT}/usr/include/aarch64-linux-gnu
                                 -I${TWOCHAINS_ARM64_ROOT}/usr/include)
set(TWOCHAINS_ARM64_CRYPTO_LIBS -L${TWOCHAINS_ARM64_LIBDIR} -lcrypto
                                -Wl,-rpath,${TWOCHAINS_ARM64_LIBDIR})
if(EXISTS ${TWOCHAINS_ARM64_LIBDIR}/libcrypto.so AND
   EXISTS ${TWOCHAINS_ARM64_ROOT}/usr/include/aarch64-linux-gnu/openssl/configuration.h)
  set(TWOCHAINS_ARM64_CRYPTO ON)
else()
  set(TWOCHAINS_ARM64_CRYPTO OFF)
endif()
