//===- Context.cpp - Contexts: parameters, UCX contexts and workers -------===//
//
// A context owns two UCX contexts (docs/security.md, "memory exposure"):
//
//   Ucp     active messages only, every transport, TCP on the interfaces
//           this process listens on or connects through only
//           (control/ControlWorker.h): connections, the handshake, rieds,
//           and frames of peers that RMA cannot reach
//   RmaUcp  RMA and active messages, every transport but TCP: the rings and
//           credit lines peers put into, where a memory key is a boundary
//           the hardware or the kernel enforces
//
// UCX emulates RMA over TCP with active messages that write wherever the
// sender says; such handlers exist only in a context with RMA, and RmaUcp
// has no TCP, so no peer ever reaches memory through them.
//
//===----------------------------------------------------------------------===//
#include "context/Context.h"

#include "base/Log.h"
#include "base/Timeouts.h"
#include "calls/Calls.h"
#include "code/CodeTransfer.h"
#include "code/Deploy.h"
#include "containment/JamGuard.h"
#include "control/ControlMessage.h"
#include "control/ControlWorker.h"
#include "core/Polled.h"
#include "core/Sleep.h"
#include "receive/PayloadAhead.h"
#include "path/FramePath.h"
#include "send/Send.h"
#include "ucx/Setup.h"
#include "ucx/Status.h"
#include "ucx/UcxAsyncGuard.h"
#include "job/Job.h"
#include "job/Pmix.h"
#include "wireup/Wireup.h"

#include <algorithm>
#include <cstddef>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unistd.h>
#include <sys/mman.h>

using namespace twochains::rt;

/// Jams are meant to run for microseconds; a second is far beyond any of
/// them and well before anyone would call the receiver frozen.
static constexpr uint32_t DefaultJamTimeLimitMs = 1000;

/// The mailbox modes by the names TC_MAILBOX_MODE and tc_mailbox_mode_name
/// use; the first is the default.
struct MailboxModeName {
  const char *Name;
  tc_mailbox_mode_t Value;
};
static const MailboxModeName MailboxModeNames[] = {{"code-cache", TC_MAILBOX_CODE_CACHE},
                                                   {"no-cache", TC_MAILBOX_NO_CACHE}};

/// The transports of the RMA context: what UCX_TLS asks for, without TCP,
/// and without System V shared memory unless named there or in
/// UCX_ALLOC_PRIO. Rings, credit lines and doorbells are POSIX segments
/// (RmaAllocPriority), and every shared-memory transport costs each RMA
/// endpoint an endpoint of its own (the peer's receive queue attached, its
/// process looked up): in a 64-rank job's first round, sysv's took 8 % of
/// a rank's time for nothing. Empty if nothing is left.
static std::string rmaTransports() {
  const char *Env = std::getenv("UCX_TLS");
  const char *AllocEnv = std::getenv("UCX_ALLOC_PRIO");
  std::string Asked = Env ? Env : "";
  std::string Unless = AllocEnv && std::strstr(AllocEnv, "sysv") ? "" : ",sysv";
  if (Asked.empty() || Asked == "all")
    return "^tcp" + Unless;
  if (Asked[0] == '^')
    return Asked + ",tcp" + Unless;
  std::stringstream In(Asked);
  std::string Item, Out;
  while (std::getline(In, Item, ','))
    if (Item != "tcp" && !Item.empty())
      Out += (Out.empty() ? "" : ",") + Item;
  return Out;
}

static bool isMultiThreaded(ucp_worker_h Worker) {
  ucp_worker_attr_t A = {};
  A.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE;
  return ucp_worker_query(Worker, &A) == UCS_OK && A.thread_mode == UCS_THREAD_MODE_MULTI;
}

static void destroyContext(tc_context *Ctx);

/// A limit from its parameter, else from the environment variable Env,
/// else Default; a variable that is not a number from 1 to Max is refused.
static bool limitFrom(uint32_t Param, const char *Env, uint32_t Default, uint32_t Max,
                      uint32_t &Out) {
  const char *Value = std::getenv(Env);
  if (Param || !Value || !*Value) {
    Out = Param ? Param : Default;
    return true;
  }
  char *End = nullptr;
  unsigned long N = std::strtoul(Value, &End, 10);
  if (*End || N == 0 || N > Max) {
    logError(std::string(Env) + "='" + Value + "' is not a number from 1 to " +
             std::to_string(Max));
    return false;
  }
  Out = uint32_t(N);
  return true;
}

