//===- Log.cpp ------------------------------------------------------------===//
#include "base/Log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

const char *levelName(tc_log_level_t Level) {
  switch (Level) {
  case TC_LOG_ERROR: return "error";
  case TC_LOG_WARN: return "warning";
  case TC_LOG_INFO: return "info";
  case TC_LOG_DEBUG: return "debug";
  }
  return "?";
}

void printToStderr(tc_log_level_t Level, const char *Message, void *) {
  std::fprintf(stderr, "twochains: %s: %s\n", levelName(Level), Message);
}

std::mutex HandlerLock;
tc_log_fn Handler = printToStderr;
void *HandlerArg = nullptr;

/// From TC_LOG_LEVEL the first time it is asked, unless set before.
std::atomic<int> Level{-1};

int levelFromEnvironment() {
  const char *Env = std::getenv("TC_LOG_LEVEL");
  if (!Env || !*Env)
    return TC_LOG_WARN;
  for (int L = TC_LOG_ERROR; L <= TC_LOG_DEBUG; ++L)
    if (!std::strcmp(Env, levelName(tc_log_level_t(L))) ||
        (L == TC_LOG_WARN && !std::strcmp(Env, "warn")))
      return L;
  std::fprintf(stderr, "twochains: warning: TC_LOG_LEVEL='%s' is not error, warn, info or "
                       "debug: using warn\n", Env);
  return TC_LOG_WARN;
}

int currentLevel() {
  int L = Level.load(std::memory_order_relaxed);
  if (L < 0) {
    int Expected = -1;
    Level.compare_exchange_strong(Expected, levelFromEnvironment());
    L = Level.load(std::memory_order_relaxed);
  }
  return L;
}

} // namespace

namespace twochains::rt {

bool logEnabled(tc_log_level_t L) { return int(L) <= currentLevel(); }

std::string withSuppressed(const std::string &Message, uint64_t Held) {
  if (!Held)
    return Message;
  return Message + " (" + std::to_string(Held) + " more like it suppressed)";
}

void logMessage(tc_log_level_t L, const std::string &Message) {
  if (!logEnabled(L))
    return;
  std::lock_guard<std::mutex> G(HandlerLock);
  Handler(L, Message.c_str(), HandlerArg);
}

} // namespace twochains::rt

extern "C" tc_log_fn tc_set_log_handler(tc_log_fn Fn, void *Arg) {
  std::lock_guard<std::mutex> G(HandlerLock);
  tc_log_fn Old = Handler == printToStderr ? nullptr : Handler;
  Handler = Fn ? Fn : printToStderr;
  HandlerArg = Fn ? Arg : nullptr;
  return Old;
}

extern "C" tc_status_t tc_set_log_level(tc_log_level_t L) {
  if (int(L) < TC_LOG_ERROR || int(L) > TC_LOG_DEBUG)
    return TC_ERR_INVALID_PARAM;
  Level.store(int(L), std::memory_order_relaxed);
  return TC_OK;
}
