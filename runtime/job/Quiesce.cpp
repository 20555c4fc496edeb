//===- Quiesce.cpp - tc_job_quiesce: every frame of the job has run -------===//
//
// Termination detection by waves of four counters (Mattern's): each rank,
// once nothing of its own waits to leave, reports to rank 0 the frames it
// has sent to ranks and the frames of ranks it has finished, counted over
// every connection by sequence numbers (a frame sent again keeps its
// number); rank 0 sums them, and the job is quiet when two waves in a row
// find the same sums and the sums equal: no frame was in flight or running
// between them, and none can start (frames are started only by frames).
// Otherwise the next wave starts at once. Forwards are frames like any
// other, so a barrier made of this holds with them.
//
// One wave is enough when every rank reports the counts it had when the
// job was last found quiet: no rank sent a frame since, so none can have
// run one (the first frame of an epoch is sent by a rank before it reports,
// and changes its count). An idle job's quiesce is then one round trip,
// a barrier's cost.
//
// Between ranks whose connection stores straight into the other's memory
// (shared memory) reports and decisions are words of the credit line
// (wire/Wire.h, CreditWordQuiesce), stored as credit reports are: a
// waiting rank polls them, and one that sleeps is woken as by a frame.
// Other connections (TCP, RDMA puts) carry them as messages.
//
// A rank whose context ends says so to every rank it is connected to,
// with the quiesces it finished, ahead of its connections' close: a rank
// that left after finishing the quiesce another still waits in found the
// job quiet (that rank's decision may come after the close), and one that
// left before it makes the quiesce fail.
//
//   rank   -> rank 0  QUIESCE { report, epoch, wave, unchanged, sent, done }
//   rank 0 -> rank    QUIESCE { decision, epoch, wave, quiet }
//   rank   -> rank    QUIESCE { leaving, epoch }
//
//===----------------------------------------------------------------------===//
#include "job/Job.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "base/Timeouts.h"
#include "control/ControlMessage.h"
#include "core/Lock.h"
#include "core/Sleep.h"
#include "core/Stats.h"
#include "path/FramePath.h"
#include "send/PeerSend.h"

#include <cstring>
#include <algorithm>

using namespace twochains::rt;

