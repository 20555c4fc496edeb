/*===- twochains/local_vector.h - The Local-Function library's vector ------===
 *
 * `jamlink --shared` generates, in every Local-Function library, the vector
 * the receiver indexes by element ID. This is its layout.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TWOCHAINS_LOCAL_VECTOR_H
#define TWOCHAINS_LOCAL_VECTOR_H

#include <stdint.h>

#define TC_LOCAL_VECTOR_SYMBOL "tc_local_vector"
#define TC_LOCAL_VECTOR_ABI 1u

struct tc_local_element {
  const char *name;     /* NULL for IDs with no jam (rieds, retired IDs) */
  void *entry;          /* void (tc_jam_ctx_t *, void *, size_t) */
  void *payload_size;   /* size_t (const ARGS *), or NULL */
  void *payload_init;   /* size_t (const ARGS *, void *), or NULL */
};

struct tc_local_vector {
  uint32_t abi;         /* TC_LOCAL_VECTOR_ABI */
  uint32_t count;       /* highest element ID + 1 */
  const char *package;
  const struct tc_local_element *elements; /* [count], by element ID */
};

#endif /* TWOCHAINS_LOCAL_VECTOR_H */
