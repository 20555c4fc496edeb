//===- Subscribers.h - Who is told of an event, in order ------------------===//
//
// A lower layer tells of what happened (a peer released, a connection
// welcomed, an answer arrived) without naming who listens: the features
// above subscribe when the context is set up, as UCX's features register
// their handlers with a worker. Everyone subscribed is told, in the order
// they subscribed.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_SUBSCRIBERS_H
#define TWOCHAINS_RUNTIME_CORE_SUBSCRIBERS_H

#include <vector>

namespace twochains::rt {

template <class... Args> class Subscribers {
public:
  using Callback = void (*)(Args...);

  void subscribe(Callback C) { List.push_back(C); }
  void notify(Args... A) const {
    for (Callback C : List)
      C(A...);
  }
  bool empty() const { return List.empty(); }

private:
  std::vector<Callback> List;
};

} // namespace twochains::rt

#endif
