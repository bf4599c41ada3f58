/* test_normalize.c: placeholder until normalize.c lands. */
#include <stdio.h>

int main(void) {
  printf("1..0 # SKIP normalize not written yet\n");
  return 0;
}
