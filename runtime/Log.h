//===- Log.h - Reporting errors once, where they are found ----------------===//
//
// Every message goes through the application's log handler
// (tc_set_log_handler), by default "twochains: <level>: <message>" on
// stderr, and only at or below the log level (tc_set_log_level,
// TC_LOG_LEVEL=error|warn|info|debug; default warn).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_LOG_H
#define TWOCHAINS_RUNTIME_LOG_H

#include "twochains/twochains.h"

#include <string>

namespace twochains::rt {

void logMessage(tc_log_level_t Level, const std::string &Message);
inline void logError(const std::string &Message) { logMessage(TC_LOG_ERROR, Message); }
inline void logWarning(const std::string &Message) { logMessage(TC_LOG_WARN, Message); }
inline void logInfo(const std::string &Message) { logMessage(TC_LOG_INFO, Message); }
bool logEnabled(tc_log_level_t Level);

} // namespace twochains::rt

#endif
