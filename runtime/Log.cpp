//===- Log.cpp ------------------------------------------------------------===//
#include "Log.h"

#include <cstdio>

namespace twochains::rt {

void logError(const std::string &Message) {
  std::fprintf(stderr, "twochains: error: %s\n", Message.c_str());
}

} // namespace twochains::rt