/// Connections not yet authenticated (docs/security.md, "Before
/// authentication"): the parameters, else the environment, else defaults.
static tc_status_t takeStartupLimits(tc_context *Ctx, const tc_context_params_t *Params) {
  bool V6 = Params && Params->version >= 6;
  uint32_t TimeoutMs;
  // A receiver for thousands of peers: each handshake costs more there (it
  // lists the process's mappings, which grow with the peers), and waits
  // behind more of them, so the default grows with max_peers, by its own
  // for each 1024 (docs/scaling.md, "max_peers 4096").
  uint32_t DefaultTimeoutMs = uint32_t(DefaultHandshakeTimeoutMs) *
                              std::min<uint32_t>(16, (Ctx->MaxPeers + 1023) / 1024);
  if (!limitFrom(V6 ? Params->handshake_timeout_ms : 0, "TC_HANDSHAKE_TIMEOUT_MS",
                 std::max<uint32_t>(DefaultTimeoutMs, DefaultHandshakeTimeoutMs), 3'600'000,
                 TimeoutMs) ||
      !limitFrom(V6 ? Params->max_startups : 0, "TC_MAX_STARTUPS", Ctx->Wireup->MaxStartups, 65536,
                 Ctx->Wireup->MaxStartups) ||
      !limitFrom(V6 ? Params->max_startups_per_address : 0, "TC_MAX_STARTUPS_PER_ADDRESS",
                 Ctx->Wireup->MaxStartupsPerAddress, 65536, Ctx->Wireup->MaxStartupsPerAddress))
    return TC_ERR_INVALID_PARAM;
  Ctx->Wireup->HandshakeTimeoutNs = TimeoutMs * NsPerMs;
  const char *PerAddress = std::getenv("TC_MAX_STARTUPS_PER_ADDRESS");
  Ctx->Wireup->StartupsPerAddressChosen = (V6 && Params->max_startups_per_address) ||
                                          (PerAddress && *PerAddress);
  return TC_OK;
}

/// Payloads larger than a slot (receive/PayloadAhead.h): the bytes one
/// sender may have on their way here at once; the parameter, else
/// TC_PAYLOAD_AHEAD_BYTES, else 4 MiB. TC_NO_PAYLOADS_AHEAD: none taken.
static tc_status_t takePayloadAheadBytes(tc_context *Ctx, const tc_context_params_t *Params) {
  uint32_t Bytes = Params && Params->version >= 8 ? Params->payload_ahead_bytes : 0;
  if (!Bytes)
    if (const char *Env = std::getenv("TC_PAYLOAD_AHEAD_BYTES"); Env && *Env) {
      char *End = nullptr;
      unsigned long long V = std::strtoull(Env, &End, 10);
      if (*End || V > MaxPayloadAheadBytes) {
        logError(std::string("TC_PAYLOAD_AHEAD_BYTES='") + Env +
                 "' is not a number of bytes up to " + std::to_string(MaxPayloadAheadBytes) +
                 " (0: none taken)");
        return TC_ERR_INVALID_PARAM;
      }
      Bytes = V ? uint32_t(V) : TC_NO_PAYLOADS_AHEAD;
    }
  if (Bytes != TC_NO_PAYLOADS_AHEAD && Bytes > MaxPayloadAheadBytes) {
    logError("payload_ahead_bytes " + std::to_string(Bytes) + " is more than " +
             std::to_string(MaxPayloadAheadBytes) + " (TC_NO_PAYLOADS_AHEAD: none taken)");
    return TC_ERR_INVALID_PARAM;
  }
  Ctx->PayloadAheadBytes = Bytes == TC_NO_PAYLOADS_AHEAD ? 0
                           : Bytes                      ? Bytes
                                                        : DefaultPayloadAheadBytes;
  return TC_OK;
}

