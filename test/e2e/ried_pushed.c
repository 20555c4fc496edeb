/* A ried that a sender drives over to the receiver: its initialiser runs
 * there when the runtime loads it. */
int tc_pushed_marker;

__attribute__((constructor)) static void pushed_init(void) { tc_pushed_marker = 4242; }
