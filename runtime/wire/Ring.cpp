//===- Ring.cpp -----------------------------------------------------------===//
#include "wire/Ring.h"

namespace twochains::rt {

void SenderRing::credit(uint64_t Report) {
  // Reports arrive by one-sided put and may be read twice or late; a report
  // beyond what was sent would be a lie.
  if (Report > Finished && Report <= Next)
    Finished = Report;
}

uint64_t ReceiverRing::takeCreditReport() {
  Reported = Expected;
  return Reported;
}

} // namespace twochains::rt
