//===- StatusString.h - What a status means, in words ---------------------===//
#ifndef TWOCHAINS_RUNTIME_BASE_STATUSSTRING_H
#define TWOCHAINS_RUNTIME_BASE_STATUSSTRING_H

#include "twochains/status.h"

namespace twochains::rt {

/// tc_status_string's text, for the runtime's own messages.
const char *statusString(tc_status_t Status);

} // namespace twochains::rt

#endif
