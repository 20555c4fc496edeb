//===- Package.h - A loaded package, as the runtime uses it ---------------===//
#ifndef TWOCHAINS_RUNTIME_PACKAGE_H
#define TWOCHAINS_RUNTIME_PACKAGE_H

#include "sandbox/Region.h"
#include "wire/Formats.h"
#include "twochains/package.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace twochains::rt {

using JamEntry = void (*)(void *Ctx, void *Payload, size_t PayloadSize);

struct PackageElement {
  bool Present = false;
  bool IsJam = false;
  std::string Name;
  JamImageData Image;              // jams
  std::string CodeDigest;          // jams: codeDigest() of Image
  uint64_t CodeKey = 0;            // its first 8 bytes: what frames name
  std::vector<void *> ImportTable; // receiver: the addresses of Image.Imports
  JamEntry LocalEntry = nullptr;   // receiver: from the Local-Function library
  void *PayloadSize = nullptr;     // sender-side helpers, if the jam has them
  void *PayloadInit = nullptr;
  SandboxedImage Sandboxed; // receiver of a sandboxed package: its place in the region
};

} // namespace twochains::rt

struct tc_package {
  std::string Name;
  std::string Identity;
  uint64_t Tag = 0;        // identityTag(Identity): what frames carry
  std::string ISA;
  uint32_t OwnIsa = 0;     // ISA as an enum Isa (Wire.h): what frames to peers of it carry
  uint32_t Roles = 0;
  std::vector<twochains::rt::PackageElement> Elements; // by element ID
  std::vector<void *> Libraries;                       // dlopen handles
  std::vector<void *> RiedLibraries;                   // of those, the rieds'
  /// Where the Local-Function library's code lies: the time limit
  /// interrupts a jam only inside its own code (JamGuard.h).
  uintptr_t LocalCodeBegin = 0, LocalCodeEnd = 0;
  /// Sender: the jams' images for the other instruction sets the package
  /// was built for (by enum Isa, Wire.h), for receivers that run those.
  std::vector<std::pair<uint32_t, std::vector<twochains::rt::PackageElement>>> OtherIsas;
  /// Where it was loaded from, and what deploying it sends (docs/deploying.md):
  /// the manifest's bytes, its signature's (empty: unsigned), and every file
  /// the manifest names: its hash there, its path relative to Dir, and
  /// whether it is a ried's library.
  struct File {
    std::string Hash, Path;
    bool Ried = false;
  };
  std::string Dir;
  std::string ManifestText;
  std::string SignatureText;
  std::vector<File> Files;
  /// What two builds must share to talk: the hash of the package's name
  /// and its rieds (packageInterface). Builds that differ only in jams
  /// connect, and the receiver is deployed the sender's.
  std::string Interface;
  /// Deployed into this process by a peer (code/Deploy.cpp): owned by the
  /// context, which unloads it at its end.
  bool Deployed = false;
  /// Admitted by the verified policy (docs/verified.md): its jams were
  /// verified into this region of their own and run only there; no
  /// library of the package was loaded. Null: it runs natively.
  std::unique_ptr<twochains::rt::SandboxRegion> Region;
};

namespace twochains::rt {

/// The largest manifest.tcm.sig read.
constexpr size_t MaxSignatureFileSize = 4096;

/// How a receiver takes a package's code: natively (its rieds and Local
/// library loaded, its jams' imports bound in the process), or sandboxed
/// (every jam verified into a region of the package, nothing native loaded).
enum class PackageCode { Native, Sandboxed };

/// Loads the package whose manifest is ManifestPath (tc_package_load's
/// work; deployments load theirs so too): Name, if given, must be its
/// name. Out is set only on TC_OK; otherwise Error says why (not logged).
tc_status_t loadPackage(const std::string &ManifestPath, const char *Name, uint32_t Roles,
                        const char *Isa, std::unique_ptr<tc_package> &Out, std::string &Error,
                        PackageCode Code = PackageCode::Native);

/// Hex SHA-256 of the package's name and its rieds' lines (kind, ID, name,
/// ISA, hash): what the handshake compares.
std::string packageInterface(const twochains::format::ManifestData &M);

/// Hex SHA-256 of an image's bytes with its GOTP slot read as zero: the
/// same on every sender and receiver, whatever table GOTP points at.
std::string codeDigest(const uint8_t *Image, size_t Size, uint64_t GOTP);

} // namespace twochains::rt

namespace twochains::rt {
/// The element as a receiver running instruction set Isa (enum Isa) gets
/// it in injected frames: this side's own, or one of OtherIsas; null if
/// the package has no image of it for that instruction set. Inline: every
/// injected send asks.
/// The ID of the element called Name, or TC_ERR_UNKNOWN_ELEMENT.
tc_status_t findElement(const tc_package *P, const char *Name, uint32_t *ID);

inline const PackageElement *elementFor(const tc_package *P, uint32_t Element, uint32_t Isa) {
  const std::vector<PackageElement> *Table = &P->Elements;
  if (Isa != P->OwnIsa) {
    Table = nullptr;
    for (const auto &[Other, Images] : P->OtherIsas)
      if (Other == Isa)
        Table = &Images;
  }
  if (!Table || Element >= Table->size() || !(*Table)[Element].Present ||
      !(*Table)[Element].IsJam)
    return nullptr;
  return &(*Table)[Element];
}


} // namespace twochains::rt

#endif
