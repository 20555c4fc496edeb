//===- ManifestFormat.cpp -------------------------------------------------===//
#include "ManifestFormat.h"
#include "Isa.h"
#include "JamAbi.h"
#include "Sha256.h"

#include <initializer_list>
#include <set>

namespace twochains::format {

namespace {

bool isHex64(const std::string &S) {
  if (S.size() != 64)
    return false;
  for (char C : S)
    if (!((C >= '0' && C <= '9') || (C >= 'a' && C <= 'f')))
      return false;
  return true;
}

/// Words are separated by blanks and tabs only; the caller has refused
/// every other control character, so no word is empty and a line that is
/// not blank has at least one.
std::vector<std::string> words(const std::string &Line) {
  std::vector<std::string> W;
  size_t I = 0;
  while (I < Line.size()) {
    while (I < Line.size() && (Line[I] == ' ' || Line[I] == '\t'))
      ++I;
    size_t B = I;
    while (I < Line.size() && Line[I] != ' ' && Line[I] != '\t')
      ++I;
    if (I > B)
      W.push_back(Line.substr(B, I - B));
  }
  return W;
}

/// For messages: a line or word as typed, but never a screenful.
std::string quoted(const std::string &S) {
  return "'" + (S.size() > 80 ? S.substr(0, 77) + "..." : S) + "'";
}

/// Digits only, no sign, below ElementIDLimit (checked as it is read, so
/// nothing can wrap).
bool parseID(const std::string &S, uint32_t &Out) {
  if (S.empty() || S.size() > 10)
    return false;
  uint64_t V = 0;
  for (char C : S) {
    if (C < '0' || C > '9')
      return false;
    V = V * 10 + uint64_t(C - '0');
  }
  if (V >= ElementIDLimit)
    return false;
  Out = uint32_t(V);
  return true;
}

} // namespace

ManifestFiles manifestFilesOnDisk() {
  ManifestFiles F;
  F.HashFile = [](const std::string &Path) { return sha256File(Path); };
  F.ReadImage = [](const std::string &Path, JamImageData &Out, std::string &Error) {
    return readJamImageFile(Path, Out, Error);
  };
  return F;
}

FormatError parseManifest(const std::string &Text, const std::string &Name,
                          const std::string &Dir, const ManifestFiles &Files,
                          ManifestData &Out, std::string &Error) {
  ManifestData M;
  M.Dir = Dir;
  size_t LineNo = 0;
  auto Fail = [&](const std::string &Msg, FormatError St = FormatError::BadManifest) {
    Error = Name + (LineNo ? ":" + std::to_string(LineNo) : "") + ": " + Msg;
    return St;
  };
  if (Text.size() > ManifestMaxBytes)
    return Fail("manifest of " + std::to_string(Text.size()) +
                " bytes is larger than the limit of " + std::to_string(ManifestMaxBytes));

  bool SawVersion = false;
  std::set<std::string> Names;                  // "<isa>/<name>"
  std::set<std::pair<std::string, uint32_t>> IDs;
  auto KeyValues = [&](const std::vector<std::string> &W, size_t From,
                       std::map<std::string, std::string> &F,
                       std::initializer_list<const char *> Allowed, std::string &Why) {
    for (size_t I = From; I < W.size(); ++I) {
      size_t Eq = W[I].find('=');
      if (Eq == std::string::npos || Eq == 0 || Eq + 1 == W[I].size()) {
        Why = "expected key=value, got " + quoted(W[I]);
        return false;
      }
      std::string Key = W[I].substr(0, Eq);
      bool Known = false;
      for (const char *A : Allowed)
        Known |= Key == A;
      if (!Known) {
        Why = "unknown key " + quoted(Key);
        return false;
      }
      if (!F.emplace(Key, W[I].substr(Eq + 1)).second) {
        Why = "key " + quoted(Key) + " given twice";
        return false;
      }
    }
    return true;
  };
  auto CheckFile = [&](const std::string &Rel, const std::string &Hash, bool IsImage,
                       std::string &Why) {
    if (Rel.empty() || Rel[0] == '/' || Rel.find("..") != std::string::npos) {
      Why = "path " + quoted(Rel) + " must be relative and inside the package folder";
      return false;
    }
    std::string File = M.Dir + "/" + Rel;
    if (IsImage) {
      JamImageData Image;
      std::string ImageError;
      if (Files.ReadImage(File, Image, ImageError) != FormatError::None) {
        Why = File + ": " + ImageError;
        return false;
      }
      if (Image.Hash != Hash) {
        Why = "image " + Rel + " does not have the hash the manifest claims";
        return false;
      }
      return true;
    }
    std::string Actual = Files.HashFile(File);
    if (Actual.empty()) {
      Why = "missing file " + Rel;
      return false;
    }
    if (Actual != Hash) {
      Why = "file " + Rel + " does not have the hash the manifest claims";
      return false;
    }
    return true;
  };

  size_t Pos = 0;
  while (Pos < Text.size()) {
    size_t NL = Text.find('\n', Pos);
    size_t EndOfLine = NL == std::string::npos ? Text.size() : NL;
    ++LineNo;
    if (EndOfLine - Pos > ManifestMaxLine)
      return Fail("line is longer than the limit of " + std::to_string(ManifestMaxLine) +
                  " bytes");
    std::string Line = Text.substr(Pos, EndOfLine - Pos);
    Pos = NL == std::string::npos ? Text.size() : NL + 1;
    if (!Line.empty() && Line.back() == '\r')
      Line.pop_back();
    // Blanks and tabs separate words; any other control character (a
    // vertical tab, a NUL that would cut a path short) has no place here.
    for (char C : Line)
      if ((static_cast<unsigned char>(C) < 0x20 && C != '\t') || C == 0x7f)
        return Fail("control character " +
                    std::to_string(static_cast<unsigned char>(C)) + " in the line");
    std::vector<std::string> W = words(Line);
    if (W.empty() || W[0][0] == '#')
      continue;
    const std::string &Kind = W[0];
    std::string Why;
    if (!SawVersion) {
      if (Kind != "twochains-manifest" || W.size() != 2)
        return Fail("not a Two-Chains manifest");
      if (W[1] != std::to_string(ManifestVersion))
        return Fail("manifest version " + quoted(W[1]) + " is not supported (expected " +
                        std::to_string(ManifestVersion) + ")",
                    FormatError::BadManifest);
      SawVersion = true;
    } else if (Kind == "package" && W.size() == 2) {
      if (!M.Package.empty())
        return Fail("a second package line");
      if (!isValidName(W[1]))
        return Fail("invalid package name " + quoted(W[1]) + ": use letters, digits and '_'");
      M.Package = W[1];
    } else if (Kind == "identity" && W.size() == 2) {
      if (!M.Identity.empty())
        return Fail("a second identity line");
      if (!isHex64(W[1]))
        return Fail("identity " + quoted(W[1]) + " is not 64 lower-case hex digits");
      M.Identity = W[1];
    } else if (Kind == "isa" && W.size() >= 2) {
      if (!isaOf(W[1]))
        return Fail("unknown ISA " + quoted(W[1]) + " (expected x86_64 or aarch64)");
      if (M.ISAs.count(W[1]))
        return Fail("a second isa line for " + W[1]);
      std::map<std::string, std::string> F;
      if (!KeyValues(W, 2, F, {"local", "local-hash"}, Why))
        return Fail(Why);
      if (F.count("local") && !CheckFile(F["local"], F["local-hash"], false, Why))
        return Fail(Why, FormatError::BadImage);
      M.ISAs[W[1]] = std::move(F);
    } else if ((Kind == "jam" || Kind == "ried") && W.size() >= 3) {
      bool IsJam = Kind == "jam";
      ManifestElement E;
      E.Kind = Kind;
      uint32_t ID = 0;
      if (!parseID(W[1], ID))
        return Fail("bad element ID " + quoted(W[1]) + ": IDs are decimal numbers below " +
                    std::to_string(ElementIDLimit));
      E.ID = ID;
      E.Name = W[2];
      if (!isValidName(E.Name))
        return Fail("invalid element name " + quoted(E.Name) +
                    ": use letters, digits and '_'");
      if (!KeyValues(W, 3, E.Fields,
                     IsJam ? std::initializer_list<const char *>{"isa", "image", "hash",
                                                                 "imports", "args"}
                           : std::initializer_list<const char *>{"isa", "lib", "hash"},
                     Why))
        return Fail(Why);
      for (const char *Key : {"isa", IsJam ? "image" : "lib", "hash"})
        if (!E.Fields.count(Key))
          return Fail(Kind + " '" + E.Name + "' has no " + Key + "=");
      const std::string &ISA = E.Fields["isa"];
      if (!M.ISAs.count(ISA))
        return Fail("element '" + E.Name + "' names ISA " + quoted(ISA) +
                    ", which no isa line declares");
      // By value, not by spelling: 7 and 007 are one ID.
      if (!IDs.insert({ISA, ID}).second || !Names.insert(ISA + "/" + E.Name).second)
        return Fail("element '" + E.Name + "' (ID " + std::to_string(ID) +
                    ") appears twice for " + ISA);
      // The files it names: a missing, changed or invalid one is the
      // package's fault, not the manifest's text.
      if (!CheckFile(E.Fields[IsJam ? "image" : "lib"], E.Fields["hash"], IsJam, Why))
        return Fail(Why, FormatError::BadImage);
      M.Elements.push_back(std::move(E));
    } else {
      return Fail("unexpected line " + quoted(Line));
    }
  }
  LineNo = 0;
  if (!SawVersion)
    return Fail("not a Two-Chains manifest");
  if (M.Package.empty() || M.Identity.empty())
    return Fail("no package or identity line");
  Out = std::move(M);
  return FormatError::None;
}

FormatError readManifestFile(const std::string &Path, ManifestData &Out,
                             std::string &Error) {
  std::vector<uint8_t> Bytes;
  std::string Why;
  if (!readFileBytes(Path, Bytes, Why, ManifestMaxBytes)) {
    Error = Path + ": " + Why;
    return FormatError::Io;
  }
  size_t Slash = Path.rfind('/');
  std::string Dir = Slash == std::string::npos ? "." : Slash == 0 ? "/" : Path.substr(0, Slash);
  return parseManifest(std::string(Bytes.begin(), Bytes.end()), Path, Dir,
                       manifestFilesOnDisk(), Out, Error);
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

std::string manifestText(const ManifestData &M) {
  std::string S = "# Two-Chains package manifest: written by twochains-pkg-gen.\n";
  S += "twochains-manifest " + std::to_string(ManifestVersion) + "\n";
  S += "package " + M.Package + "\n";
  S += "identity " + M.Identity + "\n";
  for (const auto &[ISA, F] : M.ISAs)
    S += "isa " + ISA + fields(F, {"local", "local-hash"}) + "\n";
  for (const ManifestElement &E : M.Elements)
    S += E.Kind + " " + std::to_string(E.ID) + " " + E.Name +
         fields(E.Fields, {"isa", "image", "lib", "hash", "imports", "args"}) + "\n";
  return S;
}

std::string manifestIdentity(const ManifestData &M) {
  Sha256 H;
  H.update(M.Package);
  for (const ManifestElement &E : M.Elements) {
    auto Field = [&](const char *K) {
      auto It = E.Fields.find(K);
      return It == E.Fields.end() ? std::string() : It->second;
    };
    H.update(E.Kind + " " + std::to_string(E.ID) + " " + E.Name + " " + Field("isa") + " " +
             Field("hash") + "\n");
  }
  return H.hex();
}

} // namespace twochains::format
