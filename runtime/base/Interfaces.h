//===- Interfaces.h - This host's network interfaces and routes -----------===//
#ifndef TWOCHAINS_RUNTIME_BASE_INTERFACES_H
#define TWOCHAINS_RUNTIME_BASE_INTERFACES_H

#include <netinet/in.h>
#include <string>

namespace twochains::rt {

/// The name of the interface that holds Address ("lo", "eth0"), or empty
/// if none does.
std::string interfaceHolding(in_addr Address);
/// The name of the interface the route to To leaves by (the kernel's
/// choice, as a connect would make it), or empty if there is no route.
std::string interfaceTowards(const sockaddr_in &To);

} // namespace twochains::rt

#endif
