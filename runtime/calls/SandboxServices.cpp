//===- SandboxServices.cpp - The jam API, served to sandboxed jams --------===//
//
// A sandboxed jam reaches tc_jam_* only through its region's call table
// (sandbox/Services.h). Each service here takes the jam's registers, reads
// every pointer as the sandbox does (region base plus its low 32 bits,
// inside the jam's own memory), and acts on the frame being run: the
// context argument the jam passes is ignored, so no jam can name another
// frame, peer or package. Strings (element names, addresses) end within
// the jam's memory and 255 bytes.
//
//===----------------------------------------------------------------------===//
#include "calls/Calls.h"

#include "core/Peer.h"
#include "sandbox/Services.h"
#include "twochains/jam.h"

#include <cstdint>
#include <mutex>

using namespace twochains::rt;

namespace {

constexpr size_t ElementNameMax = 255;
/// A host name or address for tc_jam_forward (the forward_allow list
/// holds the same).
constexpr size_t AddressMax = 255;

tc_jam_ctx_t *running() { return static_cast<tc_jam_ctx_t *>(sandboxAreas().Caller); }

uint64_t status(int St) { return uint64_t(int64_t(St)); }

uint64_t serveReturn(uint64_t, uint64_t Reply, uint64_t Size, uint64_t, uint64_t, uint64_t) {
  const uint8_t *Bytes = sandboxPointer("tc_jam_return", "reply", Reply, Size, false);
  return status(tc_jam_return(running(), Bytes, Size));
}

uint64_t serveReply(uint64_t, uint64_t Element, uint64_t Payload, uint64_t Size, uint64_t,
                    uint64_t) {
  const char *Name = sandboxString("tc_jam_reply", "element", Element, ElementNameMax);
  const uint8_t *Bytes = sandboxPointer("tc_jam_reply", "payload", Payload, Size, false);
  return status(tc_jam_reply(running(), Name, Bytes, Size));
}

uint64_t serveReplyMode(uint64_t, uint64_t Element, uint64_t Mode, uint64_t Payload, uint64_t Size,
                        uint64_t) {
  const char *Name = sandboxString("tc_jam_reply_mode", "element", Element, ElementNameMax);
  const uint8_t *Bytes = sandboxPointer("tc_jam_reply_mode", "payload", Payload, Size, false);
  return status(tc_jam_reply_mode(running(), Name, int(Mode), Bytes, Size));
}

uint64_t serveForward(uint64_t, uint64_t Address, uint64_t Port, uint64_t Element, uint64_t Payload,
                      uint64_t Size) {
  const char *Host = sandboxString("tc_jam_forward", "address", Address, AddressMax);
  const char *Name = sandboxString("tc_jam_forward", "element", Element, ElementNameMax);
  const uint8_t *Bytes = sandboxPointer("tc_jam_forward", "payload", Payload, Size, false);
  // The port as the C signature's unsigned: the service takes x2 whole.
  if (Port > 65535)
    return status(TC_ERR_INVALID_PARAM);
  return status(tc_jam_forward(running(), Host, unsigned(Port), Name, Bytes, Size));
}

uint64_t serveForwardRank(uint64_t, uint64_t Rank, uint64_t Element, uint64_t Mode,
                          uint64_t Payload, uint64_t Size) {
  const char *Name = sandboxString("tc_jam_forward_rank", "element", Element, ElementNameMax);
  const uint8_t *Bytes = sandboxPointer("tc_jam_forward_rank", "payload", Payload, Size, false);
  if (Rank > UINT32_MAX)
    return status(TC_ERR_INVALID_PARAM);
  return status(tc_jam_forward_rank(running(), unsigned(Rank), Name, int(Mode), Bytes, Size));
}

uint64_t serveSender(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return tc_jam_sender(running());
}

uint64_t serveSenderRank(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return tc_jam_sender_rank(running());
}

uint64_t serveJobRank(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return tc_jam_job_rank(running());
}

uint64_t serveJobSize(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return tc_jam_job_size(running());
}

uint64_t serveSequence(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return tc_jam_sequence(running());
}

bool addServices() {
  static const struct {
    const char *Name;
    SandboxServe Serve;
  } Services[] = {
      {"tc_jam_return", serveReturn},
      {"tc_jam_reply", serveReply},
      {"tc_jam_reply_mode", serveReplyMode},
      {"tc_jam_forward", serveForward},
      {"tc_jam_forward_rank", serveForwardRank},
      {"tc_jam_sender", serveSender},
      {"tc_jam_sender_rank", serveSenderRank},
      {"tc_jam_job_rank", serveJobRank},
      {"tc_jam_job_size", serveJobSize},
      {"tc_jam_sequence", serveSequence},
  };
  bool Added = true;
  for (const auto &S : Services)
    Added &= addSandboxService(S.Name, S.Serve);
  return Added;
}

} // namespace

bool twochains::rt::addJamSandboxServices() {
  static const bool Added = addServices();
  return Added;
}
