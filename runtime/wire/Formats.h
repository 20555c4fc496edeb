//===- Formats.h - The format library, as the runtime uses it -------------===//
//
// Images, manifests, identities and SHA-256 have one definition, in
// format/, shared with jamlink and pkg-gen; inside the runtime its names
// are used as the runtime's own.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_FORMATS_H
#define TWOCHAINS_RUNTIME_FORMATS_H

#include "FormatError.h"
#include "Identity.h"
#include "JamAbi.h"
#include "JamImageFormat.h"
#include "ManifestFormat.h"
#include "Sha256.h"
#include "twochains/status.h"

namespace twochains::rt {
using namespace twochains::format;

/// The runtime's status for what a format reader reports.
inline tc_status_t statusOf(FormatError E) {
  switch (E) {
  case FormatError::None: return TC_OK;
  case FormatError::BadImage: return TC_ERR_BAD_IMAGE;
  case FormatError::BadManifest: return TC_ERR_BAD_MANIFEST;
  case FormatError::Io: return TC_ERR_IO;
  // A package's signature or the trusted signers: the manifest's status
  // until the runtime has one of their own.
  case FormatError::BadSignature: return TC_ERR_BAD_MANIFEST;
  case FormatError::BadKey: return TC_ERR_BAD_MANIFEST;
  }
  return TC_ERR_INVALID_PARAM; // not a FormatError
}
} // namespace twochains::rt

#endif
