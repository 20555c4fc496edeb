//===- TrustedSignersFuzzer.cpp - parseTrustedSigners on any text ---------===//
//
// The trusted-signers file decides whose packages a `signed` receiver runs.
// What the parser accepts must be keys each listed once, with comments of
// one line and no blanks around them, which read back the same once
// written; what it refuses it must say why, naming the file.
//
//===----------------------------------------------------------------------===//
#include "Signature.h"

#include <cstdio>
#include <cstdlib>
#include <set>

using namespace twochains::format;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-trusted-signers: %s\n", What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  std::vector<TrustedSigner> Signers;
  std::string Error;
  if (parseTrustedSigners(Text, "fuzz-signers", Signers, Error) != FormatError::None) {
    if (Error.rfind("fuzz-signers", 0) != 0)
      broken("refused a file without saying why, or without naming the file");
    return 0;
  }
  if (Size > TrustedSignersMaxBytes)
    broken("accepted a file beyond the limit");
  std::set<std::array<uint8_t, 32>> Keys;
  std::string Written;
  for (const TrustedSigner &S : Signers) {
    if (!Keys.insert(S.PublicKey).second)
      broken("accepted a key twice");
    for (unsigned char C : S.Comment)
      if (C == '\n' || C == '\r' || C == 0)
        broken("accepted a comment of more than one line");
    if (!S.Comment.empty() && (S.Comment.front() == ' ' || S.Comment.front() == '\t' ||
                               S.Comment.back() == ' ' || S.Comment.back() == '\t'))
      broken("kept blanks around a comment");
    Written += std::string(Ed25519KeyType) + " " + hexOfKey(S.PublicKey) +
               (S.Comment.empty() ? "" : " " + S.Comment) + "\n";
  }
  std::vector<TrustedSigner> Again;
  if (parseTrustedSigners(Written, "again", Again, Error) != FormatError::None ||
      Again.size() != Signers.size())
    broken("what it accepted does not read back once written");
  for (size_t I = 0; I < Again.size(); ++I)
    if (Again[I].PublicKey != Signers[I].PublicKey || Again[I].Comment != Signers[I].Comment)
      broken("what it accepted reads back differently once written");
  return 0;
}
