//===- Shipment.h - The image shipped to a peer, awaiting its answer ------===//
//
// One image at a time is shipped ahead of its frames to a peer
// (code/CodeTransfer.cpp, which alone changes it; the queue in send/
// reads it): its package, its element, until when it is awaited, and when
// it is offered again after the receiver had no place for it.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_SHIPMENT_H
#define TWOCHAINS_RUNTIME_CODE_SHIPMENT_H

#include "twochains/status.h"

#include <cstdint>

struct tc_package;

namespace twochains::rt {

class Shipment {
public:
  bool active() const { return Pkg != nullptr; }
  const tc_package *package() const { return Pkg; }
  uint32_t element() const { return Element; }
  /// Whether an answer naming this package (by tag) and element is this
  /// shipment's.
  bool answeredBy(uint64_t PackageTag, uint32_t AnsweredElement) const {
    return active() && Tag == PackageTag && Element == AnsweredElement;
  }
  /// When it next has work on the clock: its offer again, or its end.
  uint64_t dueNs() const { return RetryNs ? RetryNs : DeadlineNs + 1; }
  bool overdue(uint64_t NowNs) const { return NowNs > DeadlineNs; }
  /// The receiver had no place for it (Refusal) when it is over, if ever.
  tc_status_t refusal() const { return Refusal; }

  void start(const tc_package *P, uint64_t PackageTag, uint32_t E, uint64_t Deadline) {
    Pkg = P;
    Tag = PackageTag;
    Element = E;
    DeadlineNs = Deadline;
    RetryNs = 0;
    Refusal = TC_OK;
  }
  /// The receiver had no place: offered again at RetryAt.
  void refusedForNow(tc_status_t Why, uint64_t RetryAt) {
    Refusal = Why;
    RetryNs = RetryAt;
  }
  /// Whether its offer is due again now; if so, no longer waiting for it.
  bool takeRetry(uint64_t NowNs) {
    if (!RetryNs || NowNs < RetryNs)
      return false;
    RetryNs = 0;
    return true;
  }
  void end() {
    Pkg = nullptr;
    RetryNs = 0;
  }

private:
  const tc_package *Pkg = nullptr;
  uint64_t Tag = 0;
  uint32_t Element = 0;
  uint64_t DeadlineNs = 0, RetryNs = 0;
  tc_status_t Refusal = TC_OK;
};

} // namespace twochains::rt

#endif
