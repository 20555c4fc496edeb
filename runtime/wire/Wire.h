//===- Wire.h - What peers send each other outside frames -----------------===//
//
// The handshake and the messages of the active-message frame path, as they
// travel: little-endian, fixed widths, no padding (checked below). Every
// size a peer names is bounded by the limits here before anything is
// allocated or handed to UCX (docs/security.md).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_WIRE_H
#define TWOCHAINS_RUNTIME_WIRE_H

#include "Isa.h"
#include "base/SharedSegment.h"
#include "wire/Auth.h"
#include "twochains/status.h"
#include "twochains/twochains.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace twochains::rt {

/// The sender's credit line (one line the receiver writes, by put or by
/// message): finished frames at word 0, a code-cache miss at word 1 (the
/// sequence of the frame that named code the receiver does not hold, plus
/// one).
/// Word 2: the last frame abandoned, in one word so that it is read whole:
/// the low 32 bits of its sequence, its element, the signal, how it ended
/// (tc_jam_end_t), and a bit that says the word holds a report. The sender
/// finds the whole sequence from its window.
enum : unsigned { CreditWordFinished = 0, CreditWordMiss = 1, CreditWordFault = 2, CreditWords = 3 };
/// Words 3 to 5, between ranks of a job whose connection stores straight
/// into the other's memory (shared memory): tc_job_quiesce's report or
/// decision (a head word: valid bit 63, a flag at 62, the quiesce's
/// number in bits 32-61, the wave in 0-31), and a report's counts,
/// stored before its head (job/Quiesce.cpp). Other connections carry
/// them as QUIESCE messages.
enum : unsigned {
  CreditWordQuiesce = 3,
  CreditWordQuiesceSent = 4,
  CreditWordQuiesceDone = 5,
  /// The words a sleeping side watches for a change (core/Sleep.cpp).
  CreditWordsWatched = 6
};
/// Word 8, in the line's second cache line: the receiver sleeps (non-zero),
/// set by the receiver before it sleeps, cleared by the sender, which then
/// wakes it (AmWake; docs/runtime.md, "Sleeping waits"). A line of its
/// own: the sender reads it after every frame it stores, and the first
/// line changes with every credit report.
constexpr unsigned CreditWordSleep = 8;
/// Word 9, beside it: the receiver no longer polls this sender's ring
/// every pass (non-zero): after each frame stored into it, the sender
/// rings the receiver's doorbell (Doorbell below). Set and cleared by the
/// receiver only; read by the sender with the sleep flag, in one line.
constexpr unsigned CreditWordCold = 9;
/// Word 10, a cold ring closed to give its pages back
/// (context/Polling.cpp): frames of sequences from it on are not to be
/// stored (0: no limit). Set by the receiver before it looks at the ring
/// once more; loaded by the sender with the sleep and cold flags after
/// each frame it stores, and obeyed from the next frame on. Whichever
/// comes second sees the other: the receiver sees the frame, and keeps its
/// pages, or the sender sees the limit, and stores nothing past it.
constexpr unsigned CreditWordLimit = 10;
/// The bytes of a credit line: its owner allocates them, and the other
/// side checks that a peer's key covers them.
constexpr size_t CreditLineBytes = 128;
inline uint64_t faultWord(uint64_t Sequence, uint32_t Element, int Signal, unsigned Kind) {
  return uint32_t(Sequence) | uint64_t(Element & 0xffff) << 32 |
         uint64_t(uint8_t(Signal)) << 48 | uint64_t(Kind & 0xf) << 56 | 1ull << 63;
}

/// A receiver's doorbell: one region for all its senders, mapped for RMA,
/// which a sender whose ring is cold (CreditWordCold) marks after each
/// frame: its own bit (the index the receiver's offer gave it, atomically
/// OR-ed), then the summary word. The receiver looks at the summary alone
/// on every pass, and at the bits only when it is set, so an idle
/// receiver's pass touches one line however many peers it has
/// (docs/scaling.md). Sleeping (its own line: senders read it after
/// ringing): the receiver sleeps; the sender that takes it wakes it
/// (AmWake), as the credit line's sleep flag does for polled rings.
enum : unsigned { DoorbellSummary = 0, DoorbellSleeping = 8, DoorbellBits = 16 };
/// A peer without a doorbell place (its ring is then polled always).
constexpr uint32_t NoDoorbell = 0xffffffffu;
/// Places a doorbell may have: a receiver offers at most this many.
constexpr uint32_t MaxDoorbellPlaces = 1u << 20;
constexpr size_t doorbellBytes(uint32_t Places) {
  return (DoorbellBits + (size_t(Places) + 63) / 64) * sizeof(uint64_t);
}

