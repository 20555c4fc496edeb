/* Part of jam_hx_two_files: the same static names as two_files_a.c. */
static int counter = 1000;
static int step(void) { return counter += 7; }
int parts_b_next(void) { return step(); }
