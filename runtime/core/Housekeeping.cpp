//===- Housekeeping.cpp - Work the features registered for the control turn ===//
#include "core/Context.h"

namespace twochains::rt {

void addHousekeeping(CoreContext *Ctx, HousekeepingFn Fn) { Ctx->Housekeeping.push_back(Fn); }

void runHousekeeping(CoreContext *Ctx) {
  for (HousekeepingFn Fn : Ctx->Housekeeping)
    Fn(Ctx);
}

} // namespace twochains::rt
