/* Part of jam_hx_objects: calls into objects_util.c, a global the entry
 * reads, and a static named as the other files' are. */
static int counter = 1;
int lib_calls;
int util_scale(int x);
int lib_mix(int x) {
  ++lib_calls;
  counter += x;
  return util_scale(x) + counter;
}
