/*===- twochains/version.h - The Two-Chains version ------------------------===
 *
 * What this header was released with; tc_get_version() says what the
 * loaded library is. A program built against one minor version runs with
 * any library of the same major version and that minor or a later one:
 * each minor adds a version node to the export map and changes none
 * (README.md, "Versions").
 *===----------------------------------------------------------------------===*/
#ifndef TWOCHAINS_VERSION_H
#define TWOCHAINS_VERSION_H

#define TC_VERSION_MAJOR 0
#define TC_VERSION_MINOR 6
#define TC_VERSION_PATCH 0
/* One number that orders versions: 0x00MMmmpp. */
#define TC_VERSION_NUMBER(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))
#define TC_VERSION TC_VERSION_NUMBER(TC_VERSION_MAJOR, TC_VERSION_MINOR, TC_VERSION_PATCH)

#endif /* TWOCHAINS_VERSION_H */