/// TC_SLOTS or TC_SLOT_SIZE, unless the parameters set the same: a positive
/// number (setupRings checks its range). False (logged) if malformed.
static bool takeRingVariable(const char *Name, bool Given, uint32_t &Field, bool &Chosen) {
  const char *Env = std::getenv(Name);
  if (Given || !Env || !*Env)
    return true;
  char *End = nullptr;
  unsigned long V = std::strtoul(Env, &End, 10);
  if (*End || !V || V > UINT32_MAX) {
    logError(std::string(Name) + "=" + Env + ": not a positive number");
    return false;
  }
  Field = uint32_t(V);
  Chosen = true;
  return true;
}

/// The parameters a context was created with, and what the environment
/// says where they leave it open.
static tc_status_t takeParams(tc_context *Ctx, const tc_context_params_t *Params,
                              uint32_t &TimeLimitMs) {
  if (Params) {
    if (Params->slots)
      Ctx->Slots = Params->slots;
    if (Params->slot_size)
      Ctx->SlotSize = Params->slot_size;
    Ctx->SlotsChosen = Params->slots || Params->slot_size;
    Ctx->BatchChosen = Params->credit_batch != 0;
    if (Ctx->BatchChosen)
      Ctx->Batch = Params->credit_batch;
  }
  // The ring's shape from the environment where the parameters leave it.
  if (!takeRingVariable("TC_SLOTS", Params && Params->slots, Ctx->Slots, Ctx->SlotsChosen) ||
      !takeRingVariable("TC_SLOT_SIZE", Params && Params->slot_size, Ctx->SlotSize,
                        Ctx->SlotsChosen))
    return TC_ERR_INVALID_PARAM;
  if (!Ctx->BatchChosen)
    Ctx->Batch = std::max(1u, Ctx->Slots / 4);
  if (Params) {
    Ctx->WaitMode = tc_wait_mode_t(Params->wait_mode);
    // Pure polling, for dedicated cores: the waits never sleep.
    Ctx->SleepWaits = Ctx->WaitMode != TC_WAIT_POLL;
    Ctx->Flags = Params->flags;
    if (Params->version >= 2) {
      Ctx->Code->Mode = tc_mailbox_mode_t(Params->mailbox_mode);
      if (Params->code_cache_size)
        Ctx->Image->CodeCacheSize = Params->code_cache_size;
    }
  }
  if (const char *Busy = std::getenv("TC_BUSY_POLL"); Busy && std::strcmp(Busy, "0"))
    Ctx->SleepWaits = false;
  TimeLimitMs = 0;
  if (Params && Params->version >= 4) {
    TimeLimitMs = Params->jam_time_limit_ms;
    if (Params->quarantine_faults)
      Ctx->Containment->QuarantineFaults = Params->quarantine_faults;
    if (Params->max_peers)
      Ctx->MaxPeers = Params->max_peers;
    if (Params->forward_allow) {
      std::stringstream In(Params->forward_allow);
      std::string Item;
      while (std::getline(In, Item, ','))
        if (!Item.empty())
          Ctx->Job->ForwardAllow.push_back(Item);
    }
  }
  if (!TimeLimitMs) {
    const char *Env = std::getenv("TC_JAM_TIME_LIMIT_MS");
    char *End = nullptr;
    unsigned long V = Env && *Env ? std::strtoul(Env, &End, 10) : DefaultJamTimeLimitMs;
    if (Env && *Env && (*End || V > 3'600'000)) {
      logError(std::string("TC_JAM_TIME_LIMIT_MS='") + Env +
               "' is not a number of milliseconds up to 3600000 (0: no limit)");
      return TC_ERR_INVALID_PARAM;
    }
    TimeLimitMs = V ? uint32_t(V) : TC_JAM_NO_TIME_LIMIT;
  }
  if (tc_status_t St = takePayloadAheadBytes(Ctx, Params); St != TC_OK)
    return St;
  return takeStartupLimits(Ctx, Params);
}

/// Milliseconds from the environment variable Name, or Default where it is
/// unset; false (logged) if it is not a number up to Max.
static bool msFromEnv(const char *Name, uint32_t Default, uint32_t Max, const char *Zero,
                      uint32_t &Out) {
  const char *Env = std::getenv(Name);
  if (!Env || !*Env) {
    Out = Default;
    return true;
  }
  char *End = nullptr;
  unsigned long V = std::strtoul(Env, &End, 10);
  if (*End || V > Max) {
    logError(std::string(Name) + "='" + Env + "' is not a number of milliseconds up to " +
             std::to_string(Max) + " (0: " + Zero + ")");
    return false;
  }
  Out = uint32_t(V);
  return true;
}

