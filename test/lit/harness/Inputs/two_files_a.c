/* Part of jam_hx_two_files: the same static names as two_files_b.c. */
static int counter = 1;
static int step(void) { return counter *= 3; }
int parts_b_next(void);
int parts_a_next(void) { return step() + parts_b_next(); }
