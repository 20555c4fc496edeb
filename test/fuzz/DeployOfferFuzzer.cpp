//===- DeployOfferFuzzer.cpp - parseDeployOffer ---------------------------===//
//
// Input: a deployment offer's header (the first 32 bytes), then its body
// (manifest, signature, file table). An accepted offer's parts must fill
// the body exactly, and every file must be bounded and named by a plain
// relative path, once.
//
//===----------------------------------------------------------------------===//
#include "wire/Deploy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

using namespace twochains::rt;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-deploy-offer: accepted an offer whose %s\n", What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size < sizeof(DeployHeader))
    return 0;
  DeployHeader H;
  std::memcpy(&H, Data, sizeof H);
  // The body in a buffer of its own, so ASan sees reads past it.
  std::vector<uint8_t> Body(Data + sizeof H, Data + Size);
  std::string Manifest, Signature, Why;
  std::vector<DeployFile> Files;
  if (parseDeployOffer(H, Body.data(), Body.size(), Manifest, Signature, Files, Why) != TC_OK) {
    if (Why.empty())
      broken("refusal says nothing");
    if (!Manifest.empty() || !Files.empty())
      broken("outputs were set on a refusal");
    return 0;
  }
  if (Manifest.size() != H.ManifestSize || Signature.size() != H.SignatureSize ||
      Files.size() != H.FileCount || Manifest.size() > MaxDeployManifest)
    broken("parts differ from its header");
  uint64_t Total = 0, TableBytes = 0;
  std::set<std::string> Paths;
  for (const DeployFile &F : Files) {
    if (!isDeployPath(F.Path) || F.Path.find("..") != std::string::npos || F.Path[0] == '/')
      broken("path leaves the package folder");
    if (!Paths.insert(F.Path).second)
      broken("path appears twice");
    if (F.Size > MaxDeployFileSize || F.Hash.size() != 64)
      broken("file is out of bounds");
    Total += F.Size;
    TableBytes += 74 + F.Path.size();
  }
  if (Total > MaxDeployBytes)
    broken("files are larger than the limit");
  if (Manifest.size() + Signature.size() + TableBytes != Body.size())
    broken("parts do not fill its body");
  return 0;
}
