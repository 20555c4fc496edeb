//===- Housekeeping.cpp - Work the features registered for the control turn ===//
#include "core/CoreContext.h"

#include <algorithm>

namespace twochains::rt {

void addHousekeeping(CoreContext *Ctx, HousekeepingFn Fn) { Ctx->Housekeeping.push_back(Fn); }

void runHousekeeping(CoreContext *Ctx) {
  for (HousekeepingFn Fn : Ctx->Housekeeping)
    Fn(Ctx);
}

void addDueTime(CoreContext *Ctx, DueTimeFn Fn) { Ctx->DueTimes.push_back(Fn); }

uint64_t nextDueTime(CoreContext *Ctx) {
  uint64_t Due = NoDueTime;
  for (DueTimeFn Fn : Ctx->DueTimes)
    Due = std::min(Due, Fn(Ctx));
  return Due;
}

} // namespace twochains::rt