/// A segment of the offering process's memory that a process of the same
/// host maps (base/SharedSegment.h): an offer's doorbell always, and with
/// OfferSharedMemory its credit line and ring. Base is its address in the
/// offering process, which the offer's addresses lie inside.
struct SharedSegmentRecord {
  uint64_t Base;
  uint64_t Length;
  uint32_t Pid;
  int32_t Fd;
  uint8_t Host[SegmentHostBytes];   // the offering host's (hostIdentity)
  uint8_t Token[SegmentTokenBytes]; // what the segment holds at its token's place
};
static_assert(sizeof(SharedSegmentRecord) == 56, "wire layout");
/// Where each kind of segment holds its token: a mailbox right after its
/// credit line (its first page, which the ring follows), a doorbell at its
/// end (after the places).
constexpr size_t MailboxTokenAt = CreditLineBytes;
constexpr size_t doorbellSegmentBytes(uint32_t Places) {
  return doorbellBytes(Places) + SegmentTokenBytes;
}
constexpr size_t doorbellTokenAt(uint64_t SegmentBytes) {
  return size_t(SegmentBytes) - SegmentTokenBytes;
}

/// UCX active-message ids (docs/runtime.md).
enum : unsigned {
  AmHello = 0x7c01,
  AmWelcome = 0x7c02,
  AmRied = 0x7c03,
  AmRiedAck = 0x7c04,
  AmAuth = 0x7c05,
  AmChallenge = 0x7c06,
  AmFrame = 0x7c07,     // a frame, where RMA would be emulated
  AmCredit = 0x7c08,    // a credit line report, likewise
  AmRefused = 0x7c09,   // receiver to sender: the handshake was refused, and why
  AmCode = 0x7c0a,      // an image too large for a slot, sent once ahead of its frames
  AmCodeAck = 0x7c0b,   // receiver to sender: installed, or why not
  AmReply = 0x7c0c,     // receiver to caller: a jam's answer to a call (Calls.cpp)
  AmWake = 0x7c0d,      // a sleeping side's peer stored into its ring or credit line
  AmQuiesce = 0x7c0e,   // ranks of a job: quiescence's waves (job/Quiesce.cpp)
  AmReady = 0x7c0f,     // sender to receiver, a job's connection: the welcome is taken
  AmDeploy = 0x7c10,    // a package deployed: its offer, then the files asked for (wire/Deploy.h)
  AmDeployAck = 0x7c11, // receiver to sender: the files it lacks, or the deployment's end
  AmPayload = 0x7c12,   // a payload larger than a slot, ahead of its frame (PayloadHeader)
  AmKnock = 0x7c13,     // a rank to a lower rank of its job: connect to me (RankKnock)
};
static_assert(AmHello == TC_AM_ID_FIRST && AmKnock == TC_AM_ID_LAST,
              "the range reserved on an application's worker (twochains.h)");
