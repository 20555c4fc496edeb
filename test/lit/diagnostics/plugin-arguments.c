// RUN: not %jamcc -fplugin-arg-twochains-colour=blue -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not %jamcc -fplugin-arg-twochains-mode=remote -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not %jamcc -fplugin-arg-twochains-mode=local -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACKAGE
// RUN: %jamcc -fplugin-arg-twochains-help -fplugin-arg-twochains-element=x -c %s -o /dev/null | FileCheck %s --check-prefix=HELP
#include <twochains/jam.h>
void x_main(tc_jam_ctx_t *ctx, void *payload, size_t size) {}

// UNKNOWN: error: unknown Two-Chains plugin argument 'colour=blue' (see -fplugin-arg-twochains-help)
// MODE: error: invalid Two-Chains plugin mode 'remote': expected 'inject' or 'local'
// PACKAGE: error: local mode needs a package name: -fplugin-arg-twochains-package=<name>
// HELP: Two-Chains jam plugin: -fplugin-arg-twochains-<arg>
// HELP: mode=inject|local
