//===- Deployment.h - A package deployed to a peer, from offer to answer --===//
//
// One deployment at a time goes to a peer (code/Deploy.cpp, which alone
// changes it; send/ and job/ read it): the package, the number of its
// latest offer (an answer to an earlier one is ignored), whether the
// files the receiver asked for have gone, the time limit, the offer made
// again after a busy answer; then how it ended, and the packages the peer
// refused for good.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_DEPLOYMENT_H
#define TWOCHAINS_RUNTIME_CODE_DEPLOYMENT_H

#include "twochains/status.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

struct tc_package;

namespace twochains::rt {

class Deployment {
public:
  bool active() const { return Pkg != nullptr; }
  const tc_package *package() const { return Pkg; }
  uint64_t offerId() const { return Id; }
  /// Whether an answer naming this offer is the deployment's.
  bool answers(uint64_t OfferId) const { return active() && Id == OfferId; }
  /// When it next has work on the clock: its offer again, or its end.
  uint64_t dueNs() const { return RetryAtNs ? RetryAtNs : DeadlineNs + 1; }
  bool overdue(uint64_t NowNs) const { return NowNs > DeadlineNs; }
  /// Whether its offer is due again now, within its time.
  bool retryDue(uint64_t NowNs) const {
    return RetryAtNs && NowNs >= RetryAtNs && NowNs <= DeadlineNs;
  }

  void start(const tc_package *P, uint64_t Deadline) {
    Pkg = P;
    DeadlineNs = Deadline;
    BackoffNs = 0;
  }
  /// Offered (again) under a new number: no files sent for it yet, no
  /// offer due.
  void offered(uint64_t NewId) {
    Id = NewId;
    FilesSent = false;
    RetryAtNs = 0;
  }
  /// Whether the files the receiver asks for go now: at its first ask
  /// only (asked twice, its answer decides).
  bool takeFilesAsk() {
    if (FilesSent)
      return false;
    FilesSent = true;
    return true;
  }
  /// The receiver was busy: offered again after a wait that doubles,
  /// from First to Max. Returns the wait.
  uint64_t busy(uint64_t NowNs, uint64_t First, uint64_t Max) {
    BackoffNs = std::clamp<uint64_t>(BackoffNs * 2, First, Max);
    RetryAtNs = NowNs + BackoffNs;
    return BackoffNs;
  }
  void end() {
    Pkg = nullptr;
    FilesSent = false;
  }

  /// How the last deployment of the package with this tag ended.
  void ended(uint64_t PackageTag, tc_status_t St) {
    EndedTag = PackageTag;
    Ended = St;
  }
  bool endedFor(uint64_t PackageTag, tc_status_t *St) const {
    if (EndedTag != PackageTag)
      return false;
    *St = Ended;
    return true;
  }
  /// The peer refused the package for good: its frames fail at once.
  void refusedForGood(uint64_t PackageTag, tc_status_t St) { Refused.emplace_back(PackageTag, St); }
  /// Why the peer refused the package for good, or TC_OK.
  tc_status_t refusal(uint64_t PackageTag) const {
    for (const auto &[Tag, St] : Refused)
      if (Tag == PackageTag)
        return St;
    return TC_OK;
  }

private:
  const tc_package *Pkg = nullptr;
  uint64_t Id = 0, DeadlineNs = 0;
  bool FilesSent = false;
  uint64_t RetryAtNs = 0, BackoffNs = 0;
  uint64_t EndedTag = 0;
  tc_status_t Ended = TC_OK;
  std::vector<std::pair<uint64_t, tc_status_t>> Refused;
};

} // namespace twochains::rt

#endif
