//===- RawPeer.h - A peer that speaks the handshake itself ----------------===//
//
// For tests of what a receiver does with handshakes no runtime would send:
// a connection of one context (the attacker's) to a listening receiver,
// whose AUTH and HELLO the test makes itself, through the runtime's wire
// formats, and whose answers it takes from the context's handshake queue
// before the runtime would (the attacker's context is never given to
// tc_progress while a raw peer lives). The peer is the test's, not the
// runtime's: it is released (and its messages dropped) when it goes.
// (These were the end-to-end program tc-security's, which needed the
// internals; end-to-end programs use only the installed headers.)
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_TEST_UNIT_RAWPEER_H
#define TWOCHAINS_TEST_UNIT_RAWPEER_H

#include "base/Clock.h"
#include "core/CoreContext.h"
#include "control/ControlWorker.h"
#include "ucx/Request.h"
#include "LoopbackEndpoint.h"
#include "wire/Auth.h"
#include "wire/Frame.h"
#include "wire/Wire.h"
#include "wireup/PeerWireup.h"
#include "wireup/Wireup.h"
#include "wireup/WireupContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <memory>
#include <netinet/in.h>
#include <string>
#include <ucp/api/ucp.h>
#include <vector>

namespace rawpeer {

using namespace twochains::rt;

/// The bound of each wait for the receiver's answer: generous, since the
/// machine may be busy; a working receiver answers in milliseconds.
constexpr uint64_t AnswerWaitNs = 10 * NsPerS;

class RawPeer {
public:
  explicit RawPeer(tc_context_t *Attacker) : Ctx(coreOf(Attacker)) {}
  RawPeer(const RawPeer &) = delete;
  RawPeer &operator=(const RawPeer &) = delete;
  ~RawPeer() { release(); }

  CoreContext *Ctx;
  std::unique_ptr<tc_peer> Peer;

  /// A connection to the receiver on 127.0.0.1:Port, over TCP on loopback
  /// as tc_connect makes it. Call under ASSERT_NO_FATAL_FAILURE.
  void connect(uint16_t Port) {
    Peer = newPeer(Ctx);
    Peer->Name = "receiver";
    ASSERT_EQ(useTcpInterface(Ctx, "lo", "a raw connect"), TC_OK);
    ASSERT_EQ(
        connectLoopback(
            Ctx->Worker, Port,
            [](void *Arg, ucp_ep_h, ucs_status_t) { static_cast<tc_peer *>(Arg)->Failed = true; },
            Peer.get(), &Peer->Ep),
        UCS_OK);
    // Where the context's handlers look for the peer an answer is for.
    Ctx->Connecting.push_back(Peer.get());
  }

  /// Sends message Id, eager, and waits until UCX has sent it.
  ucs_status_t send(unsigned Id, const void *Header, size_t HeaderSize, const void *Body = nullptr,
                    size_t BodySize = 0) {
    ucp_request_param_t P = {};
    P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
    return waitRequestUntil(
        Ctx->Worker, ucp_am_send_nbx(Peer->Ep, Id, Header, HeaderSize, Body, BodySize, &P),
        nowNs() + AnswerWaitNs);
  }

  /// Takes message Id from the receiver; false if the connection failed
  /// or none came in time.
  bool await(unsigned Id, WireupContext::PendingMessage &Out) {
    for (uint64_t Deadline = nowNs() + AnswerWaitNs; nowNs() < Deadline && !Peer->Failed;) {
      ucp_worker_progress(Ctx->Worker);
      for (size_t I = 0; I < Ctx->Wireup->Handshakes.size(); ++I)
        if (Ctx->Wireup->Handshakes[I].Id == Id && Ctx->Wireup->Handshakes[I].Ep == Peer->Ep) {
          Out = std::move(Ctx->Wireup->Handshakes[I]);
          Ctx->Wireup->Handshakes.erase(Ctx->Wireup->Handshakes.begin() + I);
          return true;
        }
    }
    return false;
  }

