/*===- twochains/mpi.h - Joining a job from an MPI program -----------------===
 *
 * For programs that use MPI already: the job's ranks are the communicator's,
 * and tc_job_join's allgather is MPI_Allgather over it.
 *
 *   MPI_Init(&argc, &argv);
 *   tc_context_create(&params, &ctx);
 *   tc_context_add_package(ctx, pkg);
 *   tc_job_join_mpi(ctx, MPI_COMM_WORLD);
 *
 * Header-only: Two-Chains itself does not link MPI.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TWOCHAINS_MPI_H
#define TWOCHAINS_MPI_H

#include <mpi.h>
#include "twochains/twochains.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tc_allgather_fn over the communicator *(MPI_Comm *)arg. */
static inline int tc_mpi_allgather(const void *mine, void *all, size_t size, void *arg) {
  MPI_Comm comm = *(MPI_Comm *)arg;
  if (size > (size_t)0x7fffffff)
    return -1;
  return MPI_Allgather(mine, (int)size, MPI_BYTE, all, (int)size, MPI_BYTE, comm) ==
                 MPI_SUCCESS
             ? 0
             : -1;
}

/* tc_job_join with the communicator's ranks; params (may be NULL) give the
 * rest (connect_timeout_ms, listen_address). */
static inline tc_status_t tc_job_join_mpi_params(tc_context_t *context, MPI_Comm comm,
                                                 const tc_job_params_t *params) {
  int rank = 0, size = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return TC_ERR_INVALID_PARAM;
  tc_job_params_t p;
  if (params)
    p = *params;
  else {
    tc_job_params_t zero = {0};
    p = zero;
  }
  p.version = TC_JOB_PARAMS_VERSION;
  p.rank = (uint32_t)rank;
  p.size = (uint32_t)size;
  p.allgather = tc_mpi_allgather;
  p.allgather_arg = &comm;
  p.blobs = NULL;
  return tc_job_join(context, &p);
}

static inline tc_status_t tc_job_join_mpi(tc_context_t *context, MPI_Comm comm) {
  return tc_job_join_mpi_params(context, comm, NULL);
}

#ifdef __cplusplus
}
#endif

#endif /* TWOCHAINS_MPI_H */
