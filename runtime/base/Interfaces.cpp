//===- Interfaces.cpp - This host's network interfaces and routes ---------===//
#include "base/Interfaces.h"

#include <ifaddrs.h>
#include <sys/socket.h>
#include <unistd.h>

namespace twochains::rt {

std::string interfaceHolding(in_addr Address) {
  ifaddrs *List = nullptr;
  if (getifaddrs(&List) != 0)
    return "";
  std::string Name;
  for (ifaddrs *I = List; I && Name.empty(); I = I->ifa_next)
    if (I->ifa_addr && I->ifa_addr->sa_family == AF_INET &&
        reinterpret_cast<const sockaddr_in *>(I->ifa_addr)->sin_addr.s_addr == Address.s_addr)
      Name = I->ifa_name;
  freeifaddrs(List);
  return Name;
}

std::string interfaceTowards(const sockaddr_in &To) {
  // A UDP socket's connect sends nothing: it only asks the kernel for the
  // route, whose source address names the interface.
  int S = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (S < 0)
    return "";
  sockaddr_in Local = {};
  socklen_t Size = sizeof Local;
  bool Routed = connect(S, reinterpret_cast<const sockaddr *>(&To), sizeof To) == 0 &&
                getsockname(S, reinterpret_cast<sockaddr *>(&Local), &Size) == 0;
  close(S);
  return Routed ? interfaceHolding(Local.sin_addr) : "";
}

} // namespace twochains::rt
