//===- Control.cpp - The bootstrap socket between client and server --------===//
#include "Control.h"

#include "Clock.h"

#include <cerrno>
#include <cstdio>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tcperf {

Writer &Writer::blob(const void *P, size_t N) {
  put(uint32_t(N));
  const uint8_t *B = static_cast<const uint8_t *>(P);
  Bytes.insert(Bytes.end(), B, B + N);
  return *this;
}

Reader &Reader::blob(std::vector<uint8_t> *Out) {
  uint32_t N = 0;
  get(&N);
  if (Ok && size_t(End - P) >= N) {
    Out->assign(P, P + N);
    P += N;
  } else {
    Ok = false;
  }
  return *this;
}

Reader &Reader::str(std::string *Out) {
  std::vector<uint8_t> B;
  blob(&B);
  if (Ok)
    Out->assign(B.begin(), B.end());
  return *this;
}

Control::~Control() {
  if (Fd >= 0)
    close(Fd);
}

// Commands are tiny and each waits for an answer: no Nagle delay.
static void noDelay(int Fd) {
  int One = 1;
  setsockopt(Fd, IPPROTO_TCP, TCP_NODELAY, &One, sizeof One);
}

bool Control::acceptOne(uint16_t Port, int TimeoutMs) {
  int L = socket(AF_INET6, SOCK_STREAM, 0);
  bool Six = L >= 0;
  if (!Six)
    L = socket(AF_INET, SOCK_STREAM, 0);
  if (L < 0)
    return perror("tc-perf: socket"), false;
  int One = 1, Zero = 0;
  setsockopt(L, SOL_SOCKET, SO_REUSEADDR, &One, sizeof One);
  sockaddr_storage A = {};
  socklen_t Len;
  if (Six) { // dual stack: IPv4 clients arrive as mapped addresses
    setsockopt(L, IPPROTO_IPV6, IPV6_V6ONLY, &Zero, sizeof Zero);
    auto *S = reinterpret_cast<sockaddr_in6 *>(&A);
    S->sin6_family = AF_INET6;
    S->sin6_port = htons(Port);
    S->sin6_addr = in6addr_any;
    Len = sizeof *S;
  } else {
    auto *S = reinterpret_cast<sockaddr_in *>(&A);
    S->sin_family = AF_INET;
    S->sin_port = htons(Port);
    S->sin_addr.s_addr = htonl(INADDR_ANY);
    Len = sizeof *S;
  }
  if (bind(L, reinterpret_cast<sockaddr *>(&A), Len) != 0 || listen(L, 1) != 0) {
    fprintf(stderr, "tc-perf: cannot listen on bootstrap port %u: %s\n", Port, strerror(errno));
    close(L);
    return false;
  }
  pollfd P = {L, POLLIN, 0};
  int Ready = poll(&P, 1, TimeoutMs);
  if (Ready > 0)
    Fd = accept(L, nullptr, nullptr);
  close(L);
  if (Fd < 0) {
    fprintf(stderr, "tc-perf: no client on bootstrap port %u within %d s\n", Port,
            TimeoutMs / 1000);
    return false;
  }
  noDelay(Fd);
  return true;
}

bool Control::connectTo(const std::string &Host, uint16_t Port, int TimeoutMs) {
  addrinfo Hints = {}, *List = nullptr;
  Hints.ai_socktype = SOCK_STREAM;
  int E = getaddrinfo(Host.c_str(), std::to_string(Port).c_str(), &Hints, &List);
  if (E != 0) {
    fprintf(stderr, "tc-perf: cannot resolve '%s': %s\n", Host.c_str(), gai_strerror(E));
    return false;
  }
  uint64_t Deadline = Clock::monotonicNs() + uint64_t(TimeoutMs) * 1000000;
  while (Fd < 0) {
    for (addrinfo *A = List; A && Fd < 0; A = A->ai_next) {
      int S = socket(A->ai_family, A->ai_socktype, A->ai_protocol);
      if (S >= 0 && connect(S, A->ai_addr, A->ai_addrlen) == 0)
        Fd = S;
      else if (S >= 0)
        close(S);
    }
    if (Fd < 0 && Clock::monotonicNs() > Deadline)
      break;
    if (Fd < 0)
      usleep(100000); // the server may still be starting
  }
  freeaddrinfo(List);
  if (Fd < 0) {
    fprintf(stderr, "tc-perf: no tc-perf server at %s port %u (bootstrap) within %d s\n",
            Host.c_str(), Port, TimeoutMs / 1000);
    return false;
  }
  noDelay(Fd);
  return true;
}

bool Control::send(MsgType Type, const std::vector<uint8_t> &Body) {
  uint32_t Head[2] = {uint32_t(Type), uint32_t(Body.size())};
  std::vector<uint8_t> Out(sizeof Head + Body.size());
  std::memcpy(Out.data(), Head, sizeof Head);
  if (!Body.empty())
    std::memcpy(Out.data() + sizeof Head, Body.data(), Body.size());
  size_t Done = 0;
  while (Done < Out.size()) {
    ssize_t N = ::send(Fd, Out.data() + Done, Out.size() - Done, MSG_NOSIGNAL);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Done += size_t(N);
  }
  return true;
}

bool Control::readAll(void *P, size_t N) {
  uint8_t *B = static_cast<uint8_t *>(P);
  while (N) {
    ssize_t R = ::recv(Fd, B, N, 0);
    if (R < 0 && errno == EINTR)
      continue;
    if (R <= 0)
      return false;
    B += R;
    N -= size_t(R);
  }
  return true;
}

bool Control::recv(MsgType *Type, std::vector<uint8_t> *Body) {
  uint32_t Head[2];
  if (!readAll(Head, sizeof Head) || Head[1] > (1u << 24))
    return false;
  Body->resize(Head[1]);
  if (Head[1] && !readAll(Body->data(), Head[1]))
    return false;
  *Type = MsgType(Head[0]);
  return true;
}

bool Control::expect(MsgType Want, std::vector<uint8_t> *Body) {
  MsgType T;
  if (!recv(&T, Body)) {
    fprintf(stderr, "tc-perf: the other side closed the bootstrap connection\n");
    return false;
  }
  if (T == Want)
    return true;
  if (T == MsgType::Failed) {
    std::string Why;
    Reader(*Body).str(&Why);
    fprintf(stderr, "tc-perf: the other side failed: %s\n", Why.c_str());
  } else {
    fprintf(stderr, "tc-perf: protocol error: message %u where %u was expected\n",
            unsigned(T), unsigned(Want));
  }
  return false;
}

bool Control::readable() const {
  pollfd P = {Fd, POLLIN, 0};
  return poll(&P, 1, 0) > 0;
}

} // namespace tcperf
