//===- Signed.h - The signed code-trust policy's check --------------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_SIGNED_H
#define TWOCHAINS_RUNTIME_CODE_SIGNED_H

#include "code/CodeContext.h"

#include <string>

namespace twochains::rt {

/// TC_OK if Signature (manifest.tcm.sig's text) is the Ed25519 signature
/// of Manifest by a key of the context's trusted signers; else
/// TC_ERR_UNTRUSTED and Reason says which of: unsigned, malformed, an
/// unknown key, a signature that does not verify.
tc_status_t checkSignature(CoreContext *Ctx, const std::string &Manifest,
                           const std::string &Signature, std::string &Reason);

} // namespace twochains::rt

#endif