/// Quarantine by peer address (containment/AddressQuarantine.h): the
/// parameters, else the environment, else the defaults.
static tc_status_t takeQuarantineParams(tc_context *Ctx, const tc_context_params_t *Params) {
  constexpr uint32_t MaxMs = 86'400'000; // a day
  uint32_t BudgetMs = Params && Params->version >= 6 ? Params->quarantine_budget_ms : 0;
  uint32_t WindowMs = Params && Params->version >= 6 ? Params->quarantine_window_ms : 0;
  if (!BudgetMs) {
    if (!msFromEnv("TC_QUARANTINE_BUDGET_MS", AddressQuarantine::DefaultBudgetMs, MaxMs, "never",
                   BudgetMs))
      return TC_ERR_INVALID_PARAM;
    if (!BudgetMs)
      BudgetMs = TC_NEVER_QUARANTINE;
  }
  if (!WindowMs) {
    if (!msFromEnv("TC_QUARANTINE_WINDOW_MS", AddressQuarantine::DefaultWindowMs, MaxMs,
                   "not a window", WindowMs))
      return TC_ERR_INVALID_PARAM;
    if (!WindowMs) {
      logError("TC_QUARANTINE_WINDOW_MS=0: the window must be at least 1 ms");
      return TC_ERR_INVALID_PARAM;
    }
  }
  if (WindowMs > MaxMs || (BudgetMs != TC_NEVER_QUARANTINE && BudgetMs > MaxMs)) {
    logError("quarantine_budget_ms and quarantine_window_ms are up to a day (" +
             std::to_string(MaxMs) + " ms)");
    return TC_ERR_INVALID_PARAM;
  }
  if (BudgetMs != TC_NEVER_QUARANTINE)
    Ctx->Containment->Addresses.setBudget(msToNs(BudgetMs), msToNs(WindowMs));
  return TC_OK;
}

/// The mailbox mode: the parameter's, else TC_MAILBOX_MODE's, else the
/// default; modes no longer offered are refused with why.
static tc_status_t chooseMailboxMode(tc_context *Ctx) {
  if (Ctx->Code->Mode == TC_MAILBOX_DEFAULT) {
    const char *Env = getenv("TC_MAILBOX_MODE");
    std::string Name = Env && *Env ? Env : MailboxModeNames[0].Name;
    for (const MailboxModeName &M : MailboxModeNames)
      if (Name == M.Name)
        Ctx->Code->Mode = M.Value;
    if (Ctx->Code->Mode == TC_MAILBOX_DEFAULT) {
      logError("TC_MAILBOX_MODE='" + Name + "' is none of code-cache, no-cache" +
               (Name == "in-place" ? " (in-place is no longer offered: code never runs "
                                     "from memory a peer can write)"
                                   : ""));
      return TC_ERR_INVALID_PARAM;
    }
  }
  if (Ctx->Code->Mode == TC_MAILBOX_IN_PLACE) {
    logError("the in-place mailbox mode is no longer offered: code never runs from "
             "memory a peer can write (use no-cache to run the code of every frame)");
    return TC_ERR_INVALID_PARAM;
  }
  if (Ctx->Code->Mode != TC_MAILBOX_CODE_CACHE && Ctx->Code->Mode != TC_MAILBOX_NO_CACHE)
    return TC_ERR_INVALID_PARAM;
  return TC_OK;
}

