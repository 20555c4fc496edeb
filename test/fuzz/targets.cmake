# The libFuzzer targets, one line each: name, then the sources that make it
# (paths relative to the repository). Every target also gets the runtime's
# basics (SHA-256, logging, status strings, libcrypto); LINK names a library of the
# fuzz sub-project (tc_fuzz_wire: the runtime's wire layer, runtime/wire/;
# tc_fuzz_jamlink: jamlink's reading and linking on LLVM, which also gives
# pkg-gen's sources their LLVM).
#
# This file is read twice: by test/fuzz/project, which builds each target
# with clang and -fsanitize=fuzzer,address,undefined, and by
# test/fuzz/CMakeLists.txt, which registers its CTest tests (label
# security) with corpus/<name>/ and regressions/<name>/.
#
# Sources here must not need UCX: the sub-project has no UCX.
tc_add_fuzzer(fuzz-image-reader SOURCES test/fuzz/ImageReaderFuzzer.cpp format/JamImageFormat.cpp format/ManifestFormat.cpp runtime/package/Package.cpp runtime/image/ImageInstall.cpp runtime/sandbox/Region.cpp runtime/sandbox/SandboxX86.cpp runtime/sandbox/SandboxLeaveX86.cpp runtime/sandbox/Services.cpp runtime/verify/AArch64Verifier.cpp runtime/verify/X86Verifier.cpp runtime/verify/Rules.cpp LINK ${TC_FUZZ_ZYDIS})
tc_add_fuzzer(fuzz-manifest-reader SOURCES test/fuzz/ManifestReaderFuzzer.cpp format/ManifestFormat.cpp format/JamImageFormat.cpp)
tc_add_fuzzer(fuzz-frame-validator SOURCES test/fuzz/FrameValidatorFuzzer.cpp LINK tc_fuzz_wire)
tc_add_fuzzer(fuzz-jamlink-input SOURCES test/fuzz/JamlinkInputFuzzer.cpp LINK tc_fuzz_jamlink)
tc_add_fuzzer(fuzz-handshake-offer SOURCES test/fuzz/HandshakeOfferFuzzer.cpp LINK tc_fuzz_wire)
tc_add_fuzzer(fuzz-payload-header SOURCES test/fuzz/PayloadHeaderFuzzer.cpp LINK tc_fuzz_wire)
tc_add_fuzzer(fuzz-address-blob SOURCES test/fuzz/AddressBlobFuzzer.cpp LINK tc_fuzz_wire)
tc_add_fuzzer(fuzz-deploy-offer SOURCES test/fuzz/DeployOfferFuzzer.cpp LINK tc_fuzz_wire)
tc_add_fuzzer(fuzz-exclude-list SOURCES test/fuzz/ExcludeListFuzzer.cpp pkg-gen/Exclusion.cpp LINK tc_fuzz_jamlink)
tc_add_fuzzer(fuzz-manifest-signature SOURCES test/fuzz/ManifestSignatureFuzzer.cpp format/Signature.cpp format/JamImageFormat.cpp)
tc_add_fuzzer(fuzz-trusted-signers SOURCES test/fuzz/TrustedSignersFuzzer.cpp format/Signature.cpp format/JamImageFormat.cpp)
tc_add_fuzzer(fuzz-verifier-x86 SOURCES test/fuzz/X86VerifierFuzzer.cpp LINK tc_fuzz_jamlink)
tc_add_fuzzer(fuzz-verifier SOURCES test/fuzz/VerifierFuzzer.cpp runtime/verify/AArch64Verifier.cpp runtime/verify/Rules.cpp LINK tc_fuzz_jamlink)