/// Each control message opens with a magic of its own, so that a message
/// of one type never parses as another's (a four-letter tag, little-endian).
constexpr uint32_t controlMagic(char A, char B, char C, char D) {
  return uint32_t(uint8_t(A)) << 24 | uint32_t(uint8_t(B)) << 16 | uint32_t(uint8_t(C)) << 8 |
         uint32_t(uint8_t(D));
}
constexpr uint32_t AuthMagic = controlMagic('T', 'C', 'A', 'U');      // AUTH
constexpr uint32_t ChallengeMagic = controlMagic('T', 'C', 'C', 'H'); // CHALLENGE
constexpr uint32_t HandshakeMagic = controlMagic('T', 'C', 'H', 'S'); // HELLO and WELCOME offers
constexpr uint32_t RefusalMagic = controlMagic('T', 'C', 'R', 'F');   // REFUSED
constexpr uint32_t RiedMagic = controlMagic('T', 'C', 'R', 'D');      // RIED
constexpr uint32_t RiedAckMagic = controlMagic('T', 'C', 'R', 'A');   // RIED_ACK
constexpr uint32_t CodeMagic = controlMagic('T', 'C', 'C', 'D');      // CODE
constexpr uint32_t CodeAckMagic = controlMagic('T', 'C', 'C', 'A');   // CODE_ACK
constexpr uint32_t ReplyMagic = controlMagic('T', 'C', 'R', 'P');     // REPLY
constexpr uint32_t QuiesceMagic = controlMagic('T', 'C', 'Q', 'U');   // QUIESCE
constexpr uint32_t ReadyMagic = controlMagic('T', 'C', 'R', 'Y');     // READY
constexpr uint32_t KnockMagic = controlMagic('T', 'C', 'K', 'N');     // KNOCK
/// KNOCK (job/RankEndpoints.cpp): sent first on a rank's endpoint made
/// from a worker address, it names the job and the rank it comes from.
struct RankKnock {
  uint32_t Magic;
  uint32_t Rank;
  uint64_t Job;
};
constexpr uint32_t PayloadMagic = controlMagic('T', 'C', 'P', 'L');   // PAYLOAD
static_assert(HandshakeMagic == 0x54434853, "offers keep the magic they always had");
constexpr uint32_t HandshakeVersion =
    17; // 17: ranks of one host share memory files (OfferSharedMemory), doorbells are memory files; 16: a rank's proof to a rank is a MAC under the pair's agreed key; 15: AUTH proves the key (a MAC of its nonce and time); 14: offers carry the offering rank's proof (a signature of the nonces) and whom it is for; 13: credit lines carry quiescence words between ranks; 12: offers carry the bytes of payloads ahead a receiver takes, frames a flag for them; 11: offers carry a doorbell, credit lines a cold flag; 10: package entries carry the rieds' interface, offers the code-trust policy; 9: offers carry the job and rank; 4: offers carry the packages; 5: the ISA; 6: slots a line apart, frame version 3; 7: frames by message carry credits; 8: a magic per message type

/// The instruction set an offering side runs injected code as: a sender
/// sends the images built for its receiver's (docs/heterogeneous.md). The
/// list and names are the format library's (format/Isa.h).
using twochains::format::hostIsa;
using twochains::format::Isa;
using twochains::format::isaName;
using twochains::format::isaOf;
using twochains::format::IsaAArch64;
using twochains::format::IsaX86_64;

/// Limits on what a peer may describe. A ring of 4096 slots of 4 KiB, or
/// 64 of 1 MiB, fits; anything claiming more is refused at the offer.
constexpr uint32_t MaxSlots = 4096;
constexpr uint32_t MaxSlotSize = 1u << 20;
constexpr uint64_t MaxRingBytes = 64ull << 20;
constexpr uint32_t MaxRkeySize = 1024;
constexpr uint32_t MaxWorkerAddressSize = 16384;
/// The packages an offer names, each "name length, name, identity,
/// interface" (64 hex digits each: the manifest's identity, and
/// packageInterface): the interfaces are compared at the handshake, the
/// identities tell a sender which builds the receiver holds.
constexpr uint32_t MaxOfferPackages = 64;
constexpr uint32_t MaxPackageNameSize = 64;
constexpr size_t PackageIdentitySize = 64;
constexpr size_t MaxPackagesSize = MaxOfferPackages *
                                   (1 + MaxPackageNameSize + 2 * PackageIdentitySize);
constexpr size_t MaxOfferBody = 3 * size_t(MaxRkeySize) + MaxWorkerAddressSize + MaxPackagesSize;
constexpr uint64_t MaxRiedSize = 64ull << 20;
/// Pushes whose bytes a receiver waits for at once, and one peer's share
/// (a sender pushes one at a time per connection); beyond, refused.
constexpr size_t MaxRiedsArriving = 4;
constexpr size_t MaxRiedsArrivingPerPeer = 1;
constexpr uint32_t MaxRiedNameSize = 256;

