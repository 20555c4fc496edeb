//===- ElementIDs.h - Stable element IDs ----------------------------------===//
//
// The rule (docs/packages.md): IDs live in `twochains.ids` beside the
// sources, one "<id> <name>" per line. An element keeps its ID forever; a
// new element takes the lowest ID never used before; a removed element's
// ID is retired ("<id> -<name>") and never given to another, so a receiver
// that still knows the old package cannot run the wrong element. Commit the
// file with the sources.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_PKGGEN_ELEMENTIDS_H
#define TWOCHAINS_PKGGEN_ELEMENTIDS_H

#include "PackageSource.h"

namespace twochains::pkggen {

/// Reads Root/twochains.ids (if any), assigns IDs to Elements, and rewrites
/// the file only if something changed. Changed is set if it was rewritten.
llvm::Error assignElementIDs(llvm::StringRef Root,
                             std::vector<Element> &Elements, bool &Changed);

} // namespace twochains::pkggen

#endif