  /// AUTH, then the receiver's CHALLENGE: both nonces set. Call under
  /// ASSERT_NO_FATAL_FAILURE.
  void authenticate() {
    AuthRequest A = {AuthMagic, HandshakeVersion, {}};
    ASSERT_TRUE(randomNonce(Peer->Wireup->ClientNonce));
    std::memcpy(A.ClientNonce, Peer->Wireup->ClientNonce, NonceSize);
    ASSERT_EQ(send(AmAuth, &A, sizeof A), UCS_OK);
    WireupContext::PendingMessage M;
    ASSERT_TRUE(await(AmChallenge, M)) << "no CHALLENGE came";
    ASSERT_EQ(M.Header.size(), sizeof(AuthChallenge));
    AuthChallenge C;
    std::memcpy(&C, M.Header.data(), sizeof C);
    std::memcpy(Peer->Wireup->ServerNonce, C.ServerNonce, NonceSize);
  }

  /// HELLO with offer O (its MAC made here, broken if BadMac), then the
  /// receiver's answer: TC_OK for a WELCOME, the refusal's status, or
  /// TC_ERR_TIMED_OUT if none came. Call under ASSERT_NO_FATAL_FAILURE.
  void hello(Offer O, const std::vector<uint8_t> &Body, bool BadMac, tc_status_t &Answer,
             Offer *Welcome = nullptr, std::vector<uint8_t> *WelcomeBody = nullptr) {
    static const char Label[] = "tc-auth-v1 hello";
    const auto *Fields = reinterpret_cast<const uint8_t *>(&O) + MacSize;
    ASSERT_TRUE(hmacSha256(Ctx->Key,
                           {{Label, sizeof Label},
                            {Peer->Wireup->ClientNonce, NonceSize},
                            {Peer->Wireup->ServerNonce, NonceSize},
                            {Fields, sizeof O - MacSize},
                            {Body.data(), Body.size()}},
                           O.Mac));
    if (BadMac)
      O.Mac[7] ^= 1;
    ASSERT_EQ(send(AmHello, &O, sizeof O, Body.data(), Body.size()), UCS_OK);
    Answer = TC_ERR_TIMED_OUT;
    for (uint64_t Deadline = nowNs() + AnswerWaitNs;
         nowNs() < Deadline && Answer == TC_ERR_TIMED_OUT && !Peer->Failed;) {
      ucp_worker_progress(Ctx->Worker);
      for (auto &H : Ctx->Wireup->Handshakes)
        if (H.Ep == Peer->Ep && H.Id == AmWelcome) {
          Answer = TC_OK;
          if (Welcome && H.Header.size() == sizeof *Welcome)
            std::memcpy(Welcome, H.Header.data(), sizeof *Welcome);
          if (WelcomeBody)
            *WelcomeBody = H.Body;
        } else if (H.Ep == Peer->Ep && H.Id == AmRefused && H.Header.size() == sizeof(Refusal)) {
          Refusal F;
          std::memcpy(&F, H.Header.data(), sizeof F);
          Answer = tc_status_t(F.Status);
        }
    }
  }

