//===- AddressBlobFuzzer.cpp - parseAddressBlob on any bytes --------------===//
//
// An accepted blob names a port, 1 to 64 addresses and a rank key of 32
// bytes or none, and packing what was read gives back exactly the bytes
// that were accepted.
//
//===----------------------------------------------------------------------===//
#include "wire/Wire.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace twochains::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::vector<uint8_t> Blob(Data, Data + Size); // its own buffer, for ASan
  uint16_t Port = 0;
  std::vector<uint32_t> Addresses;
  std::vector<uint8_t> Key, Worker;
  std::string Why;
  if (parseAddressBlob(Blob.data(), Blob.size(), Port, Addresses, Key, Worker, Why) != TC_OK) {
    if (Why.empty() || Port || !Addresses.empty() || !Key.empty() || !Worker.empty()) {
      std::fprintf(stderr, "fuzz-address-blob: a refusal that says nothing or sets outputs\n");
      std::abort();
    }
    return 0;
  }
  if (!Port || Addresses.empty() || Addresses.size() > MaxBlobAddresses ||
      (!Key.empty() && Key.size() != RankKeySize) || Worker.size() > MaxBlobWorkerAddress ||
      Blob.size() > MaxAddressBlobSize ||
      packAddressBlob(Port, Addresses, Key.empty() ? nullptr : Key.data(), Worker) != Blob) {
    std::fprintf(stderr, "fuzz-address-blob: accepted a blob it would not write\n");
    std::abort();
  }
  return 0;
}
