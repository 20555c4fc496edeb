//===- Log.h - Reporting errors once, where they are found ----------------===//
//
// Every message goes through the application's log handler
// (tc_set_log_handler), by default "twochains: <level>: <message>" on
// stderr, and only at or below the log level (tc_set_log_level,
// TC_LOG_LEVEL=error|warn|info|debug; default warn). The macros below
// test the level before a message is formatted (as libbpf's pr_warn and
// pr_debug do).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_LOG_H
#define TWOCHAINS_RUNTIME_LOG_H

#include "twochains/twochains.h"

#include <string>

namespace twochains::rt {

void logMessage(tc_log_level_t Level, const std::string &Message);
bool logEnabled(tc_log_level_t Level);

} // namespace twochains::rt

/// Logs at Level what the arguments make, which are evaluated (strings
/// built) only if the level is enabled: a debug line costs a load and a
/// compare where debugging is off.
#define TC_LOG(Level, ...)                                                                    \
  do {                                                                                        \
    if (::twochains::rt::logEnabled(Level))                                                   \
      ::twochains::rt::logMessage(Level, __VA_ARGS__);                                        \
  } while (0)
#define logError(...) TC_LOG(TC_LOG_ERROR, __VA_ARGS__)
#define logWarning(...) TC_LOG(TC_LOG_WARN, __VA_ARGS__)
#define logInfo(...) TC_LOG(TC_LOG_INFO, __VA_ARGS__)
#define logDebug(...) TC_LOG(TC_LOG_DEBUG, __VA_ARGS__)
/// Logs once per Flag (a bool the caller keeps: per peer, per element...):
/// what a peer can repeat at will is logged once, then counted.
#define logOnce(Flag, Level, ...)                                                             \
  do {                                                                                        \
    if (!(Flag)) {                                                                            \
      (Flag) = true;                                                                          \
      TC_LOG(Level, __VA_ARGS__);                                                             \
    }                                                                                         \
  } while (0)

#endif
