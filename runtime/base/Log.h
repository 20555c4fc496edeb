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

#include "base/Clock.h"
#include "twochains/twochains.h"

#include <string>

#include <cstdint>

namespace twochains::rt {

void logMessage(tc_log_level_t Level, const std::string &Message);
bool logEnabled(tc_log_level_t Level);

/// A budget of log lines for one kind of message one peer can cause again
/// and again (a frame refused, a connection refused): at most Burst lines a
/// second; what it holds back is counted and said in the next line it lets
/// through, so a flood costs a few lines, not one per message.
class LogLimit {
public:
  static constexpr unsigned Burst = 20;
  static constexpr uint64_t PeriodNs = 1'000'000'000;
  /// Whether a line may be logged at NowNs. When it may, Held is the
  /// number of lines held back since the last one let through.
  bool allow(uint64_t NowNs, uint64_t &Held) {
    if (NowNs - WindowStartNs >= PeriodNs) {
      WindowStartNs = NowNs;
      InWindow = 0;
    }
    if (InWindow >= Burst) {
      ++Suppressed;
      return false;
    }
    ++InWindow;
    Held = Suppressed;
    Suppressed = 0;
    return true;
  }

private:
  uint64_t WindowStartNs = 0;
  unsigned InWindow = 0;
  uint64_t Suppressed = 0;
};

/// Message, and how many lines like it Limit held back before it.
std::string withSuppressed(const std::string &Message, uint64_t Held);

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

/// Logs at Level within Limit's budget (LogLimit): the message is built
/// only when a line is let through, and then says how many were held back.
#define logLimited(Limit, Level, ...)                                                        \
  do {                                                                                        \
    uint64_t TcHeld_ = 0;                                                                     \
    if ((Limit).allow(::twochains::rt::nowNs(), TcHeld_) && ::twochains::rt::logEnabled(Level)) \
      ::twochains::rt::logMessage(Level,                                                      \
                                  ::twochains::rt::withSuppressed(__VA_ARGS__, TcHeld_));     \
  } while (0)

#endif
