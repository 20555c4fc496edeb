//===- Deploy.cpp - Encoding and checking deployment offers ---------------===//
#include "wire/Deploy.h"

#include <cstring>
#include <set>

namespace twochains::rt {

bool isDeployPath(const std::string &Path) {
  if (Path.empty() || Path.size() > MaxDeployPath || Path.front() == '/' || Path.back() == '/')
    return false;
  size_t Start = 0;
  while (Start <= Path.size()) {
    size_t Slash = Path.find('/', Start);
    std::string Part = Path.substr(Start,
                                   Slash == std::string::npos ? std::string::npos : Slash - Start);
    if (Part.empty() || Part.find_first_not_of('.') == std::string::npos)
      return false; // "a//b", ".", ".."
    for (char C : Part)
      if (!((C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || (C >= '0' && C <= '9') ||
            C == '_' || C == '-' || C == '.'))
        return false;
    if (Slash == std::string::npos)
      break;
    Start = Slash + 1;
  }
  return true;
}

std::vector<uint8_t> encodeDeployOffer(const std::string &Manifest, const std::string &Signature,
                                       const std::vector<DeployFile> &Files) {
  std::vector<uint8_t> Body(Manifest.begin(), Manifest.end());
  Body.insert(Body.end(), Signature.begin(), Signature.end());
  for (const DeployFile &F : Files) {
    uint8_t Size[8];
    std::memcpy(Size, &F.Size, 8);
    Body.insert(Body.end(), Size, Size + 8);
    Body.insert(Body.end(), F.Hash.begin(), F.Hash.end());
    uint16_t PathSize = uint16_t(F.Path.size());
    Body.push_back(uint8_t(PathSize));
    Body.push_back(uint8_t(PathSize >> 8));
    Body.insert(Body.end(), F.Path.begin(), F.Path.end());
  }
  return Body;
}

tc_status_t parseDeployOffer(const DeployHeader &H, const uint8_t *Body, size_t Size,
                             std::string &Manifest, std::string &Signature,
                             std::vector<DeployFile> &Files, std::string &Why) {
  auto Bad = [&](const std::string &What) {
    Why = What;
    return TC_ERR_BAD_OFFER;
  };
  if (H.Magic != DeployOfferMagic)
    return Bad("not an offer");
  if (H.BodySize != Size)
    return Bad("a body of " + std::to_string(Size) + " bytes, not the " +
               std::to_string(H.BodySize) + " its header says");
  if (!H.ManifestSize || H.ManifestSize > MaxDeployManifest ||
      H.SignatureSize > MaxDeploySignature || !H.FileCount || H.FileCount > MaxDeployFiles)
    return Bad("a manifest of " + std::to_string(H.ManifestSize) + " bytes, a signature of " +
               std::to_string(H.SignatureSize) + " and " + std::to_string(H.FileCount) +
               " files (at most " + std::to_string(MaxDeployManifest) + ", " +
               std::to_string(MaxDeploySignature) + " and " + std::to_string(MaxDeployFiles) + ")");
  if (Size < uint64_t(H.ManifestSize) + H.SignatureSize)
    return Bad("a body shorter than its manifest and signature");
  size_t At = H.ManifestSize + H.SignatureSize;
  std::vector<DeployFile> Table;
  std::set<std::string> Paths;
  uint64_t Total = 0;
  for (uint32_t I = 0; I < H.FileCount; ++I) {
    if (Size - At < 8 + 64 + 2)
      return Bad("file " + std::to_string(I) + " of the table is cut short");
    DeployFile F;
    std::memcpy(&F.Size, Body + At, 8);
    F.Hash.assign(reinterpret_cast<const char *>(Body + At + 8), 64);
    size_t PathSize = size_t(Body[At + 72]) | size_t(Body[At + 73]) << 8;
    At += 74;
    if (PathSize > Size - At)
      return Bad("file " + std::to_string(I) + "'s path is cut short");
    F.Path.assign(reinterpret_cast<const char *>(Body + At), PathSize);
    At += PathSize;
    if (F.Hash.find_first_not_of("0123456789abcdef") != std::string::npos)
      return Bad("file " + std::to_string(I) + "'s hash is not 64 lower-case hex digits");
    if (!isDeployPath(F.Path))
      return Bad("file " + std::to_string(I) + "'s path is not a plain relative path");
    if (!Paths.insert(F.Path).second)
      return Bad("the path " + F.Path + " twice");
    if (F.Size > MaxDeployFileSize || (Total += F.Size) > MaxDeployBytes)
      return Bad("file " + F.Path + " of " + std::to_string(F.Size) + " bytes (at most " +
                 std::to_string(MaxDeployFileSize) + ", and " + std::to_string(MaxDeployBytes) +
                 " in all)");
    Table.push_back(std::move(F));
  }
  if (At != Size)
    return Bad(std::to_string(Size - At) + " bytes after the file table");
  Manifest.assign(reinterpret_cast<const char *>(Body), H.ManifestSize);
  Signature.assign(reinterpret_cast<const char *>(Body) + H.ManifestSize, H.SignatureSize);
  Files = std::move(Table);
  return TC_OK;
}

} // namespace twochains::rt
