/*===- BaselineWork.c - The baselines' work: the jams' own source --------===*
 *
 * The UCX baselines do what the stdlib benchmark jams do, by running their
 * C source: included here, renamed onto this process's array and total,
 * and compiled by the clang that builds jams at the -O2 pkg-gen gives them
 * (bench/CMakeLists.txt). A C++ copy built by the host compiler measured
 * the compilers as well: g++ -O3 sums 4 integers in 9 instructions, clang
 * -O2 in 12, which at 8 KiB is some 200 ns a message.
 *
 *===---------------------------------------------------------------------===*/
#define tc_stdlib_array tc_perf_baseline_array
#define tc_stdlib_array_length tc_perf_baseline_array_length
#define tc_stdlib_total tc_perf_baseline_total
#define indirect_put_main tc_perf_baseline_indirect_put
#define indirect_put_payload_size tc_perf_baseline_indirect_put_payload_size
#define indirect_put_payload_init tc_perf_baseline_indirect_put_payload_init
#define server_side_sum_main tc_perf_baseline_server_side_sum
#include "benchmarks/jam_indirect_put.amc"
#include "benchmarks/jam_server_side_sum.amc"
