//===- PayloadHeaderFuzzer.cpp - parsePayloadHeader -----------------------===//
//
// Input: the receiver's state (the sequence its ring expects next, 8
// bytes; its slots, 4; the share it offers, 4; the bytes the message
// carries, 4), then the header's bytes (16, fewer or more too). A header
// accepted must name a frame of the sender's window and a size of at least
// one byte, at most the share, and exactly what the message carries; one
// refused as too large must at least lie in the window (its frame hears
// why); every refusal says why.
//
//===----------------------------------------------------------------------===//
#include "wire/Wire.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace twochains::rt;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-payload-header: %s\n", What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size < 20)
    return 0;
  uint64_t Expected;
  uint32_t Slots, Share, Length;
  std::memcpy(&Expected, Data, 8);
  std::memcpy(&Slots, Data + 8, 4);
  std::memcpy(&Share, Data + 12, 4);
  std::memcpy(&Length, Data + 16, 4);
  Slots = Slots % MaxSlots + 1; // a receiver's, bounded as its offer is
  // The header in a buffer of its own, so ASan sees reads past it.
  std::vector<uint8_t> Header(Data + 20, Data + Size);
  PayloadHeader H = {};
  std::string Why;
  tc_status_t St =
      parsePayloadHeader(Header.data(), Header.size(), Length, Expected, Slots, Share, H, Why);
  if (St != TC_OK) {
    if (Why.empty())
      broken("a refusal says nothing");
    if (St == TC_ERR_TOO_LARGE) {
      PayloadHeader Named;
      std::memcpy(&Named, Header.data(), sizeof Named);
      if (Named.Sequence < Expected || Named.Sequence - Expected >= Slots)
        broken("a payload outside the window would be told to a frame");
    }
    return 0;
  }
  if (Header.size() != sizeof H || H.Magic != PayloadMagic)
    broken("accepted a header that is not one");
  if (H.Sequence < Expected || H.Sequence - Expected >= Slots)
    broken("accepted a frame outside the sender's window");
  if (!H.Size || H.Size > Share || H.Size != Length)
    broken("accepted a size out of bounds");
  return 0;
}
