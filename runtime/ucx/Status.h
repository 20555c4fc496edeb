//===- Status.h - UCX's status as the runtime's ---------------------------===//
#ifndef TWOCHAINS_RUNTIME_UCX_STATUS_H
#define TWOCHAINS_RUNTIME_UCX_STATUS_H

#include "twochains/status.h"

#include <ucs/type/status.h>

namespace twochains::rt {

/// The one mapping of UCX's status codes to the API's: what the caller can
/// act on keeps its meaning; every failure of the transport is TC_ERR_IO.
inline tc_status_t statusOfUcs(ucs_status_t St) {
  switch (St) {
  case UCS_OK: return TC_OK;
  case UCS_ERR_NO_MEMORY: return TC_ERR_NO_MEMORY;
  case UCS_ERR_INVALID_PARAM: return TC_ERR_INVALID_PARAM;
  case UCS_ERR_TIMED_OUT: return TC_ERR_TIMED_OUT;
  default: return TC_ERR_IO;
  }
}

} // namespace twochains::rt

#endif
