//===- ManifestFormat.h - Reading, checking and writing package manifests ===//
//
// The one definition of manifest.tcm, version 1 (docs/packages.md): pkg-gen
// writes it and computes the package identity with it, the runtime loads
// packages with it and `twochains-pkg-gen --check-manifest` uses it, so the
// tool refuses exactly what the loader would. It trusts nothing:
// every size, ID and path is bounded before it is used.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_FORMAT_MANIFESTREADER_H
#define TWOCHAINS_FORMAT_MANIFESTREADER_H

#include "FormatError.h"
#include "JamImageFormat.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace twochains::format {

constexpr unsigned ManifestVersion = 1;

/// Element IDs are below this: the loader keeps a table indexed by ID, and
/// pkg-gen assigns no ID at or above it.
constexpr uint32_t ElementIDLimit = 65536;
/// The largest manifest, and the longest line, a reader accepts (a line
/// with a jam's 4096 imports of 60 characters each still fits).
constexpr size_t ManifestMaxBytes = size_t(16) << 20;
constexpr size_t ManifestMaxLine = size_t(256) << 10;

struct ManifestElement {
  std::string Kind;   // "jam" or "ried"
  unsigned ID = 0;    // < ElementIDLimit
  std::string Name;
  /// isa, image/lib, hash; jams also imports and args when they have them.
  /// isa, hash and image (jams) or lib (rieds) are always present.
  std::map<std::string, std::string> Fields;
};

struct ManifestData {
  std::string Dir;    // the manifest's folder: paths are relative to it
  std::string Package;
  std::string Identity;
  std::map<std::string, std::map<std::string, std::string>> ISAs;
  std::vector<ManifestElement> Elements;
};

/// How the reader reaches the files a manifest names. It passes Dir + "/" +
/// the path, after checking the path stays inside the package folder.
struct ManifestFiles {
  /// Hex SHA-256 of the file's bytes, or "" if it cannot be read.
  std::function<std::string(const std::string &Path)> HashFile;
  /// Reads and fully checks a jam image (readJamImageFile).
  std::function<FormatError(const std::string &Path, JamImageData &Out, std::string &Error)>
      ReadImage;
};

/// The files on disk.
ManifestFiles manifestFilesOnDisk();

/// Parses and checks the manifest Text: version, syntax, names, unique IDs
/// and names per ISA, IDs below ElementIDLimit, every file inside the
/// package folder Dir with the hash the manifest claims, every image valid.
/// Name (the manifest's path) starts every message, with the line. Out is
/// set only on success.
FormatError parseManifest(const std::string &Text, const std::string &Name,
                          const std::string &Dir, const ManifestFiles &Files,
                          ManifestData &Out, std::string &Error);

/// The manifest's text, as pkg-gen installs it.
std::string manifestText(const ManifestData &M);

/// The package identity: SHA-256 over the package name and, per element
/// and ISA, its kind, ID, name, ISA and hash. Frames carry its first 8
/// bytes (identityTag); the package header records it.
std::string manifestIdentity(const ManifestData &M);

/// Reads Path (at most ManifestMaxBytes) and parses it with the files on
/// disk, relative to Path's folder.
FormatError readManifestFile(const std::string &Path, ManifestData &Out,
                             std::string &Error);

} // namespace twochains::format

#endif