/// The code-trust policy: the parameter's, else TC_CODE_TRUST's, else
/// package; signed needs its signers, read now so a bad file fails here.
static tc_status_t chooseCodeTrust(tc_context *Ctx, const tc_context_params_t *Params) {
  static const struct {
    const char *Name;
    tc_code_trust_t Trust;
  } Names[] = {{"package", TC_CODE_TRUST_PACKAGE},
               {"job", TC_CODE_TRUST_JOB},
               {"signed", TC_CODE_TRUST_SIGNED},
               {"verified", TC_CODE_TRUST_VERIFIED}};
  uint32_t Trust = Params && Params->version >= 7 ? Params->code_trust : 0;
  if (Trust > TC_CODE_TRUST_VERIFIED) {
    logError("code_trust " + std::to_string(Trust) + " is none of the tc_code_trust_t values");
    return TC_ERR_INVALID_PARAM;
  }
  if (Trust == TC_CODE_TRUST_DEFAULT) {
    const char *Env = std::getenv("TC_CODE_TRUST");
    std::string Name = Env && *Env ? Env : "package";
    for (const auto &N : Names)
      if (Name == N.Name)
        Trust = N.Trust;
    if (Trust == TC_CODE_TRUST_DEFAULT) {
      logError("TC_CODE_TRUST='" + Name + "' is none of package, job, signed, verified");
      return TC_ERR_INVALID_PARAM;
    }
  }
  Ctx->Package->CodeTrust = tc_code_trust_t(Trust);
  bool Verified = Ctx->Package->CodeTrust == TC_CODE_TRUST_VERIFIED;
  if (Ctx->Package->CodeTrust != TC_CODE_TRUST_SIGNED && !Verified)
    return TC_OK;
  const char *File = Params && Params->version >= 7 ? Params->trusted_signers : nullptr;
  if (!File || !*File)
    File = std::getenv("TC_TRUSTED_SIGNERS");
  // Verified: signers are optional; their packages then run unsandboxed.
  if ((!File || !*File) && Verified)
    return TC_OK;
  if (!File || !*File) {
    logError("the signed code-trust policy needs a file of trusted signers "
             "(trusted_signers, or TC_TRUSTED_SIGNERS)");
    return TC_ERR_INVALID_PARAM;
  }
  std::string Error;
  if (twochains::format::readTrustedSignersFile(File, Ctx->Package->TrustedSigners, Error) !=
      twochains::format::FormatError::None) {
    logError(Error);
    return TC_ERR_INVALID_PARAM;
  }
  Ctx->Package->TrustedSignersSource = File;
  return TC_OK;
}

/// Containment: the recovery point's signal handlers, and the watchdog
/// when jams have a time limit.
static tc_status_t setupContainment(tc_context *Ctx, uint32_t TimeLimitMs) {
  std::string Error;
  if (!prepareJamGuard(Error)) {
    logError(Error);
    return TC_ERR_IO;
  }
  if (TimeLimitMs != TC_JAM_NO_TIME_LIMIT) {
    Ctx->Containment->Dog = std::make_unique<Watchdog>(TimeLimitMs);
    Ctx->Containment->Dog->start();
  }
  return TC_OK;
}

/// The ring shape: a context offers its peers what it would accept from
/// them; and the private copy frames are run from.
static tc_status_t setupRings(tc_context *Ctx) {
  if (Ctx->SlotSize % 64 || Ctx->SlotSize < 64 || Ctx->SlotSize > MaxSlotSize ||
      Ctx->Slots > MaxSlots || uint64_t(Ctx->Slots) * Ctx->SlotSize > MaxRingBytes ||
      Ctx->Batch > Ctx->Slots) {
    logError("rings of " + std::to_string(Ctx->Slots) + " slots of " +
             std::to_string(Ctx->SlotSize) + " bytes (credit batch " +
             std::to_string(Ctx->Batch) + "): slots are multiples of 64 bytes up to " +
             std::to_string(MaxSlotSize) + ", at most " + std::to_string(MaxSlots) +
             " of them and " + std::to_string(MaxRingBytes >> 20) + " MiB a ring");
    return TC_ERR_INVALID_PARAM;
  }
  Ctx->Receive->Private.reset(static_cast<uint8_t *>(std::aligned_alloc(FrameLine, Ctx->SlotSize)));
  return Ctx->Receive->Private ? TC_OK : TC_ERR_NO_MEMORY;
}

/// The control worker: the application's (embedded), or one of our own
/// on a context with active messages only.
static tc_status_t setupControlWorker(tc_context *Ctx, const tc_context_params_t *Params) {
  if (Params && Params->version >= 5 && Params->ucp_worker) {
    // Embedded: the application's worker carries the control traffic.
    Ctx->Worker = static_cast<ucp_worker_h>(Params->ucp_worker);
    Ctx->EmbeddedWorker = true;
    return TC_OK;
  }
  if (Params && Params->version >= 5 && Params->ucp_context) {
    logError("tc_context_create: ucp_context without ucp_worker: give the worker the "
             "control traffic should use");
    return TC_ERR_INVALID_PARAM;
  }
  return openControlWorker(Ctx);
}

