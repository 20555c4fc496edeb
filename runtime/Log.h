//===- Log.h - Reporting errors once, where they are found ----------------===//
#ifndef TWOCHAINS_RUNTIME_LOG_H
#define TWOCHAINS_RUNTIME_LOG_H

#include <string>

namespace twochains::rt {

/// Writes "twochains: error: <message>" to stderr.
void logError(const std::string &Message);

} // namespace twochains::rt

#endif
