//===- Signed.cpp - The signed code-trust policy's check ------------------===//
#include "code/Signed.h"

using namespace twochains::rt;

tc_status_t twochains::rt::checkSignature(CodeContext *, const std::string &,
                                          const std::string &Signature, std::string &Reason) {
  // Until the signature format lands with the crypto change, nothing is
  // admitted under the signed policy.
  Reason = Signature.empty() ? "the package is not signed" : "signatures cannot be checked yet";
  return TC_ERR_UNTRUSTED;
}
