/*===- twochains/package.h - Loading an installed package ------------------===
 *
 * A program loads each package it uses once, on the sender side, the
 * receiver side, or both. Loading checks the manifest and every file it
 * names (versions, hashes, images); the receiver side also loads the
 * package's rieds (running their initialisers), its Local-Function library,
 * and builds each jam's import table, naming any symbol it cannot find.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TWOCHAINS_PACKAGE_H
#define TWOCHAINS_PACKAGE_H

#include <stdint.h>
#include "twochains/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TC_PACKAGE_SENDER = 1u << 0,   /* images and sender-side helpers */
  TC_PACKAGE_RECEIVER = 1u << 1  /* rieds, Local-Function library, import tables */
};

#define TC_PACKAGE_PARAMS_VERSION 1u

typedef struct tc_package_params {
  uint32_t version;      /* TC_PACKAGE_PARAMS_VERSION */
  uint32_t roles;        /* TC_PACKAGE_SENDER and/or TC_PACKAGE_RECEIVER */
  const char *prefix;    /* the install prefix */
  const char *name;      /* the package name */
  const char *isa;       /* "x86_64" or "aarch64"; NULL: this machine's */
} tc_package_params_t;

typedef struct tc_package tc_package_t;

/* On success *package is set; on failure it is untouched and the reason was
 * logged once, on stderr, with the file and line or the symbol and jam. */
tc_status_t tc_package_load(const tc_package_params_t *params, tc_package_t **package);
void tc_package_unload(tc_package_t *package);

/* The package identity (hex SHA-256); both sides must load the same one. */
const char *tc_package_identity(const tc_package_t *package);

/* The ID of a named element; TC_ERR_UNKNOWN_ELEMENT if there is none. */
tc_status_t tc_package_find(const tc_package_t *package, const char *element, uint32_t *id);

/* The address of a variable or function one of the package's rieds defines
 * (the package loaded with TC_PACKAGE_RECEIVER, which loads the rieds), or
 * NULL: the state jams keep, for the application to read, without dlsym. */
void *tc_package_symbol(const tc_package_t *package, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* TWOCHAINS_PACKAGE_H */
