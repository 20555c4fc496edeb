/*===- Version.c - tc_get_version -----------------------------------------===*/
#include "twochains/twochains.h"

#define TC_STRINGIFY2(x) #x
#define TC_STRINGIFY(x) TC_STRINGIFY2(x)

unsigned tc_get_version(void) { return TC_VERSION; }

const char *tc_get_version_string(void) {
  return TC_STRINGIFY(TC_VERSION_MAJOR) "." TC_STRINGIFY(TC_VERSION_MINOR) "." TC_STRINGIFY(
      TC_VERSION_PATCH);
}
