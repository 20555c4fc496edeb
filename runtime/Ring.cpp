//===- Ring.cpp -----------------------------------------------------------===//
#include "Ring.h"

namespace twochains::rt {

tc_status_t SenderRing::reserve(uint64_t *Sequence, uint32_t *Slot) {
  if (!Sequence || !Slot)
    return TC_ERR_INVALID_PARAM;
  if (Next >= Finished + Slots)
    return TC_ERR_NO_CREDIT;
  *Sequence = Next;
  *Slot = NextSlot;
  ++Next;
  if (++NextSlot == Slots)
    NextSlot = 0;
  return TC_OK;
}

void SenderRing::credit(uint64_t Report) {
  // Reports arrive by one-sided put and may be read twice or late; a report
  // beyond what was sent would be a lie.
  if (Report > Finished && Report <= Next)
    Finished = Report;
}

bool ReceiverRing::finish() {
  ++Expected;
  if (++ExpectedSlot == Slots)
    ExpectedSlot = 0;
  return Expected - Reported >= Batch;
}

uint64_t ReceiverRing::takeCreditReport() {
  Reported = Expected;
  return Reported;
}

} // namespace twochains::rt