/// Each feature registers its control-message handlers and housekeeping,
/// in the order the control turn runs them.
static tc_status_t setupFeatures(tc_context *Ctx) {
  if (!addJamSandboxServices()) {
    logError("the sandbox's call table has no room for the jam API's services");
    return TC_ERR_NO_MEMORY;
  }
  setupControl(Ctx);
  ucs_status_t St;
  if ((St = setupFramePath(Ctx)) != UCS_OK || (St = setupRiedPush(Ctx)) != UCS_OK ||
      (St = setupCodeTransfer(Ctx)) != UCS_OK || (St = setupPayloadAhead(Ctx)) != UCS_OK ||
      (St = setupDeploy(Ctx)) != UCS_OK ||
      (St = setupWireup(Ctx)) != UCS_OK || (St = setupJob(Ctx)) != UCS_OK ||
      (St = setupCalls(Ctx)) != UCS_OK) {
    if (Ctx->EmbeddedWorker) {
      logError(std::string("cannot register active messages on the application's worker (") +
               ucs_status_string(St) + "): its context needs UCP_FEATURE_AM");
      return TC_ERR_INVALID_PARAM;
    }
    return statusOfUcs(St);
  }
  setupProgress(Ctx);
  setupPolling(Ctx);
  return TC_OK;
}

/// Frames by RMA travel on a worker of their own: the control worker's
/// sockaddr endpoints are TCP, and progressing a worker with TCP endpoints
/// costs an epoll_wait system call each time, which the data path must
/// not pay. No RMA context (UCX_TLS=tcp): every peer uses messages.
static tc_status_t setupDataWorker(tc_context *Ctx) {
  std::string Rma = rmaTransports();
  // TC_THREAD_CHANNELS=0: the threads of a TC_CONTEXT_THREADS context take
  // turns on the context's lock, as before channels (to compare, or where
  // UCX's multi-threaded workers misbehave).
  const char *ChannelsEnv = std::getenv("TC_THREAD_CHANNELS");
  bool Threads =
      (Ctx->Flags & TC_CONTEXT_THREADS) && !(ChannelsEnv && !std::strcmp(ChannelsEnv, "0"));
  // WAKEUP: a sleep watches the worker while payloads move on it
  // (core/Sleep.cpp).
  if (Rma.empty() || createUcp(UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP, Rma.c_str(),
                               nullptr, &Ctx->RmaUcp, Threads) != UCS_OK)
    return TC_OK;
  ucs_status_t St;
  if ((St = createWorker(Ctx->RmaUcp, &Ctx->DataWorker, Threads)) != UCS_OK ||
      (St = ucp_worker_get_address(Ctx->DataWorker, &Ctx->WorkerAddress,
                                   &Ctx->WorkerAddressSize)) != UCS_OK) {
    logError(std::string("the RMA worker: ") + ucs_status_string(St));
    return statusOfUcs(St);
  }
  // A UCX built without thread support gives a serialised worker: then
  // every call takes the context's lock, as without channels.
  Ctx->Channels = Threads && isMultiThreaded(Ctx->DataWorker);
  if (Ctx->Channels)
    logInfo("TC_CONTEXT_THREADS: each RMA peer is a channel of its own (a multi-threaded "
            "data worker)");
  if (Threads && !Ctx->Channels)
    logWarning("this UCX has no multi-threaded workers: the threads of a TC_CONTEXT_THREADS "
               "context take turns on one lock");
  if (Ctx->WorkerAddressSize > MaxWorkerAddressSize) {
    logError("this RMA worker's address has " + std::to_string(Ctx->WorkerAddressSize) +
             " bytes, more than peers accept (" + std::to_string(MaxWorkerAddressSize) + ")");
    return TC_ERR_INVALID_PARAM;
  }
  if ((St = setupPayloadsByRma(Ctx)) != UCS_OK) {
    logError(std::string("the RMA worker's handler of payloads: ") + ucs_status_string(St));
    return statusOfUcs(St);
  }
  return TC_OK;
}

