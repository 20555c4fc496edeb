/*===- wx_mappings.h - Counting mappings that are writable and executable ===*/
#ifndef TWOCHAINS_TEST_E2E_WX_MAPPINGS_H
#define TWOCHAINS_TEST_E2E_WX_MAPPINGS_H

#include <stdio.h>

/* Mappings of this process that are writable and executable at once; -1 if
 * /proc/self/maps cannot be read. */
static int writable_executable_mappings(void) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[512];
  int n = 0;
  if (!maps)
    return -1;
  while (fgets(line, sizeof line, maps)) {
    char perms[5] = "";
    if (sscanf(line, "%*x-%*x %4s", perms) == 1 && perms[1] == 'w' && perms[2] == 'x')
      n++;
  }
  fclose(maps);
  return n;
}

#endif
