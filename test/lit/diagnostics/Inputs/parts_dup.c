int parts_shared(int x) { return x + 1; }
