//===- ManifestSignatureFuzzer.cpp - parseManifestSignature on any text ---===//
//
// A receiver under the `signed` policy reads manifest.tcm.sig of every
// package offered to it. What the parser accepts must be exactly one key
// and one signature, written back the same way; what it refuses it must
// say why, naming the file. An accepted signature is also verified, for a
// message no key signed: any key, point or signature must get a no.
//
//===----------------------------------------------------------------------===//
#include "Signature.h"

#include <cstdio>
#include <cstdlib>

using namespace twochains::format;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-manifest-signature: %s\n", What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  ManifestSignature S;
  std::string Error;
  if (parseManifestSignature(Text, "fuzz.sig", S, Error) != FormatError::None) {
    if (Error.rfind("fuzz.sig", 0) != 0)
      broken("refused a signature without saying why, or without naming the file");
    return 0;
  }
  if (Size > ManifestSignatureMaxBytes)
    broken("accepted a signature file beyond the limit");
  ManifestSignature Again;
  std::string Written = manifestSignatureText(S);
  if (parseManifestSignature(Written, "again.sig", Again, Error) != FormatError::None ||
      Again.PublicKey != S.PublicKey || Again.Signature != S.Signature)
    broken("what it accepted does not read back the same once written");
  static const char Message[] = "not what was signed";
  if (verifyEd25519(S.PublicKey.data(), Message, sizeof Message - 1, S.Signature.data()))
    broken("a signature verified for a message nobody signed");
  return 0;
}
