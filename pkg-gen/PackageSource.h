//===- PackageSource.h - The elements of a package source tree ------------===//
#ifndef TWOCHAINS_PKGGEN_PACKAGESOURCE_H
#define TWOCHAINS_PKGGEN_PACKAGESOURCE_H

#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace twochains::pkggen {

enum class ElementKind { Jam, Ried };

struct Element {
  ElementKind Kind;
  std::string Name;     // from jam_<name>.amc / ried_<name>.rdc
  std::string Source;   // absolute path
  unsigned ID = 0;
};

/// Walks Root and its subfolders for jam_*.amc and ried_*.rdc, sorted by
/// name. Reports every bad or duplicate name, with both paths.
llvm::Expected<std::vector<Element>> findElements(llvm::StringRef Root);

} // namespace twochains::pkggen

#endif
