//===- Signed.cpp - The signed code-trust policy's check ------------------===//
//
// A deployed package is admitted under the signed policy if its manifest
// carries the Ed25519 signature of a key in the receiver's trusted signers.
// The manifest names the SHA-256 of every image and library, and each file
// is checked against it before anything is loaded (code/Deploy.cpp), so
// one signature check covers the package.
//
//===----------------------------------------------------------------------===//
#include "code/Signed.h"

#include "Signature.h"

using namespace twochains::rt;
using namespace twochains::format;

static std::string hexPrefix(const std::array<uint8_t, 32> &Key) {
  static const char Digits[] = "0123456789abcdef";
  std::string S;
  for (size_t I = 0; I < 8; ++I) {
    S += Digits[Key[I] >> 4];
    S += Digits[Key[I] & 15];
  }
  return S;
}

tc_status_t twochains::rt::checkSignature(CoreContext *Ctx, const std::string &Manifest,
                                          const std::string &Signature, std::string &Reason) {
  if (Signature.empty()) {
    Reason = "the package is not signed, and this receiver's code-trust policy is signed";
    return TC_ERR_UNTRUSTED;
  }
  ManifestSignature S;
  std::string Error;
  if (parseManifestSignature(Signature, "manifest.tcm.sig", S, Error) != FormatError::None) {
    Reason = "its signature is malformed: " + Error;
    return TC_ERR_UNTRUSTED;
  }
  const TrustedSigner *Signer = nullptr;
  for (const TrustedSigner &T : Ctx->Package->TrustedSigners)
    if (T.PublicKey == S.PublicKey)
      Signer = &T;
  if (!Signer) {
    Reason = "it is signed by key " + hexPrefix(S.PublicKey) +
             "..., which is not one of the receiver's trusted signers";
    return TC_ERR_UNTRUSTED;
  }
  if (!verifyEd25519(S.PublicKey.data(), Manifest.data(), Manifest.size(), S.Signature.data())) {
    Reason = "its signature by " +
             (Signer->Comment.empty() ? hexPrefix(S.PublicKey) + "..." : Signer->Comment) +
             " does not verify: the manifest is not the one that was signed";
    return TC_ERR_UNTRUSTED;
  }
  return TC_OK;
}