namespace {

enum : uint32_t { QuiesceReport = 1, QuiesceDecision = 2, QuiesceLeaving = 3 };
/// It polls and yields this long before it sleeps.
constexpr uint64_t QuiesceSpinNs = 1'000'000;

/// Rank 0: every rank has reported the wave: decides it.
void decide(CoreContext *Ctx);

/// Whether quiescence goes by words of the credit line on this connection
/// (this side stores into the other's; wire/Wire.h), or by messages.
bool byWords(const tc_peer *B) { return B->Rx->CreditDirect && B->Tx->CreditWord; }

constexpr uint64_t QuiesceNumberMask = 0x3fffffff;

uint64_t headWord(uint64_t Epoch, uint32_t Wave, bool Flag) {
  return 1ull << 63 | uint64_t(Flag) << 62 | (Epoch & QuiesceNumberMask) << 32 | Wave;
}

/// The head word in this side's credit line from the peer, if it is of
/// this quiesce and wave.
bool headOf(CoreContext *Ctx, const tc_peer *B, uint64_t &Head) {
  if (!B || !B->Tx->CreditWord)
    return false;
  Head = __atomic_load_n(&B->Tx->CreditWord[CreditWordQuiesce], __ATOMIC_ACQUIRE);
  return (Head >> 63) &&
         (Head >> 32 & QuiesceNumberMask) == (Ctx->Job->QuiesceEpoch & QuiesceNumberMask) &&
         uint32_t(Head) == Ctx->Job->Quiesce.Wave;
}

tc_peer *boundTo(CoreContext *Ctx, uint32_t Rank) {
  tc_peer *B = Ctx->Job->Ranks[Rank].Handle ? Ctx->Job->Ranks[Rank].Handle->Bound : nullptr;
  return B && B->Welcomed && !B->Failed ? B : nullptr;
}

void takeReport(CoreContext *Ctx, uint32_t Rank, const QuiesceMessage &M) {
  auto &Q = Ctx->Job->Quiesce;
  if (M.Epoch != Ctx->Job->QuiesceEpoch || Rank >= Ctx->Job->JobSize)
    return;
  Q.ReportWave[Rank] = M.Wave;
  Q.Sent[Rank] = M.Sent;
  Q.Done[Rank] = M.Done;
  Q.Unchanged[Rank] = M.Verdict != 0;
}

void takeDecision(CoreContext *Ctx, const QuiesceMessage &M) {
  auto &Q = Ctx->Job->Quiesce;
  if (M.Epoch != Ctx->Job->QuiesceEpoch || M.Wave != Q.Wave)
    return;
  Q.Decision = M.Verdict ? 1 : 0;
  Q.DecidedWave = M.Wave;
}

/// QUIESCE: from an authenticated rank of the job only; a report only at
/// rank 0, a decision only from it.
ucs_status_t onQuiesce(void *Arg, const void *Header, size_t HeaderLength, void *, size_t Length,
                       const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  tc_peer *Peer = senderOf(Ctx, Param);
  QuiesceMessage M;
  if (!Peer || !Peer->Welcomed || Peer->JobRank == NoJobRank || !Ctx->Job->Joined ||
      HeaderLength != sizeof M || Length) {
    refuseMessage(Ctx, Peer,
                  std::string("a quiescence message ") +
                      (!Peer || !Peer->Welcomed ? "before its connection was made"
                       : Peer->JobRank == NoJobRank || !Ctx->Job->Joined ? "from outside the job"
                                                                         : "of a wrong size"),
                  Param);
    return UCS_OK;
  }
  std::memcpy(&M, Header, sizeof M);
  bool Wellformed = M.Magic == QuiesceMagic && Peer->JobRank < Ctx->Job->JobSize &&
                    (M.Kind == QuiesceReport     ? Ctx->Wireup->Job.Rank == 0
                     : M.Kind == QuiesceDecision ? Peer->JobRank == 0
                                                 : M.Kind == QuiesceLeaving);
  if (!Wellformed) {
    refuseMessage(Ctx, Peer, "a malformed quiescence message", Param);
    return UCS_OK;
  }
  // Only over the connection the pair keeps: the one both ranks' handles
  // name, which rank words and the decision travel on too. Another that
  // the rank proved (a second connect, never kept) speaks for no wave.
  if (boundTo(Ctx, Peer->JobRank) != Peer) {
    refuseMessage(Ctx, Peer,
                  "a quiescence message on a connection that is not the one kept with rank " +
                      std::to_string(Peer->JobRank),
                  Param);
    return UCS_OK;
  }
  if (M.Kind == QuiesceReport) {
    takeReport(Ctx, Peer->JobRank, M);
  } else if (M.Kind == QuiesceDecision) {
    takeDecision(Ctx, M);
  } else {
    RouteTarget &T = Ctx->Job->Ranks[Peer->JobRank];
    T.Left = true;
    T.LeftAfterQuiesces = M.Epoch;
  }
  // A thread waiting behind the one that took it looks again.
  notifySleepers(Ctx);
  return UCS_OK;
}

void decide(CoreContext *Ctx) {
  auto &Q = Ctx->Job->Quiesce;
  uint64_t Sent = 0, Done = 0;
  bool Unchanged = true;
  for (uint32_t R = 0; R < Ctx->Job->JobSize; ++R) {
    if (Q.ReportWave[R] != int64_t(Q.Wave))
      return;
    Sent += Q.Sent[R];
    Done += Q.Done[R];
    Unchanged = Unchanged && Q.Unchanged[R];
  }
  bool Quiet = Sent == Done && (Unchanged || (Sent == Q.LastSent && Done == Q.LastDone));
  Q.LastSent = Sent;
  Q.LastDone = Done;
  QuiesceMessage M = {QuiesceMagic, QuiesceDecision, Ctx->Job->QuiesceEpoch, Q.Wave, Quiet, 0, 0};
  for (uint32_t R = 1; R < Ctx->Job->JobSize; ++R) {
    tc_peer *B = boundTo(Ctx, R);
    if (B && byWords(B))
      reportCreditWord(B, CreditWordQuiesce, headWord(M.Epoch, M.Wave, Quiet));
    else if (B)
      sendMessage(Ctx, B, AmQuiesce, &M, sizeof M, nullptr, 0);
  }
  takeDecision(Ctx, M);
}

/// Whether a rank finished this quiesce and then left: it found the job
/// quiet.
bool finishedByLeaver(CoreContext *Ctx) {
  for (const RouteTarget &T : Ctx->Job->Ranks)
    if (T.Left && T.LeftAfterQuiesces > Ctx->Job->QuiesceEpoch)
      return true;
  return false;
}

/// The first rank that has gone, or -1.
int64_t goneRank(CoreContext *Ctx) {
  for (const RouteTarget &T : Ctx->Job->Ranks)
    if (T.Handle && T.Handle->ProxyGone)
      return T.Rank;
  return -1;
}

} // namespace