struct AuthRequest {
  uint32_t Magic, Version;
  uint8_t ClientNonce[NonceSize];
  /// When it was sent (CLOCK_REALTIME, ns) and HMAC(K, "client" Nc time):
  /// a sender that holds the key says so before the receiver answers, so
  /// that an address's limits on connections not yet authenticated hold
  /// back only those that cannot (Connection.cpp). Zero without a key.
  uint64_t SentNs;
  uint8_t Proof[MacSize];
};
static_assert(sizeof(AuthRequest) == 80, "wire layout");

struct AuthChallenge {
  uint32_t Magic, Version;
  uint8_t ServerNonce[NonceSize];
  uint8_t Proof[MacSize]; // HMAC(K, "server" Nc Ns)
};
static_assert(sizeof(AuthChallenge) == 72, "wire layout");

/// How frames and credits reach a peer's ring: one-sided puts (RMA, where
/// the hardware or the kernel enforces the memory key), or active messages
/// that the ring's owner writes into the ring itself (where UCX would
/// emulate RMA in software, which checks no address).
enum FramePath : uint32_t { PathRma = 1, PathAm = 2 };

/// HELLO (sender to receiver) and WELCOME (back) carry one, MAC first.
/// Body: credit-line rkey, ring rkey, RMA worker address, doorbell rkey
/// (RMA path only; the doorbell's may be empty), then the packages of the
/// offering side (PackagesSize bytes, either path).
struct Offer {
  uint8_t Mac[MacSize];   // HMAC(K, "hello"|"welcome" Nc Ns, the rest, body)
  uint32_t Magic, Version;
  uint64_t CreditAddress; // RMA: the offering side's credit line
  uint64_t RingAddress;   // RMA: its ring, where the other side puts frames
  uint32_t Slots, SlotSize;
  uint32_t CreditKeySize, RingKeySize, WorkerAddressSize;
  uint32_t MailboxMode;   // tc_mailbox_mode_t of the offering side
  /// HELLO: PathRma if the sender can do RMA (its keys and RMA worker
  /// follow), else PathAm. WELCOME: the path the receiver chose.
  uint32_t Path;
  uint32_t PackagesSize;
  uint32_t Isa;           // enum Isa: what the offering side runs
  /// The offering side's rank in the job both belong to (tc_job_join), or
  /// NoJobRank with Job 0: a process outside any job.
  uint32_t JobRank;
  uint64_t Job; // the job's identity: a hash of every rank's address
  /// tc_code_trust_t of the offering side: whether a sender may deploy
  /// packages there (code/Deploy.cpp) or sends frames as they are.
  uint32_t CodeTrust;
  /// OfferStoresDirect: the offering side stores its frames straight into
  /// a ring UCX maps into its process (else it puts them).
  /// OfferPayloadsByRma: it takes payloads sent ahead on its RMA worker.
  /// Other bits 0.
  uint32_t Flags;
  /// RMA: the offering side's doorbell (DoorbellKeySize: the size of its
  /// SharedSegmentRecord), and the place in it that is the other side's
  /// (all three 0: none offered).
  uint64_t DoorbellAddress;
  uint32_t DoorbellKeySize, DoorbellIndex;
  /// The bytes of payloads larger than a slot the offering side takes from
  /// the other at once (PAYLOAD, ahead of their frames; 0: none), at most
  /// MaxPayloadAheadBytes.
  uint32_t PayloadAheadBytes;
  /// A job's offer: the rank its proof is meant for (HELLO: the rank whose
  /// published address the sender connected to, or NoJobRank when it
  /// connected to an address the application named; WELCOME: the
  /// sender's rank, as its HELLO proved it, or NoJobRank).
  uint32_t ProofFor;
  /// A job's offer: the offering rank's proof, by the key its address
  /// blob published, of the label ("tc-rank-v1 hello"|"welcome"), Job,
  /// JobRank, ProofFor and both nonces (wireup/RankProof.cpp): for a rank,
  /// HMAC-SHA256 under the key the two ranks' keys agree, then 32 zeros;
  /// for NoJobRank, the Ed25519 signature. A rank is proved, not claimed.
  /// Zeros outside a job.
  uint8_t RankProof[64];
};
static_assert(sizeof(Offer) == 200, "wire layout");
constexpr uint32_t NoJobRank = 0xffffffffu;
/// Offer::Flags. A receiver lets a sender's ring go cold, and gives its
/// pages back, only if the sender stores: one that puts neither rings the
/// doorbell nor obeys the limit (context/Polling.cpp).
constexpr uint32_t OfferStoresDirect = 1;
/// Offer::Flags. The offering side takes PAYLOAD messages on its RMA
/// worker (RMA path only): a sender then sends its payloads ahead there,
/// by the RMA endpoint's transports (shared memory, CMA, RDMA), not the
/// control endpoint's TCP (send/PayloadAhead.cpp).
constexpr uint32_t OfferPayloadsByRma = 2;
/// Offer::Flags. The offering side's credit line and ring are one
/// segment of its memory shared with processes of its host
/// (SharedSegmentRecord, in the place of the ring's key; no credit key),
/// not a UCX key: ranks of one host, which then store frames and credits
/// into each other's memory without a UCX endpoint between their RMA
/// workers (path/Mailbox.cpp). Only with RMA; a WELCOME has it if and
/// only if its HELLO did.
constexpr uint32_t OfferSharedMemory = 4;
/// Ranks a job may have.
constexpr uint32_t MaxJobRanks = 1u << 20;
static_assert(offsetof(Offer, PackagesSize) == 84 && offsetof(Offer, Isa) == 88,
              "wire layout");
