//===- Bundle.cpp - Many small frames in one slot -------------------------===//
#include "wire/Bundle.h"

namespace twochains::rt {

BundleReader::Next BundleReader::next(BundleRecord &Out) {
  if (!Left) {
    if (At == End)
      return Next::End;
    if (size_t(End - At) < sizeof(BundleRun))
      return Next::Malformed;
    std::memcpy(&Run, At, sizeof Run);
    At += sizeof Run;
    size_t Stride = bundleRecordStride(Run.RecordSize);
    if (!Run.Count || size_t(End - At) / Stride < Run.Count) {
      At = End;
      return Next::Malformed;
    }
    Left = Run.Count;
  }
  Out.Package = Run.Package;
  Out.Element = Run.Element;
  Out.Size = Run.RecordSize;
  Out.Payload = At;
  At += bundleRecordStride(Run.RecordSize);
  --Left;
  ++Records;
  return Next::Record;
}

bool BundleBuilder::append(uint64_t Package, uint32_t Element, const void *Payload, uint16_t Size) {
  if (joinRun(Package, Element, Payload, Size))
    return true;
  size_t Stride = bundleRecordStride(Size);
  if (sizeof(BundleRun) + Stride > Capacity - Used)
    return false;
  Run = {Package, Element, Size, 1};
  RunAt = Used;
  std::memcpy(Bytes + Used, &Run, sizeof Run);
  Used += sizeof Run;
  if (Size)
    std::memcpy(Bytes + Used, Payload, Size);
  if (Stride > Size)
    std::memset(Bytes + Used + Size, 0, Stride - Size);
  Used += Stride;
  ++Frames;
  return true;
}

} // namespace twochains::rt
