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
  /// A jam folder's other C files (jam_<name>/**/*.c), absolute and sorted:
  /// linked into the jam as a C linker would.
  std::vector<std::string> Parts;
  /// Compiler flags for this element only, after the package's.
  std::vector<std::string> Flags;
  unsigned ID = 0;
};

/// Walks Root and its subfolders for jam_*.amc and ried_*.rdc, sorted by
/// name. A folder jam_<name>/ is one jam of several files: its entry is
/// jam_<name>/jam_<name>.amc and every .c file under it is a part. Reports
/// every bad or duplicate name, with both paths.
llvm::Expected<std::vector<Element>> findElements(llvm::StringRef Root);

} // namespace twochains::pkggen

#endif
