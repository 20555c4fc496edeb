/* Part of jam_hx_objects: a table of pointers into objects_lib.c (fixups
 * across objects), the strong definition of the entry's weak hook, a libc
 * call the entry makes too (one import), and its own static 'counter'. */
#include <stddef.h>
#include <string.h>
static int counter = 1000;
int lib_mix(int x);
int util_scale(int x) { return x * 3 + counter++; }
int hook(int x) { return x * 7; }
int (*const util_table[2])(int) = {lib_mix, util_scale};
void util_copy(void *to, const void *from, size_t n) { memmove(to, from, n); }
