// The element name comes from jam_<name>.amc or from the plugin argument.
// RUN: not %jamcc -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONAME
// RUN: not %jamcc -fplugin-arg-twochains-element=bad-name -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADNAME
// RUN: %jamcc -fplugin-arg-twochains-element=renamed -c %s -o %t.o
// RUN: llvm-readelf -p .tc.jam %t.o | FileCheck %s --check-prefix=RENAMED
#include <twochains/jam.h>

void renamed_main(tc_jam_ctx_t *ctx, void *payload, size_t size) {}

// NONAME: element-name.c:1:1: error: cannot tell the jam's element name from '{{.*}}element-name.c': name the file jam_<name>.amc or pass -fplugin-arg-twochains-element=<name>
// BADNAME: error: invalid jam element name 'bad-name': use letters, digits and '_'
// RENAMED: element=renamed
