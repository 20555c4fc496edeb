//===- BundleReaderFuzzer.cpp - A bundle frame's payload, any bytes -------===//
//
// Input: a bundle's payload (wire/Bundle.h), as the receiver reads it out
// of a frame it has checked. The buffer is exactly the input, so ASan sees
// any read past it. Every record handed out must lie inside the input,
// after the one before it; a bundle holds no more records than it has
// words; what the reader accepted, built again with BundleBuilder into
// the same capacity, must read back the same.
//
//===----------------------------------------------------------------------===//
#include "wire/Bundle.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace twochains::rt;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-bundle-reader: %s\n", What);
  std::abort();
}

static volatile uint8_t Sink;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto *Runs = static_cast<uint8_t *>(std::malloc(Size ? Size : 1));
  if (Size)
    std::memcpy(Runs, Data, Size);
  BundleReader Reader(Runs, Size);
  std::vector<BundleRecord> Records;
  BundleRecord R;
  BundleReader::Next Last;
  const uint8_t *After = Runs;
  while ((Last = Reader.next(R)) == BundleReader::Next::Record) {
    if (R.Payload < After || R.Size > size_t(Runs + Size - R.Payload))
      broken("a record lies outside the bundle, or before the one it follows");
    uint8_t X = 0;
    for (uint32_t I = 0; I < R.Size; ++I)
      X ^= R.Payload[I];
    Sink = X;
    After = R.Payload + R.Size;
    Records.push_back(R);
    if (Records.size() > Size / 8)
      broken("more records than the bundle has words");
  }
  if (Reader.records() != Records.size())
    broken("the reader's count differs from the records it gave");
  if (Last == BundleReader::Next::End) {
    std::vector<uint8_t> Again(Size ? Size : 1);
    BundleBuilder B;
    B.reset(Again.data(), Size);
    for (const BundleRecord &Rec : Records)
      if (Rec.Size > UINT16_MAX ||
          !B.append(Rec.Package, Rec.Element, Rec.Payload, uint16_t(Rec.Size)))
        broken("records the reader accepted do not fit a bundle as large again");
    BundleReader Back(B.data(), B.size());
    for (const BundleRecord &Rec : Records) {
      BundleRecord Got;
      if (Back.next(Got) != BundleReader::Next::Record || Got.Package != Rec.Package ||
          Got.Element != Rec.Element || Got.Size != Rec.Size ||
          std::memcmp(Got.Payload, Rec.Payload, Rec.Size) != 0)
        broken("a bundle built from the records reads back otherwise");
    }
    BundleRecord Extra;
    if (Back.next(Extra) != BundleReader::Next::End)
      broken("a bundle built from the records reads back more");
  }
  std::free(Runs);
  return 0;
}