static_assert(offsetof(Offer, Magic) == MacSize, "the MAC covers what follows it");

/// An offer that passed every check; pointers into the body given.
struct ParsedOffer {
  Offer Header;
  const uint8_t *CreditKey = nullptr, *RingKey = nullptr, *WorkerAddress = nullptr;
  /// OfferSharedMemory: the segment of the credit line and the ring.
  SharedSegmentRecord Mailbox = {};
  /// The doorbell, if offered (Header.DoorbellKeySize).
  SharedSegmentRecord Doorbell = {};
  /// Name and identity of each package the offering side added, and its
  /// interface and whether it runs its frames (receiver role; the same
  /// index in Interfaces and Receives).
  std::vector<std::pair<std::string, std::string>> Packages;
  std::vector<std::string> Interfaces;
  std::vector<bool> Receives;
};
/// An entry's first byte: the name's length, and this bit if the offering
/// side runs the package's frames.
constexpr uint8_t OfferPackageReceives = 0x80;

/// Appends the packages section of an offer: Interfaces[i] is package i's
/// (64 hex digits; missing ones are sent as zeros).
void appendOfferPackages(std::vector<uint8_t> &Body,
                         const std::vector<std::pair<std::string, std::string>> &Packages,
                         const std::vector<std::string> &Interfaces = {},
                         const std::vector<bool> &Receives = {});

/// Checks an offer's fields and body against the limits and each other.
/// Why names the field and its value; Out is set only on TC_OK.
tc_status_t parseOffer(const void *Header, size_t HeaderLength, const uint8_t *Body,
                       size_t BodyLength, ParsedOffer &Out, std::string &Why);

/// A context's address blob (tc_context_address): "TCAB", version u16
/// (3), port u16, count u16, key size u16 (0 or 32), worker address size
/// u16 (integers little-endian), then count IPv4 addresses in network
/// order, the context's public rank key (the Ed25519 key whose signature
/// proves its rank in a job's handshakes), and its control worker's UCX
/// address (a job's ranks connect from it; opaque here, as UCX packed it).
/// It comes from elsewhere (MPI, a file), so every field is checked.
constexpr uint16_t MaxBlobAddresses = 64;
constexpr size_t RankKeySize = 32;
/// A control worker address larger than this is left out of the blob
/// (ranks then connect to its port).
constexpr size_t MaxBlobWorkerAddress = 2048;
/// The largest blob: what a job's allgather gives each rank room for.
constexpr size_t MaxAddressBlobSize = 14 + 4 * size_t(MaxBlobAddresses) + RankKeySize +
                                      MaxBlobWorkerAddress;
