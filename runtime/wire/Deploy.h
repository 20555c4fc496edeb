//===- Deploy.h - The messages that deploy a package into a peer ----------===//
//
//   sender   -> receiver  DEPLOY      offer { id, sizes } manifest, signature,
//                                     file table
//   receiver -> sender    DEPLOY_ACK  need { id, count } bitmap of the files it
//                                     lacks; or final { id, status } reason
//   sender   -> receiver  DEPLOY      files { id, size } the files it lacks,
//                                     back to back, in the table's order
//
// The file table names each file of the package as the manifest does
// (path relative to the package folder) with its size and SHA-256, so the
// receiver asks only for what it does not hold. Nothing in the table is
// trusted: every file is checked against the manifest's hashes once it is
// in place, and under the signed policy the manifest's signature covers
// those (docs/deploying.md).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_WIRE_DEPLOY_H
#define TWOCHAINS_RUNTIME_WIRE_DEPLOY_H

#include "wire/Wire.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace twochains::rt {

constexpr uint32_t DeployOfferMagic = controlMagic('T', 'C', 'D', 'O'); // DEPLOY, offer
constexpr uint32_t DeployFilesMagic = controlMagic('T', 'C', 'D', 'F'); // DEPLOY, files
constexpr uint32_t DeployNeedMagic = controlMagic('T', 'C', 'D', 'N');  // DEPLOY_ACK, need
constexpr uint32_t DeployDoneMagic = controlMagic('T', 'C', 'D', 'D');  // DEPLOY_ACK, final

/// What a receiver takes in one deployment: its manifest and signature,
/// its files, their bytes, one path.
constexpr size_t MaxDeployManifest = size_t(4) << 20;
constexpr size_t MaxDeploySignature = 4096;
constexpr uint32_t MaxDeployFiles = 4096;
constexpr uint64_t MaxDeployFileSize = 64ull << 20;
constexpr uint64_t MaxDeployBytes = 256ull << 20;
constexpr size_t MaxDeployPath = 512;
constexpr size_t MaxDeployReason = 512;
/// Packages a context runs by deployment at once, from all its deployers.
constexpr size_t MaxDeployedPackages = 256;
/// One deployer's (a job rank's, else an address's): packages in use at
/// once (a newer build of one replaces it, and its files go), and the
/// bytes of every build it had installed in the context's life (mapped
/// libraries and code are never released). All deployers' bytes together.
/// TC_DEPLOY_PEER_PACKAGES and TC_DEPLOY_PEER_BYTES lower the first two.
constexpr size_t MaxDeployedPackagesPerPeer = 16;
constexpr uint64_t MaxDeployedBytesPerPeer = 512ull << 20;
constexpr uint64_t MaxDeployedBytes = 2048ull << 20;
/// Deployments whose bytes a receiver holds at once, and one peer's share.
constexpr size_t MaxDeploymentsArriving = 4;
constexpr size_t MaxDeploymentsPerPeer = 1;

struct DeployHeader {
  uint32_t Magic;
  uint32_t FileCount;   // offer: entries in the table; files: files sent
  uint64_t Id;          // the sender's number for this deployment
  uint32_t ManifestSize, SignatureSize; // offer only
  uint64_t BodySize;    // the message's data, exactly
};
static_assert(sizeof(DeployHeader) == 32, "wire layout");

struct DeployAnswer {
  uint32_t Magic;
  int32_t Status;       // final: TC_OK or why not
  uint64_t Id;
  uint32_t FileCount;   // need: bits in the bitmap that follows
  uint32_t Reserved;
};
static_assert(sizeof(DeployAnswer) == 24, "wire layout");

/// One file of the table.
struct DeployFile {
  std::string Path;     // relative to the package folder
  std::string Hash;     // 64 lower-case hex digits
  uint64_t Size = 0;
};

/// The offer's body: manifest, signature, then per file {u64 size, 64 hex
/// digits of hash, u16 path size, path}.
std::vector<uint8_t> encodeDeployOffer(const std::string &Manifest, const std::string &Signature,
                                       const std::vector<DeployFile> &Files);

/// Checks an offer's body against its header and the limits: sizes, file
/// count, each path relative, inside the folder and of plain characters,
/// each hash hex, no path twice, the total within MaxDeployBytes. Why says
/// what is wrong; the outputs are set only on TC_OK.
tc_status_t parseDeployOffer(const DeployHeader &H, const uint8_t *Body, size_t Size,
                             std::string &Manifest, std::string &Signature,
                             std::vector<DeployFile> &Files, std::string &Why);

/// A path the table may name: relative, at most MaxDeployPath bytes of
/// letters, digits, '_', '-', '.', '/', no empty or dot-only component.
bool isDeployPath(const std::string &Path);

} // namespace twochains::rt

#endif
