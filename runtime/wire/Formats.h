//===- Formats.h - The format library, as the runtime uses it -------------===//
//
// Images, manifests, identities and SHA-256 have one definition, in
// format/, shared with jamlink and pkg-gen; inside the runtime its names
// are used as the runtime's own.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_FORMATS_H
#define TWOCHAINS_RUNTIME_FORMATS_H

#include "Identity.h"
#include "JamAbi.h"
#include "JamImageFormat.h"
#include "ManifestFormat.h"
#include "Sha256.h"

namespace twochains::rt {
using namespace twochains::format;
} // namespace twochains::rt

#endif
