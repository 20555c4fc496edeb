//===- ManifestReader.cpp -------------------------------------------------===//
#include "ManifestReader.h"
#include "JamImageReader.h"
#include "Sha256.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace twochains::rt {

static std::vector<std::string> words(const std::string &Line) {
  std::vector<std::string> W;
  std::istringstream In(Line);
  std::string S;
  while (In >> S)
    W.push_back(S);
  return W;
}

static std::string trim(const std::string &S) {
  size_t B = S.find_first_not_of(" \t\r");
  if (B == std::string::npos)
    return "";
  return S.substr(B, S.find_last_not_of(" \t\r") - B + 1);
}

tc_status_t readManifestFile(const std::string &Path, ManifestData &Out,
                             std::string &Error) {
  std::ifstream In(Path);
  if (!In) {
    Error = Path + ": cannot open";
    return TC_ERR_IO;
  }
  ManifestData M;
  size_t Slash = Path.rfind('/');
  M.Dir = Slash == std::string::npos ? "." : Path.substr(0, Slash);
  unsigned LineNo = 0;
  bool SawVersion = false;
  std::set<std::string> Keys;
  std::string Raw;
  auto Fail = [&](const std::string &Msg, tc_status_t St = TC_ERR_BAD_IMAGE) {
    Error = Path + (LineNo ? ":" + std::to_string(LineNo) : "") + ": " + Msg;
    return St;
  };
  auto KeyValues = [&](const std::vector<std::string> &W, size_t From,
                       std::map<std::string, std::string> &F, std::string &Bad) {
    for (size_t I = From; I < W.size(); ++I) {
      size_t Eq = W[I].find('=');
      if (Eq == std::string::npos || Eq + 1 == W[I].size()) {
        Bad = W[I];
        return false;
      }
      F[W[I].substr(0, Eq)] = W[I].substr(Eq + 1);
    }
    return true;
  };
  auto CheckFile = [&](const std::string &Rel, const std::string &Hash,
                       bool IsImage, std::string &Why) {
    if (Rel.empty() || Rel[0] == '/' || Rel.find("..") != std::string::npos) {
      Why = "path '" + Rel + "' must be relative and inside the package folder";
      return false;
    }
    std::string File = M.Dir + "/" + Rel;
    if (IsImage) {
      JamImageData Image;
      std::string ImageError;
      if (readJamImageFile(File, Image, ImageError) != TC_OK) {
        Why = File + ": " + ImageError;
        return false;
      }
      if (Image.Hash != Hash) {
        Why = "image " + Rel + " does not have the hash the manifest claims";
        return false;
      }
      return true;
    }
    std::string Actual = sha256File(File);
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

  while (std::getline(In, Raw)) {
    ++LineNo;
    std::string Line = trim(Raw);
    if (Line.empty() || Line[0] == '#')
      continue;
    std::vector<std::string> W = words(Line);
    const std::string &Kind = W[0];
    std::string Why;
    if (!SawVersion) {
      if (Kind != "twochains-manifest" || W.size() != 2)
        return Fail("not a Two-Chains manifest");
      if (W[1] != "1")
        return Fail("manifest version '" + W[1] + "' is not supported (expected 1)",
                    TC_ERR_BAD_VERSION);
      SawVersion = true;
    } else if (Kind == "package" && W.size() == 2) {
      M.Package = W[1];
    } else if (Kind == "identity" && W.size() == 2) {
      M.Identity = W[1];
    } else if (Kind == "isa" && W.size() >= 2) {
      auto &F = M.ISAs[W[1]];
      if (!KeyValues(W, 2, F, Why))
        return Fail("expected key=value, got '" + Why + "'");
      if (!F["local"].empty() && !CheckFile(F["local"], F["local-hash"], false, Why))
        return Fail(Why);
    } else if ((Kind == "jam" || Kind == "ried") && W.size() >= 3) {
      ManifestElement E;
      E.Kind = Kind;
      char *End = nullptr;
      unsigned long ID = std::strtoul(W[1].c_str(), &End, 10);
      if (W[1].empty() || *End || ID > 0xffffffffu)
        return Fail("bad element ID '" + W[1] + "'");
      E.ID = unsigned(ID);
      E.Name = W[2];
      if (!KeyValues(W, 3, E.Fields, Why))
        return Fail("expected key=value, got '" + Why + "'");
      const std::string &ISA = E.Fields["isa"];
      if (!M.ISAs.count(ISA))
        return Fail("element '" + E.Name + "' names ISA '" + ISA +
                    "', which no isa line declares");
      if (!Keys.insert(ISA + "/id/" + W[1]).second ||
          !Keys.insert(ISA + "/name/" + E.Name).second)
        return Fail("element '" + E.Name + "' (ID " + W[1] + ") appears twice for " + ISA);
      bool IsJam = Kind == "jam";
      if (!CheckFile(E.Fields[IsJam ? "image" : "lib"], E.Fields["hash"], IsJam, Why))
        return Fail(Why);
      M.Elements.push_back(std::move(E));
    } else {
      return Fail("unexpected line '" + Line + "'");
    }
  }
  LineNo = 0;
  if (!SawVersion)
    return Fail("not a Two-Chains manifest");
  if (M.Package.empty() || M.Identity.empty())
    return Fail("no package or identity line");
  Out = std::move(M);
  return TC_OK;
}

} // namespace twochains::rt
