//===- Manifest.h - The package manifest ----------------------------------===//
//
// One text file, `manifest.tcm`, tells the runtime everything it needs to
// load a package on either side (docs/packages.md has the grammar):
//
//   twochains-manifest 1
//   package <name>
//   identity <sha256>
//   isa <isa> local=<path> local-hash=<sha256>
//   jam <id> <name> isa=<isa> image=<path> hash=<sha256> imports=<a,b,...> [args=<type>]
//   ried <id> <name> isa=<isa> lib=<path> hash=<sha256>
//
// Paths are relative to the manifest's folder. Hashes are SHA-256 of the
// files (for images: the image's own content hash).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_PKGGEN_MANIFEST_H
#define TWOCHAINS_PKGGEN_MANIFEST_H

#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace twochains::pkggen {

constexpr unsigned ManifestVersion = 1;

struct ManifestEntry {
  std::string Kind;   // "jam", "ried"
  unsigned ID = 0;
  std::string Name;
  std::map<std::string, std::string> Fields; // isa, image/lib, hash, ...
};

struct Manifest {
  std::string Package;
  std::string Identity;
  std::map<std::string, std::map<std::string, std::string>> ISAs; // isa -> fields
  std::vector<ManifestEntry> Entries;

  std::string text() const;
};

/// Reads and validates Path: version, syntax, IDs and names unique per ISA,
/// every file present inside the package folder with the hash it claims.
llvm::Expected<Manifest> readManifest(llvm::StringRef Path);

std::string sha256File(llvm::StringRef Path);

} // namespace twochains::pkggen

#endif
