//===- make-frame-seeds.cpp - Seeds for fuzz-frame-validator --------------===//
//
//   make-frame-seeds DIR
//
// Writes real frames, encoded with encodeFrame, in the fuzzer's input
// format (the expected sequence, 8 bytes little-endian, then the slot):
// a one-line Local frame, Local and cached frames with payloads past one
// line, and an injected frame with an image. Run it again when the frame
// format changes; the fuzz sub-project builds it next to the fuzzers.
//
//===----------------------------------------------------------------------===//
#include "wire/Frame.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace twochains::rt;

static bool write(const std::string &Dir, const char *Name, const FrameSpec &Spec,
                  size_t SlotSize) {
  std::vector<uint8_t> Slot(SlotSize, 0);
  size_t Size = 0;
  if (encodeFrame(Slot.data(), Slot.size(), Spec, &Size) != TC_OK) {
    std::fprintf(stderr, "make-frame-seeds: cannot encode %s\n", Name);
    return false;
  }
  FrameView V;
  if (checkFrame(Slot.data(), Slot.size(), Spec.Sequence, &V) != TC_OK) {
    std::fprintf(stderr, "make-frame-seeds: %s does not check\n", Name);
    return false;
  }
  std::string Path = Dir + "/" + Name;
  FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F)
    return false;
  uint8_t Seq[8];
  for (int I = 0; I < 8; ++I)
    Seq[I] = uint8_t(Spec.Sequence >> (8 * I));
  bool OK = std::fwrite(Seq, 1, 8, F) == 8 && std::fwrite(Slot.data(), 1, Size, F) == Size;
  return std::fclose(F) == 0 && OK;
}

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    std::fprintf(stderr, "usage: make-frame-seeds DIR\n");
    return 2;
  }
  std::string Dir = Argv[1];
  uint8_t Payload[200];
  for (size_t I = 0; I < sizeof Payload; ++I)
    Payload[I] = uint8_t(I * 7 + 1);
  uint8_t Image[128] = {};
  for (size_t I = 8; I < sizeof Image; ++I)
    Image[I] = uint8_t(0xc3 ^ I);

  FrameSpec OneLine;
  OneLine.Kind = FrameLocal;
  OneLine.Package = 0x1122334455667788ull;
  OneLine.Element = 3;
  OneLine.Payload = Payload;
  OneLine.PayloadSize = 4;
  OneLine.Sequence = 1;
  FrameSpec Local = OneLine;
  Local.PayloadSize = 100;
  Local.Sequence = 7;
  FrameSpec Cached = OneLine;
  Cached.Kind = FrameCached;
  Cached.Code = 0xdeadbeefcafef00dull;
  Cached.PayloadSize = 40;
  Cached.Sequence = 0x100000002ull;
  FrameSpec CachedInline = Cached;
  CachedInline.PayloadSize = 24;
  FrameSpec Injected = OneLine;
  Injected.Kind = FrameInjected;
  Injected.Image = Image;
  Injected.ImageSize = sizeof Image;
  Injected.Code = 0x0123456789abcdefull;
  Injected.PayloadSize = 24;
  Injected.Sequence = 42;
  // A direct sender's frames carry the ordered mark: the receiver's inline
  // paths take those (captureMarkedLine, captureMarkedFrame).
  FrameSpec OneLineMarked = OneLine, LocalMarked = Local, CachedMarked = Cached;
  OneLineMarked.Ordered = LocalMarked.Ordered = CachedMarked.Ordered = true;
  // A frame whose payload went ahead: the flag, and what names the payload.
  PayloadAhead Named = {PayloadAheadMagic, 100000, 9, {0, 0}};
  FrameSpec Ahead = LocalMarked;
  Ahead.Payload = &Named;
  Ahead.PayloadSize = sizeof Named;
  Ahead.Sequence = 9;
  Ahead.Flags = FramePayloadAhead;
  bool OK = write(Dir, "local-one-line", OneLine, 64) && write(Dir, "local", Local, 256) &&
            write(Dir, "cached", Cached, 128) && write(Dir, "cached-one-line", CachedInline, 64) &&
            write(Dir, "injected", Injected, 512) &&
            write(Dir, "local-one-line-marked", OneLineMarked, 64) &&
            write(Dir, "local-marked", LocalMarked, 256) &&
            write(Dir, "cached-marked", CachedMarked, 128) &&
            write(Dir, "local-payload-ahead-marked", Ahead, 128);
  return OK ? 0 : 1;
}
