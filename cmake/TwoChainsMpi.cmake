# Tests launched as HPC jobs are: P processes started by mpirun, beside the
# PMIx server it runs (runtime/job/Pmix.cpp).
#
#   twochains_add_mpi_test(NAME <name> NP <n> COMMAND <exe> [<arg>...]
#                          [TIMEOUT <s>] [LABELS <label>...]
#                          [ENVIRONMENT <var>=<value>...])
#
# adds the CTest test <name>: mpirun ... -np <n> <exe> <arg>..., passing if
# every rank exits 0 (mpirun's status is the first failing rank's). <exe>
# may be a target's name, as in add_test. TIMEOUT defaults to 120 s; the
# labels always include "job". ENVIRONMENT is mpirun's, which the processes
# it starts on this node inherit. Without mpirun the test is not
# added and configure says so; scripts/install-deps.sh installs it
# (openmpi-bin), so CI has it.
#
# What Debian 12's Open MPI 4.1 (ORTE's mpirun) needs here, in a container,
# as root, 16 processes on 2 cores (TWOCHAINS_MPIRUN_FLAGS):
# - --allow-run-as-root: it refuses root otherwise (the environment's
#   OMPI_ALLOW_RUN_AS_ROOT=1 with OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 does too);
#   harmless for any other user.
# - --oversubscribe: without it mpirun refuses more processes than cores
#   ("not enough slots").
# - --bind-to none: at most 2 processes it binds to a core each, beyond
#   that to a socket; oversubscribed and shared with other jobs, a process
#   pinned to one busy core only waits longer. None lets the kernel spread
#   them.
# - The launcher: on one node mpirun forks its processes itself, yet its
#   rsh component still wants ssh or rsh on PATH ("plm_rsh_agent ... could
#   not be found"); openssh-client is a dependency of openmpi-bin, so it is
#   there. "--mca plm isolated" launches without it, on this node only.
# - Nothing else: the processes of these tests run no MPI transport (they
#   use PMIx only), and Debian's /etc/openmpi/openmpi-mca-params.conf
#   already turns off the UCX, OFI and openib components. An MPI program's
#   MPI_Allgather over shared memory (btl vader, single copy by CMA) also
#   worked with 16 ranks; where ptrace is forbidden, add
#   "--mca btl_vader_single_copy_mechanism none".
# Measured: 16 processes of a PMIx exchange start, fence and exit in about
# a second on this 2-core machine; no flag was needed for that beyond these.
find_program(TWOCHAINS_MPIRUN NAMES mpirun mpiexec
             DOC "mpirun that launches the job tests (Open MPI's, with a PMIx server)")
set(TWOCHAINS_MPIRUN_FLAGS --allow-run-as-root --oversubscribe --bind-to none
    CACHE STRING "mpirun's options before -np for the job tests (a ;-list)")
if(TWOCHAINS_MPIRUN)
  message(STATUS "Two-Chains: job tests run with ${TWOCHAINS_MPIRUN}")
else()
  message(STATUS "Two-Chains: mpirun not found (Debian: openmpi-bin): the job tests are not added")
endif()

function(twochains_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;NP;TIMEOUT" "COMMAND;LABELS;ENVIRONMENT" ${ARGN})
  if(NOT T_NAME OR NOT T_NP OR NOT T_COMMAND)
    message(FATAL_ERROR "twochains_add_mpi_test: NAME, NP and COMMAND are needed")
  endif()
  if(NOT TWOCHAINS_MPIRUN)
    message(STATUS "Two-Chains: ${T_NAME} not added: no mpirun")
    return()
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${TWOCHAINS_MPIRUN} ${TWOCHAINS_MPIRUN_FLAGS} -np ${T_NP} ${T_COMMAND})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  # PROCESSORS: CTest run with -j counts the test as NP processes' worth;
  # RUN_SERIAL would keep it from running beside anything, which a job
  # that shares cores need not.
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} PROCESSORS ${T_NP}
                       LABELS "job;${T_LABELS}")
  if(T_ENVIRONMENT)
    set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
  endif()
endfunction()
