/* Lists the package this project built, from its generated header. */
#include <stdio.h>
#include <twochains/packages/demo.h>

int main(void) {
  struct double_all_args args = {0, 0};
  printf("package %s (%.12s...), manifest %s\n", DEMO_PACKAGE_NAME,
         DEMO_PACKAGE_IDENTITY, DEMO_PACKAGE_MANIFEST);
  for (int id = 0; id < DEMO_ELEMENT_COUNT; id++)
    printf("  element %d: %s\n", id, demo_element_names[id]);
  printf("double_all takes struct double_all_args (%zu bytes)\n", sizeof args);
  return DEMO_DOUBLE_ALL == 2 ? 0 : 1;
}