/// Key: RankKeySize bytes, or null for none (a context whose libcrypto
/// could not make a key); Worker: left out if larger than
/// MaxBlobWorkerAddress.
std::vector<uint8_t> packAddressBlob(uint16_t Port, const std::vector<uint32_t> &Addresses,
                                     const uint8_t *Key = nullptr,
                                     const std::vector<uint8_t> &Worker = {});
/// TC_ERR_BAD_MAGIC, _BAD_VERSION or _BAD_LENGTH with Why; Port,
/// Addresses, Key (empty, or RankKeySize bytes) and Worker (the control
/// worker's address, possibly empty) are set only on TC_OK.
tc_status_t parseAddressBlob(const uint8_t *Blob, size_t Size, uint16_t &Port,
                             std::vector<uint32_t> &Addresses, std::vector<uint8_t> &Key,
                             std::vector<uint8_t> &Worker, std::string &Why);

/// Whether a UCX 1.13 packed rkey of Size bytes is well-formed: every
/// length inside the buffer. ucp_ep_rkey_unpack takes no length and trusts
/// what it reads; this is what makes handing it a peer's bytes safe.
bool checkPackedRkey(const uint8_t *Key, size_t Size);

/// A frame sent as an active message: which sequence it is (the slot
/// follows), and a credit report riding along: how many of the receiver's
/// own frames the sender has finished, as CreditMessage::Finished says it.
/// The frame's bytes are the message's data.
struct FrameMessage {
  uint64_t Sequence;
  uint64_t Finished;
};
static_assert(sizeof(FrameMessage) == 16, "wire layout");

/// Frames of a corked sender sent as one active message (tc_peer_cork):
/// Count frames of consecutive sequences from First, back to back in the
/// message's data, each as long as its header's lines say.
struct FrameBatchMessage {
  uint64_t First;
  uint32_t Count;
  uint32_t Reserved; // 0
  uint64_t Finished; // as FrameMessage's
};
static_assert(sizeof(FrameBatchMessage) == 24, "wire layout");
/// At most this many bytes in one batch: a receiver refuses more.
constexpr size_t MaxFrameBatchBytes = 64 * 1024;

/// A credit line report sent as an active message: the words a put would
/// have written.
struct CreditMessage {
  uint64_t Finished;  // frames finished
  uint64_t Miss;      // sequence + 1 of a cached frame whose code is missing, or 0
  uint64_t Fault;     // the last frame abandoned (faultWord()), or 0
};
static_assert(sizeof(CreditMessage) == 24, "wire layout");

struct RiedHeader {
  uint32_t Magic, NameSize;
  uint64_t LibrarySize;
};
static_assert(sizeof(RiedHeader) == 16, "wire layout");

/// RIED_ACK: TC_OK, or why the receiver refused or could not load the
/// ried, and its reason in words (at most MaxRiedReasonSize bytes, the
/// message's data: a dlerror, say), which the pusher logs as printable
/// ASCII only.
struct RiedAck {
  uint32_t Magic;
  int32_t Status;
};
static_assert(sizeof(RiedAck) == 8, "wire layout");
constexpr size_t MaxRiedReasonSize = 256;

/// CODE: the image follows (ImageSize bytes, GOTP zero). Bounded by the
/// receiver's own copy of the element's image before any byte is received.
struct CodeHeader {
  uint32_t Magic, Element;
  uint64_t Package;  // the package's tag, as frames name it
  uint64_t Code;     // the image's code key, as cached frames name it
  uint32_t ImageSize, Reserved;
};
static_assert(sizeof(CodeHeader) == 32, "wire layout");

struct CodeAck {
  uint32_t Magic;
  int32_t Status;
  uint64_t Package;
  uint32_t Element, Reserved;
};
static_assert(sizeof(CodeAck) == 24, "wire layout");

/// Images shipped ahead of frames that a receiver holds received but not
/// yet installed; beyond this, offers are refused (TC_ERR_NO_CREDIT).
constexpr size_t MaxPendingCode = 16;
/// Of those, one peer's share: a sender ships one image at a time per
/// connection (a second may follow one it gave up on), so that one peer
/// whose bytes never come cannot hold every place.
constexpr size_t MaxPendingCodePerPeer = 2;
/// How long a sender waits for a receiver to install shipped code.
constexpr uint64_t CodeTransferTimeoutNs = 10'000'000'000ull;

