//===- PeerPart.h - A part of a peer that an upper layer declares ---------===//
//
// tc_peer is defined here in core, below the layers whose state it
// carries. A layer above declares its part of a peer in its own folder
// (wireup/PeerWireup.h, calls/PeerCalls.h) and only it creates, reads and
// writes that part; core holds it by name only, as an owning pointer, and
// frees it with the function its owner gave when it made it.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_PEERPART_H
#define TWOCHAINS_RUNTIME_CORE_PEERPART_H

namespace twochains::rt {

template <class Part> class PeerPart {
public:
  PeerPart() = default;
  PeerPart(const PeerPart &) = delete;
  PeerPart &operator=(const PeerPart &) = delete;
  ~PeerPart() { reset(nullptr, nullptr); }

  /// Takes Made, which Free releases (with the peer, or on the next reset).
  void reset(Part *Made, void (*Free)(Part *)) {
    if (Held)
      Release(Held);
    Held = Made;
    Release = Free;
  }
  Part *get() const { return Held; }
  Part *operator->() const { return Held; }
  Part &operator*() const { return *Held; }
  explicit operator bool() const { return Held != nullptr; }

private:
  Part *Held = nullptr;
  void (*Release)(Part *) = nullptr;
};

} // namespace twochains::rt

#endif