  /// Closes the connection at once and lets the peer go, with whatever the
  /// receiver sent it.
  void release() {
    if (!Peer)
      return;
    auto &C = Ctx->Connecting;
    C.erase(std::remove(C.begin(), C.end(), Peer.get()), C.end());
    auto &H = Ctx->Wireup->Handshakes;
    H.erase(std::remove_if(H.begin(), H.end(),
                           [&](const WireupContext::PendingMessage &M) { return M.Ep == Peer->Ep; }),
            H.end());
    if (Peer->Ep) {
      ucp_request_param_t P = {};
      P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      P.flags = UCP_EP_CLOSE_FLAG_FORCE;
      waitRequestUntil(Ctx->Worker, ucp_ep_close_nbx(Peer->Ep, &P), nowNs() + NsPerS);
      Peer->Ep = nullptr;
    }
    Peer.reset();
  }
};

/// An offer of a ring of 16 slots of 1 KiB on the message path.
inline Offer smallOffer() {
  Offer O = {};
  O.Magic = HandshakeMagic;
  O.Version = HandshakeVersion;
  O.Slots = 16;
  O.SlotSize = 1024;
  O.MailboxMode = TC_MAILBOX_CODE_CACHE;
  O.Path = PathAm;
  O.Isa = hostIsa();
  O.CodeTrust = TC_CODE_TRUST_PACKAGE;
  return O;
}

/// Memory of this process mapped for RMA, with its packed key; unmapped
/// when it goes (before the context whose UCP context mapped it).
struct OwnMemory {
  ucp_context_h Ucp = nullptr;
  ucp_mem_h Mem = nullptr;
  uint64_t Base = 0;
  std::vector<uint8_t> Key;
  OwnMemory() = default;
  OwnMemory(const OwnMemory &) = delete;
  OwnMemory &operator=(const OwnMemory &) = delete;
  ~OwnMemory() { unmap(); }
  void unmap() {
    if (Mem)
      ucp_mem_unmap(Ucp, Mem);
    Mem = nullptr;
  }
};

/// Maps Length bytes of this process in Ucp, with their key. Call under
/// ASSERT_NO_FATAL_FAILURE.
inline void packOwnKey(ucp_context_h Ucp, size_t Length, OwnMemory &Out) {
  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.length = Length;
  M.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_attr_t A = {};
  A.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  void *Key = nullptr;
  size_t Size = 0;
  Out.Ucp = Ucp;
  ASSERT_EQ(ucp_mem_map(Ucp, &M, &Out.Mem), UCS_OK);
  ASSERT_EQ(ucp_rkey_pack(Ucp, Out.Mem, &Key, &Size), UCS_OK);
  ASSERT_EQ(ucp_mem_query(Out.Mem, &A), UCS_OK);
  Out.Base = reinterpret_cast<uint64_t>(A.address);
  Out.Key.assign(static_cast<uint8_t *>(Key), static_cast<uint8_t *>(Key) + Size);
  ucp_rkey_buffer_release(Key);
}

/// Makes O an RMA offer with real keys of one region of Ctx's RMA memory
/// (Memory) and its real RMA worker address, in Body: the credit line at
/// the region's start, the ring after it; Region: its size. Unmap: the
/// region (a SysV or POSIX segment) is gone before the receiver unpacks its
/// keys, as when a sender dies mid-handshake. Call under
/// ASSERT_NO_FATAL_FAILURE.
inline void rmaOffer(CoreContext *Ctx, Offer &O, std::vector<uint8_t> &Body, OwnMemory &Memory,
                     size_t &Region, bool Unmap = false) {
  ASSERT_NE(Ctx->RmaUcp, nullptr) << "no RMA context to make keys with";
  Region = (4096 + size_t(O.Slots) * slotStride(O.SlotSize) + 4095) & ~size_t(4095);
  ASSERT_NO_FATAL_FAILURE(packOwnKey(Ctx->RmaUcp, Region, Memory));
  if (Unmap)
    Memory.unmap();
  O.Path = PathRma;
  O.CreditKeySize = O.RingKeySize = uint32_t(Memory.Key.size());
  O.WorkerAddressSize = uint32_t(Ctx->WorkerAddressSize);
  O.CreditAddress = Memory.Base;
  O.RingAddress = Memory.Base + 4096;
  Body.insert(Body.end(), Memory.Key.begin(), Memory.Key.end());
  Body.insert(Body.end(), Memory.Key.begin(), Memory.Key.end());
  auto *W = reinterpret_cast<const uint8_t *>(Ctx->WorkerAddress);
  Body.insert(Body.end(), W, W + Ctx->WorkerAddressSize);
}

} // namespace rawpeer

#endif // TWOCHAINS_TEST_UNIT_RAWPEER_H
