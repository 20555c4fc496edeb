//===- Header.h - The generated package header ----------------------------===//
#ifndef TWOCHAINS_PKGGEN_HEADER_H
#define TWOCHAINS_PKGGEN_HEADER_H

#include "PackageSource.h"
#include <map>
#include <string>
#include <vector>

namespace twochains::pkggen {

struct JamArgs {
  std::string Type;   // C spelling, e.g. "struct indirect_put_args"
  std::string Decl;   // its declaration, as the jam wrote it
};

/// The header a program includes to use the package: its name, identity
/// and manifest path, the enum of element IDs, the element names, and the
/// argument types the jams declare.
std::string packageHeader(const std::string &Package, const std::string &Identity,
                          const std::vector<Element> &Elements,
                          const std::map<std::string, JamArgs> &Args);

} // namespace twochains::pkggen

#endif
