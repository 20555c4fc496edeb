//===- Control.h - The bootstrap socket between client and server ----------===//
//
// Plain TCP, like ucx_perftest's run-time environment: it carries the UCX
// worker addresses and rkeys of the baselines, and the client's commands
// ("run this test, this variant, this size, N iterations") and the server's
// answers. Nothing measured travels on it. Messages are a type, a length
// and a body; both ends are the same program, so bodies are raw structs.
//===----------------------------------------------------------------------===//
#ifndef TC_PERF_CONTROL_H
#define TC_PERF_CONTROL_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tcperf {

enum class MsgType : uint32_t { Hello = 1, Run, Ready, Result, Done, Quit, Bye, Failed };

// Appends fields to a message body.
class Writer {
public:
  template <typename T> Writer &put(const T &V) {
    const uint8_t *P = reinterpret_cast<const uint8_t *>(&V);
    Bytes.insert(Bytes.end(), P, P + sizeof V);
    return *this;
  }
  Writer &blob(const void *P, size_t N);
  Writer &str(const std::string &S) { return blob(S.data(), S.size()); }
  const std::vector<uint8_t> &bytes() const { return Bytes; }

private:
  std::vector<uint8_t> Bytes;
};

// Reads them back; ok() turns false (and stays) on a short body.
class Reader {
public:
  explicit Reader(const std::vector<uint8_t> &B) : P(B.data()), End(B.data() + B.size()) {}
  template <typename T> Reader &get(T *V) {
    if (Ok && size_t(End - P) >= sizeof *V) {
      std::memcpy(V, P, sizeof *V);
      P += sizeof *V;
    } else {
      Ok = false;
    }
    return *this;
  }
  Reader &blob(std::vector<uint8_t> *Out);
  Reader &str(std::string *Out);
  bool ok() const { return Ok; }

private:
  const uint8_t *P, *End;
  bool Ok = true;
};

class Control {
public:
  Control() = default;
  ~Control();
  Control(const Control &) = delete;
  Control &operator=(const Control &) = delete;

  // Server: waits up to TimeoutMs for one client on Port.
  bool acceptOne(uint16_t Port, int TimeoutMs);
  // Client: connects, retrying until TimeoutMs (the server may be starting).
  bool connectTo(const std::string &Host, uint16_t Port, int TimeoutMs);

  bool send(MsgType Type, const std::vector<uint8_t> &Body = {});
  // Blocks for the next message; false if the peer went away.
  bool recv(MsgType *Type, std::vector<uint8_t> *Body);
  // recv, and an error (printed) unless it is of type Want. A Failed
  // message from the peer is printed with its reason.
  bool expect(MsgType Want, std::vector<uint8_t> *Body);
  // Whether a message (or the peer's close) is waiting, without blocking.
  bool readable() const;

private:
  bool readAll(void *P, size_t N);
  int Fd = -1;
};

} // namespace tcperf

#endif
