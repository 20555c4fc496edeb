//===- Pmix.h - A job's ranks from the PMIx server that launched it -------===//
//
// mpirun (Open MPI's ORTE or PRRTE), prterun and srun --mpi=pmix start each
// process of a job beside a PMIx server that knows the job: its namespace,
// the process's rank, the job's size, and a key-value store that a fence
// collects across the job. A job exchanges its address blobs through that
// store, as Open MPI's modex and OpenSHMEM's and UCC's bootstraps do:
// put, commit, fence collecting data, then get every rank's value.
//
// Without libpmix at build time, or without a server in the environment,
// every exchange fails at once, so the caller falls back to its other
// bootstraps (an allgather callback, address blobs).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_JOB_PMIX_H
#define TWOCHAINS_RUNTIME_JOB_PMIX_H

#include "twochains/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace twochains::rt {

/// Whether a PMIx server launched this process (mpirun, prterun, srun):
/// read from the environment only (PMIX_RANK, PMIX_NAMESPACE,
/// PMIX_SERVER_URI*...), initialising nothing, so a process not launched so
/// falls back at once.
bool launchedByPmix();

/// Gives every rank of the job every rank's bytes: Mine (the same size on
/// every rank) is put under a key of Two-Chains', committed, fenced with
/// data collection, and read back from every rank. Rank and Size: this
/// process's. TC_OK, or TC_ERR_IO with Why (not logged: the caller logs),
/// e.g. when built without PMIx or no server answers. Bounded: a rank whose
/// value has another size is an error naming that rank.
///
/// Collective: every rank of the job calls it, the same number of times
/// (each call has its own key). PMIx, once initialised, stays so until the
/// process exits (an exit handler ends it): a rank that ended and restarted
/// PMIx would look gone to the server in between and fail the others'
/// fence.
tc_status_t pmixAllgather(const std::vector<uint8_t> &Mine, unsigned &Rank, unsigned &Size,
                          std::vector<std::vector<uint8_t>> &All, std::string &Why);

/// Called at tc_context_destroy of a context that bootstrapped from PMIx.
/// It does not end PMIx: ending it is left to the process's exit (see
/// pmixAllgather), which a later context of the process may still need.
void pmixFinalize();

} // namespace twochains::rt

#endif