void twochains::rt::jobFrameCounts(CoreContext *Ctx, uint64_t &Sent, uint64_t &Done) {
  Sent = Ctx->Job->ReleasedSent;
  Done = Ctx->Job->ReleasedDone;
  auto Add = [&](const tc_peer *P) {
    if (P->JobRank == NoJobRank || !P->Welcomed)
      return;
    if (P->Tx->Send)
      Sent += P->Tx->Send->next();
    if (P->Rx->Receive)
      Done += P->Rx->Receive->expected();
  };
  for (const auto &P : Ctx->Accepted)
    Add(P.get());
  for (const auto &P : Ctx->Job->Owned)
    Add(P.get());
}

bool twochains::rt::jobSendsIdle(CoreContext *Ctx) {
  auto Idle = [](const tc_peer *P) {
    return P->Sending->Queued.empty() && !P->Tx->BatchFrames && !P->Sending->Bundle.Slot;
  };
  for (const RouteTarget &T : Ctx->Job->Ranks)
    if (T.Handle && !Idle(T.Handle.get()))
      return false;
  for (const auto &P : Ctx->Accepted)
    if (P->JobRank != NoJobRank && P->Welcomed && !P->Failed && !Idle(P.get()))
      return false;
  for (const auto &P : Ctx->Job->Owned)
    if (P->Welcomed && !P->Failed && !Idle(P.get()))
      return false;
  return true;
}

/// What came by words: at rank 0, the reports of this wave; elsewhere,
/// rank 0's decision on it.
static void takeWords(CoreContext *Ctx) {
  auto &Q = Ctx->Job->Quiesce;
  uint64_t Head;
  if (Ctx->Wireup->Job.Rank != 0) {
    if (Q.Reported && Q.Decision < 0 && headOf(Ctx, boundTo(Ctx, 0), Head)) {
      QuiesceMessage M = {QuiesceMagic,
                          QuiesceDecision,
                          Ctx->Job->QuiesceEpoch,
                          Q.Wave,
                          uint32_t(Head >> 62 & 1),
                          0,
                          0};
      takeDecision(Ctx, M);
    }
    return;
  }
  for (uint32_t R = 1; R < Ctx->Job->JobSize; ++R) {
    tc_peer *B;
    if (Q.ReportWave[R] == int64_t(Q.Wave) || !(B = boundTo(Ctx, R)) || !headOf(Ctx, B, Head))
      continue;
    // The counts were stored before the head, which was loaded acquiring.
    QuiesceMessage M = {QuiesceMagic,
                        QuiesceReport,
                        Ctx->Job->QuiesceEpoch,
                        Q.Wave,
                        uint32_t(Head >> 62 & 1),
                        B->Tx->CreditWord[CreditWordQuiesceSent],
                        B->Tx->CreditWord[CreditWordQuiesceDone]};
    takeReport(Ctx, R, M);
  }
}

/// This rank's report of the wave, once nothing of its own waits to leave.
static void reportWave(CoreContext *Ctx) {
  auto &Q = Ctx->Job->Quiesce;
  if (Q.Reported || !jobSendsIdle(Ctx))
    return;
  QuiesceMessage M = {QuiesceMagic, QuiesceReport, Ctx->Job->QuiesceEpoch, Q.Wave, 0, 0, 0};
  jobFrameCounts(Ctx, M.Sent, M.Done);
  M.Verdict = M.Sent == Q.QuietSent && M.Done == Q.QuietDone;
  if (Ctx->Wireup->Job.Rank == 0) {
    takeReport(Ctx, 0, M);
    Q.Reported = true;
  } else if (tc_peer *B = boundTo(Ctx, 0); B && byWords(B)) {
    // The counts, then the head that says they are there.
    Q.Reported = reportCreditWord(B, CreditWordQuiesceSent, M.Sent) == CreditReport::Sent &&
                 reportCreditWord(B, CreditWordQuiesceDone, M.Done) == CreditReport::Sent &&
                 reportCreditWord(B, CreditWordQuiesce, headWord(M.Epoch, M.Wave, M.Verdict)) ==
                     CreditReport::Sent;
  } else if (B) {
    Q.Reported = sendMessage(Ctx, B, AmQuiesce, &M, sizeof M, nullptr, 0) == UCS_OK;
  }
}