/// The code cache, in code-cache mode.
static tc_status_t setupCodeCache(tc_context *Ctx) {
  if (Ctx->Code->Mode != TC_MAILBOX_CODE_CACHE)
    return TC_OK;
  std::string Error;
  Ctx->Image->Cache = std::make_unique<CodeCache>();
  if (tc_status_t St = Ctx->Image->Cache->create(Ctx->Image->CodeCacheSize, Error); St != TC_OK) {
    logError(Error);
    return St;
  }
  return TC_OK;
}

extern "C" tc_status_t tc_context_create(const tc_context_params_t *Params,
                                         tc_context_t **Out) {
  if (!Out || (Params && (Params->version < 1 || Params->version > TC_CONTEXT_PARAMS_VERSION)))
    return TC_ERR_INVALID_PARAM;
  auto Ctx = std::make_unique<tc_context>();
  if (!coreAtStart(Ctx.get())) {
    logError("this build lays out its context parts unexpectedly (context/Context.h)");
    return TC_ERR_INVALID_PARAM;
  }
  uint32_t TimeLimitMs;
  std::string Error;
  tc_status_t St;
  if ((St = takeParams(Ctx.get(), Params, TimeLimitMs)) != TC_OK ||
      (St = takeQuarantineParams(Ctx.get(), Params)) != TC_OK ||
      (St = setupContainment(Ctx.get(), TimeLimitMs)) != TC_OK)
    return St;
  if ((St = loadJobKey(Params, Ctx->Key, Error)) != TC_OK) {
    logError(Error);
    return St;
  }
  if ((St = chooseMailboxMode(Ctx.get())) != TC_OK ||
      (St = chooseCodeTrust(Ctx.get(), Params)) != TC_OK)
    return St;
  if (Ctx->WaitMode > TC_WAIT_LOWPOWER || !(Ctx->Wait = createWaiter(Ctx->WaitMode))) {
    logError("the wait mode asked for is not available on this CPU");
    return TC_ERR_INVALID_PARAM;
  }
  if ((St = setupRings(Ctx.get())) != TC_OK)
    return St;
  if (!setupSleep(Ctx.get()))
    return TC_ERR_IO;
  // From here on what was set up is torn down by tc_context_destroy.
  if ((St = setupControlWorker(Ctx.get(), Params)) != TC_OK ||
      (St = setupFeatures(Ctx.get())) != TC_OK || (St = setupDataWorker(Ctx.get())) != TC_OK ||
      (St = setupCodeCache(Ctx.get())) != TC_OK) {
    destroyContext(Ctx.release());
    return St;
  }
  *Out = Ctx.release();
  return TC_OK;
}

/// The workers and UCX contexts, last: what used them is gone.
static void releaseUcx(tc_context *Ctx) {
  if (Ctx->Wireup->Listener)
    ucp_listener_destroy(Ctx->Wireup->Listener);
  if (Ctx->WorkerAddress)
    ucp_worker_release_address(Ctx->DataWorker, Ctx->WorkerAddress);
  if (Ctx->DataWorker)
    ucp_worker_destroy(Ctx->DataWorker);
  if (Ctx->RmaUcp)
    ucp_cleanup(Ctx->RmaUcp);
  if (Ctx->Worker && Ctx->EmbeddedWorker) {
    // The application's worker lives on: take our handlers off it.
    for (unsigned Id = TC_AM_ID_FIRST; Id <= TC_AM_ID_LAST; ++Id) {
      ucp_am_handler_param_t H = {};
      H.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
      H.id = Id;
      H.cb = nullptr;
      ucp_worker_set_am_recv_handler(Ctx->Worker, &H);
    }
  } else if (Ctx->Worker) {
    forgetSleepWorker(Ctx);
    twochains_ucx_disown(Ctx->Worker);
    ucp_worker_destroy(Ctx->Worker);
  }
  if (Ctx->Ucp)
    ucp_cleanup(Ctx->Ucp);
  teardownSleep(Ctx);
}

