//===- FormatError.h - What the format library's readers report -----------===//
//
// The image, manifest and signature readers' outcome. The format library
// depends on nothing of Two-Chains, so it has its own type rather than the
// runtime's status codes: the runtime maps it with statusOf()
// (runtime/wire/Formats.h), the tools tell success from failure and print
// the reader's message.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_FORMAT_FORMATERROR_H
#define TWOCHAINS_FORMAT_FORMATERROR_H

namespace twochains::format {

enum class FormatError {
  None = 0,     // success
  BadImage,     // a jam image malformed, of another version or corrupt
  BadManifest,  // a manifest malformed or of another version
  Io,           // a file that cannot be read, or is larger than its limit
  BadSignature, // a manifest signature or trusted-signers file malformed
  BadKey,       // a signing key that is no unencrypted Ed25519 key in PEM
};

/// A short, constant English description; never null.
inline const char *formatErrorString(FormatError E) {
  switch (E) {
  case FormatError::None: return "success";
  case FormatError::BadImage: return "invalid jam image";
  case FormatError::BadManifest:
    return "malformed package manifest, or one of an unsupported version";
  case FormatError::Io: return "input/output error";
  case FormatError::BadSignature: return "malformed manifest signature or trusted-signers file";
  case FormatError::BadKey: return "unusable signing key";
  }
  return "unknown format error";
}

} // namespace twochains::format

#endif