/// One look at the wave, after a turn of the context: TC_OK once the job is
/// quiet, TC_ERR_IO if a rank has gone, TC_ERR_INCOMPLETE meanwhile. A wave
/// found not quiet is followed by the next at once.
static tc_status_t quiesceTurn(CoreContext *Ctx) {
  auto &Q = Ctx->Job->Quiesce;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  for (;;) {
    // A decision that came before a rank went still stands, and so does
    // one a rank that left took.
    if (Q.Decision != 1 && finishedByLeaver(Ctx))
      Q.Decision = 1;
    if (Q.Decision != 1) {
      if (int64_t Gone = goneRank(Ctx); Gone >= 0) {
        logError("tc_job_quiesce: rank " + std::to_string(Gone) + " has gone");
        return TC_ERR_IO;
      }
      reportWave(Ctx);
      takeWords(Ctx);
      if (Ctx->Wireup->Job.Rank == 0 && Q.Reported && Q.Decision < 0)
        decide(Ctx);
    }
    if (Q.Decision == 1) {
      // Quiet: nothing runs any more, so the counts now are the job's
      // quiet ones (the next quiesce compares with them).
      jobFrameCounts(Ctx, Q.QuietSent, Q.QuietDone);
      ++Ctx->Job->QuiesceEpoch;
      Q.ReportWave.assign(Ctx->Job->JobSize, -1);
      return TC_OK;
    }
    if (Q.Decision != 0)
      return TC_ERR_INCOMPLETE;
    ++Q.Wave;
    Q.Reported = false;
    Q.Decision = -1;
  }
}

extern "C" tc_status_t tc_job_quiesce(tc_context_t *Api, int TimeoutMs) {
  auto *Ctx = coreOf(Api);
  if (!Ctx || !Ctx->Job->Joined || TimeoutMs < 0 || ThreadRunningJamOf == Ctx)
    return TC_ERR_INVALID_PARAM;
  uint64_t Deadline = nowNs() + msToNs(uint64_t(TimeoutMs));
  auto &Q = Ctx->Job->Quiesce;
  {
    std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
    Q.Wave = 0;
    Q.Reported = false;
    Q.Decision = -1;
    Q.LastSent = Q.LastDone = ~0ull;
    // Rank 0 talks to every rank, and every rank to rank 0.
    if (Ctx->Wireup->Job.Rank == 0)
      for (uint32_t R = 1; R < Ctx->Job->JobSize; ++R)
        rankHandle(Ctx, R);
    else
      rankHandle(Ctx, 0);
  }
  IdleWait Idle;
  // Every rank is expected soon: poll and yield a while longer than other
  // waits before sleeping, as MPI's collectives do (a sleep and its wake
  // cost about 100 us a hop here, several times a wave).
  Idle.SleepAfterNs = QuiesceSpinNs;
  for (;;) {
    if (Ctx->Progress(Ctx))
      Idle.busy();
    if (tc_status_t St = quiesceTurn(Ctx); St != TC_ERR_INCOMPLETE)
      return St;
    uint64_t Now = nowNs();
    if (Now > Deadline) {
      logError("tc_job_quiesce: the job was not quiet within " + std::to_string(TimeoutMs) + " ms");
      return TC_ERR_TIMED_OUT;
    }
    // Processes may outnumber cores: poll a while, then sleep until a frame
    // or a message comes (or a connect in the background is due again).
    Idle.idle(Ctx, Now, Deadline);
  }
}

void twochains::rt::announceLeaving(CoreContext *Ctx) {
  if (!Ctx->Job->Joined)
    return;
  QuiesceMessage M = {QuiesceMagic, QuiesceLeaving, Ctx->Job->QuiesceEpoch, 0, 0, 0, 0};
  for (const RouteTarget &T : Ctx->Job->Ranks)
    if (tc_peer *B = T.Handle ? T.Handle->Bound : nullptr;
        B && B->Welcomed && !B->Failed && T.Rank != Ctx->Wireup->Job.Rank)
      sendMessage(Ctx, B, AmQuiesce, &M, sizeof M, nullptr, 0);
}

ucs_status_t twochains::rt::setupQuiesce(CoreContext *Ctx) {
  return setControlHandlers(Ctx, {{AmQuiesce, &onQuiesce}});
}
