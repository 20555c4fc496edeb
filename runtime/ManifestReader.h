//===- ManifestReader.h - Reading and checking package manifests ----------===//
//
// The one reader of manifest.tcm, version 1 (docs/packages.md): the runtime
// loads packages with it and `twochains-pkg-gen --check-manifest` uses it.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_MANIFESTREADER_H
#define TWOCHAINS_RUNTIME_MANIFESTREADER_H

#include "twochains/status.h"
#include <map>
#include <string>
#include <vector>

namespace twochains::rt {

struct ManifestElement {
  std::string Kind;   // "jam" or "ried"
  unsigned ID = 0;
  std::string Name;
  std::map<std::string, std::string> Fields; // isa, image/lib, hash, imports, args
};

struct ManifestData {
  std::string Dir;    // the manifest's folder: paths are relative to it
  std::string Package;
  std::string Identity;
  std::map<std::string, std::map<std::string, std::string>> ISAs;
  std::vector<ManifestElement> Elements;
};

/// Reads and checks Path: version, syntax, unique IDs and names per ISA,
/// every file inside the package folder with the hash the manifest claims,
/// every image valid. Error names the line. Out is set only on success.
tc_status_t readManifestFile(const std::string &Path, ManifestData &Out,
                             std::string &Error);

} // namespace twochains::rt

#endif
