//===- Manifest.cpp -------------------------------------------------------===//
#include "Manifest.h"

#include "ManifestReader.h"
#include "Sha256.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace twochains::pkggen {

std::string sha256File(StringRef Path) { return rt::sha256File(Path.str()); }

static std::string fields(const std::map<std::string, std::string> &F,
                          std::initializer_list<const char *> Order) {
  std::string S;
  for (const char *K : Order) {
    auto It = F.find(K);
    if (It != F.end() && !It->second.empty())
      S += std::string(" ") + K + "=" + It->second;
  }
  return S;
}

std::string Manifest::text() const {
  std::string S = "# Two-Chains package manifest: written by twochains-pkg-gen.\n";
  S += "twochains-manifest " + std::to_string(ManifestVersion) + "\n";
  S += "package " + Package + "\n";
  S += "identity " + Identity + "\n";
  for (const auto &[ISA, F] : ISAs)
    S += "isa " + ISA + fields(F, {"local", "local-hash"}) + "\n";
  for (const ManifestEntry &E : Entries)
    S += E.Kind + " " + std::to_string(E.ID) + " " + E.Name +
         fields(E.Fields, {"isa", "image", "lib", "hash", "imports", "args"}) + "\n";
  return S;
}

Expected<Manifest> readManifest(StringRef Path) {
  // One reader for everyone: the runtime's.
  rt::ManifestData Data;
  std::string Error;
  if (rt::readManifestFile(Path.str(), Data, Error) != TC_OK)
    return createStringError(inconvertibleErrorCode(), Error);
  Manifest M;
  M.Package = Data.Package;
  M.Identity = Data.Identity;
  M.ISAs = Data.ISAs;
  for (rt::ManifestElement &E : Data.Elements)
    M.Entries.push_back({E.Kind, E.ID, E.Name, std::move(E.Fields)});
  return M;
}

} // namespace twochains::pkggen
