//===- Install.h - Putting a package under the prefix, all or nothing -----===//
#ifndef TWOCHAINS_PKGGEN_INSTALL_H
#define TWOCHAINS_PKGGEN_INSTALL_H

#include "llvm/Support/Error.h"
#include <string>
#include <utility>
#include <vector>

namespace twochains::pkggen {

struct InstallPlan {
  std::string Prefix;
  std::string Package;
  /// (file in the build, path relative to the package folder)
  std::vector<std::pair<std::string, std::string>> Files;
  std::string ManifestText;
  /// manifest.tcm.sig's text (--sign-key), or "": no signature file.
  std::string SignatureText;
  std::string HeaderText;
};

/// Stages everything beside its destination, then swaps it in with
/// renames, so the installed package is the old one or the new one, never
/// a mixture.
llvm::Error installPackage(const InstallPlan &Plan);

} // namespace twochains::pkggen

#endif
