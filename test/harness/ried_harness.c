/* Stands in for a ried on the receiver: state the test jams reach by name.
 * The harness compares it between injected and local runs. */
#include <stdint.h>

int32_t tc_example_array[1024];
int64_t tc_example_total;
int64_t tc_harness_log[64];
int64_t tc_harness_log_length;

void tc_harness_record(int64_t value) {
  if (tc_harness_log_length < 64)
    tc_harness_log[tc_harness_log_length++] = value;
}

int64_t tc_harness_scale(int64_t value, int64_t factor) { return value * factor; }