/// PAYLOAD: a frame's payload too large for a slot (Size bytes follow,
/// the message's data), sent by active message (UCX's rendezvous moves the
/// bytes) ahead of the frame of sequence Sequence, which names it
/// (wire/Frame.h, FramePayloadAhead). The receiver bounds it before any
/// byte is received: by its offer's PayloadAheadBytes for the sender, by
/// the frames the sender may have in flight (its ring's window), and by
/// MaxPayloadsAheadTotal bytes in all (receive/PayloadAhead.cpp).
struct PayloadHeader {
  uint32_t Magic, Size;
  uint64_t Sequence;
};
static_assert(sizeof(PayloadHeader) == 16, "wire layout");
/// PAYLOAD on the RMA worker over a connection of shared memory
/// (OfferSharedMemory), which makes no RMA endpoint until a payload goes:
/// the header carries the token of the receiver's mailbox segment, which
/// only the two sides know, by which the receiver knows the sender before
/// it holds an endpoint to it (it then takes the one UCX made for the
/// sender as the connection's: path/Mailbox.h, peerOfMailboxToken).
struct SharedPayloadHeader {
  PayloadHeader Header;
  uint8_t Token[SegmentTokenBytes];
};
static_assert(sizeof(SharedPayloadHeader) == 32, "wire layout");
/// Checks a PAYLOAD message from a sender whose ring expects frame Expected
/// next (of Slots), carrying Length bytes, against the share Share this
/// side offers it: TC_OK (Out set), else why, in Why. TC_ERR_BAD_LENGTH,
/// TC_ERR_BAD_MAGIC, TC_ERR_SEQUENCE: no frame of the sender's may name it
/// (the message alone is refused); TC_ERR_TOO_LARGE: a frame may (it hears
/// why its payload was refused).
tc_status_t parsePayloadHeader(const void *Header, size_t HeaderLength, size_t Length,
                               uint64_t Expected, uint32_t Slots, uint32_t Share,
                               PayloadHeader &Out, std::string &Why);
/// What a receiver may offer one sender, and at most in all for all of them.
constexpr uint32_t MaxPayloadAheadBytes = 1u << 30;
constexpr uint32_t DefaultPayloadAheadBytes = 4u << 20;
constexpr uint64_t PayloadsAheadTotalFactor = 16;

/// REPLY: a jam's answer (tc_jam_return) to the frame of sequence
/// Sequence, Size bytes following; or, with Status negative and no bytes,
/// why there is none.
struct CallReply {
  uint32_t Magic;
  int32_t Status;
  uint64_t Sequence;
  uint32_t Size, Reserved;
};
static_assert(sizeof(CallReply) == 24, "wire layout");
static_assert(offsetof(CallReply, Sequence) == 8, "wire layout");
/// Answers a receiver has in flight to one caller; past either, the jam's
/// tc_jam_return fails at once (the executor never waits on a caller).
constexpr size_t MaxRepliesInFlight = 1024;
constexpr size_t MaxReplyBytesInFlight = 4u << 20;

/// QUIESCE: a rank's report of a wave to rank 0 (Kind 1: the frames it
/// sent to ranks and finished of theirs), or rank 0's decision of it
/// (Kind 2: Verdict 1 when the job is quiet). No body.
struct QuiesceMessage {
  uint32_t Magic, Kind;
  uint64_t Epoch; // tc_job_quiesce calls the rank has finished
  uint32_t Wave, Verdict;
  uint64_t Sent, Done;
};
static_assert(sizeof(QuiesceMessage) == 40, "wire layout");

/// Why a handshake was refused: TC_ERR_AUTH, TC_ERR_BAD_OFFER, ...
/// Body (TC_ERR_PACKAGE_MISMATCH only): "<package> <identity>", the
/// refusing side's identity of the package that differs.
struct Refusal {
  uint32_t Magic;
  int32_t Status;
};
/// A refusal's Status that is no failure: two ranks of a job connected to
/// each other at once, and the refusing side keeps the other connection
/// (job/Job.cpp says which), which the refused side is to use.
constexpr int32_t RefusalCrossed = 1;
static_assert(sizeof(Refusal) == 8, "wire layout");

} // namespace twochains::rt

#endif