static void destroyContext(tc_context *Ctx) {
  if (Ctx->Executor.joinable())
    stopExecutor(Ctx);
  // Frames waiting for connections being made leave first (bounded).
  // Ahead of every connection's close, on each: ranks still in a quiesce
  // this one finished learn it was quiet (job/Quiesce.cpp).
  announceLeaving(Ctx);
  endJob(Ctx);
  Ctx->Closing = true;
  if (Ctx->Containment->Dog)
    Ctx->Containment->Dog->stop();
  finishRiedLoads(Ctx);
  for (auto &Peer : Ctx->Accepted)
    releasePeer(Ctx, Peer.get());
  Ctx->Accepted.clear();
  stopPollingAll(Ctx);
  releaseDoorbell(Ctx);
  releaseUcx(Ctx);
  // Deployed packages are the context's: their rieds stay loaded, as
  // tc_package_unload leaves them.
  removeDeployments(Ctx);
  bool Joined = Ctx->Job->Joined;
  delete Ctx;
  if (Joined)
    pmixFinalize();
}

extern "C" void tc_context_destroy(tc_context_t *Ctx) {
  if (Ctx)
    destroyContext(Ctx);
}

extern "C" tc_status_t tc_context_add_package(tc_context_t *Ctx, tc_package_t *Pkg) {
  if (!Ctx || !Pkg)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Held{Ctx->Lock};
  for (tc_package *P : Ctx->Package->Packages)
    if (P->Identity == Pkg->Identity)
      return TC_ERR_INVALID_PARAM;
  Ctx->Package->Packages.push_back(Pkg);
  return TC_OK;
}

extern "C" const char *tc_mailbox_mode_name(const tc_context_t *Ctx) {
  for (const MailboxModeName &M : MailboxModeNames)
    if (Ctx && Ctx->Code->Mode == M.Value)
      return M.Name;
  return "";
}

/// The gauges of tc_stats_t: rings polled every pass, and this side's
/// rings' bytes and how many of them are in memory (mincore).
static void ringMemory(const tc_context *Ctx, tc_stats_t &Out) {
  Out.rings_polled = Ctx->Polled.size();
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> In;
  auto Add = [&](const tc_peer *P) {
    if (!P->Rx->Ring)
      return;
    Out.ring_bytes += P->Rx->RingBytes;
    uintptr_t First = uintptr_t(P->Rx->Ring) & ~(Page - 1);
    size_t Pages = (uintptr_t(P->Rx->Ring) + P->Rx->RingBytes - First + Page - 1) / Page;
    In.assign(Pages, 0);
    if (mincore(reinterpret_cast<void *>(First), Pages * Page, In.data()) != 0)
      return;
    for (unsigned char Resident : In)
      Out.ring_bytes_resident += (Resident & 1) ? Page : 0;
  };
  for (const auto &P : Ctx->Accepted)
    Add(P.get());
  for (const tc_peer *P : Ctx->Connected)
    Add(P);
}

extern "C" tc_status_t tc_context_stats_sized(const tc_context_t *Ctx, tc_stats_t *Out,
                                              size_t Size) {
  if (!Ctx || !Out || Size % sizeof(uint64_t))
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Held{const_cast<tc_context *>(Ctx)->Lock};
  // Channels add to some counters without the lock (count()): every
  // field is read whole.
  static_assert(sizeof(tc_stats_t) % sizeof(uint64_t) == 0, "counters only");
  const auto *From = reinterpret_cast<const uint64_t *>(&Ctx->Stats);
  auto *To = reinterpret_cast<uint64_t *>(Out);
  size_t Known = sizeof(tc_stats_t) / sizeof(uint64_t);
  tc_stats_t Now = {};
  ringMemory(Ctx, Now);
  const auto *Gauges = reinterpret_cast<const uint64_t *>(&Now);
  size_t FirstGauge = offsetof(tc_stats_t, rings_polled) / sizeof(uint64_t);
  size_t LastGauge = offsetof(tc_stats_t, ring_bytes_resident) / sizeof(uint64_t);
  for (size_t I = 0; I < Size / sizeof(uint64_t); ++I)
    To[I] = I >= Known                              ? 0
            : I >= FirstGauge && I <= LastGauge ? Gauges[I]
                                                : __atomic_load_n(From + I, __ATOMIC_RELAXED);
  return TC_OK;
}

// Programs built before tc_context_stats_sized call this one: the struct as
// large as it was then is all they have, and a header that old has no
// counter past peers_direct.
#undef tc_context_stats
extern "C" tc_status_t tc_context_stats(const tc_context_t *Ctx, tc_stats_t *Out) {
  return tc_context_stats_sized(Ctx, Out, offsetof(tc_stats_t, frames_coalesced));
}
