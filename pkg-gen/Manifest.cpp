//===- Manifest.cpp -------------------------------------------------------===//
#include "Manifest.h"

#include "JamImage.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

using namespace llvm;

namespace twochains::pkggen {

std::string sha256File(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return "";
  return toHex(SHA256::hash(arrayRefFromStringRef((*Buf)->getBuffer())), true);
}

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

static Error manifestError(StringRef Path, unsigned Line, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(),
                           Path + (Line ? ":" + Twine(Line) : Twine()) + ": " + Msg);
}

Expected<Manifest> readManifest(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return manifestError(Path, 0, "cannot open: " + Buf.getError().message());
  StringRef Dir = sys::path::parent_path(Path);
  Manifest M;
  bool SawVersion = false;
  SmallVector<StringRef, 64> Lines;
  (*Buf)->getBuffer().split(Lines, '\n');
  StringSet<> Keys;
  for (auto [I, RawLine] : enumerate(Lines)) {
    unsigned LineNo = I + 1;
    StringRef Line = RawLine.trim();
    if (Line.empty() || Line.starts_with("#"))
      continue;
    SmallVector<StringRef, 8> Words;
    Line.split(Words, ' ', -1, false);
    StringRef Kind = Words[0];
    if (!SawVersion) {
      if (Kind != "twochains-manifest" || Words.size() != 2)
        return manifestError(Path, LineNo, "not a Two-Chains manifest");
      if (Words[1] != std::to_string(ManifestVersion))
        return manifestError(Path, LineNo, "manifest version '" + Words[1] +
                                               "' is not supported (expected " +
                                               Twine(ManifestVersion) + ")");
      SawVersion = true;
      continue;
    }
    auto KeyValues = [&](size_t From, std::map<std::string, std::string> &Out) -> Error {
      for (size_t K = From; K < Words.size(); ++K) {
        auto [Key, Value] = Words[K].split('=');
        if (Value.empty())
          return manifestError(Path, LineNo, "expected key=value, got '" + Words[K] + "'");
        Out[Key.str()] = Value.str();
      }
      return Error::success();
    };
    auto CheckFile = [&](StringRef Rel, StringRef Hash, bool IsImage) -> Error {
      if (Rel.empty() || sys::path::is_absolute(Rel) || Rel.contains(".."))
        return manifestError(Path, LineNo, "path '" + Rel + "' must be relative "
                                           "and inside the package folder");
      SmallString<256> File(Dir);
      sys::path::append(File, Rel);
      if (IsImage) {
        auto Image = readJamImage(File);
        if (!Image)
          return manifestError(Path, LineNo, toString(Image.takeError()));
        if (Image->Hash != Hash)
          return manifestError(Path, LineNo, "image " + Rel + " does not have "
                                             "the hash the manifest claims");
        return Error::success();
      }
      std::string Actual = sha256File(File);
      if (Actual.empty())
        return manifestError(Path, LineNo, "missing file " + Rel);
      if (Actual != Hash)
        return manifestError(Path, LineNo, "file " + Rel + " does not have the "
                                           "hash the manifest claims");
      return Error::success();
    };
    if (Kind == "package" && Words.size() == 2) {
      M.Package = Words[1].str();
    } else if (Kind == "identity" && Words.size() == 2) {
      M.Identity = Words[1].str();
    } else if (Kind == "isa" && Words.size() >= 2) {
      auto &F = M.ISAs[Words[1].str()];
      if (Error E = KeyValues(2, F))
        return std::move(E);
      if (!F["local"].empty())
        if (Error E = CheckFile(F["local"], F["local-hash"], false))
          return std::move(E);
    } else if ((Kind == "jam" || Kind == "ried") && Words.size() >= 3) {
      ManifestEntry E;
      E.Kind = Kind.str();
      if (!to_integer(Words[1], E.ID, 10))
        return manifestError(Path, LineNo, "bad element ID '" + Words[1] + "'");
      E.Name = Words[2].str();
      if (Error Err = KeyValues(3, E.Fields))
        return std::move(Err);
      std::string ISA = E.Fields["isa"];
      if (!M.ISAs.count(ISA))
        return manifestError(Path, LineNo, "element '" + E.Name +
                                               "' names ISA '" + ISA +
                                               "', which no isa line declares");
      if (!Keys.insert(ISA + "/id/" + std::to_string(E.ID)).second ||
          !Keys.insert(ISA + "/name/" + E.Name).second)
        return manifestError(Path, LineNo, "element '" + E.Name + "' (ID " +
                                               Twine(E.ID) + ") appears twice for " + ISA);
      bool IsJam = E.Kind == "jam";
      if (Error Err = CheckFile(E.Fields[IsJam ? "image" : "lib"], E.Fields["hash"], IsJam))
        return std::move(Err);
      M.Entries.push_back(std::move(E));
    } else {
      return manifestError(Path, LineNo, "unexpected line '" + Line + "'");
    }
  }
  if (!SawVersion)
    return manifestError(Path, 0, "not a Two-Chains manifest");
  if (M.Package.empty() || M.Identity.empty())
    return manifestError(Path, 0, "no package or identity line");
  return M;
}

} // namespace twochains::pkggen
