/* What the job benches measure with: this process's resident memory and
 * the monotonic clock. */
#ifndef TWOCHAINS_BENCH_JOB_COMMON_H
#define TWOCHAINS_BENCH_JOB_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* This process's resident memory (VmRSS), in KiB. */
static inline double rssKiB(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  double kib = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6))
      kib = atof(line + 6);
  if (f)
    fclose(f);
  return kib;
}

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#endif
