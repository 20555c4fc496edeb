//===- Pmix.h - A job's addresses through PMIx ----------------------------===//
#ifndef TWOCHAINS_RUNTIME_JOB_PMIX_H
#define TWOCHAINS_RUNTIME_JOB_PMIX_H

#include "twochains/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace twochains::rt {

/// Whether a PMIx server launched this process (mpirun, prterun, srun):
/// read from the environment only, initialising nothing.
bool launchedByPmix();
/// Gives every rank every rank's bytes (Mine: the same size on every
/// rank). TC_OK, or TC_ERR_IO with Why (not logged).
tc_status_t pmixAllgather(const std::vector<uint8_t> &Mine, unsigned &Rank, unsigned &Size,
                          std::vector<std::vector<uint8_t>> &All, std::string &Why);
/// Ends PMIx if pmixAllgather initialised it.
void pmixFinalize();

} // namespace twochains::rt

#endif
