/* test_sha256.c: SHA-256 against the FIPS 180-4 example vectors (NIST's published
 * digests), plus messages whose lengths straddle the padding boundary (55, 56, 63, 64
 * bytes) checked against digests computed with Python's hashlib. */
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "tap.h"

static void check(const void *msg, size_t len, const char *want, const char *name) {
  char hex[65];
  ns_sha256_hex(msg, len, hex);
  tap_ok(strcmp(hex, want) == 0, "%s", name);
  if (strcmp(hex, want) != 0) tap_diag("  got  %s\n#   want %s", hex, want);
}

int main(void) {
  check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "empty string");
  check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "\"abc\"");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check(m448, strlen(m448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        "448-bit message");
  const char *m896 =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
      "klmnopqrlmnopqrsmnopqrstnopqrstu";
  check(m896, strlen(m896), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
        "896-bit message");
  char *million = malloc(1000000);
  memset(million, 'a', 1000000);
  check(million, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
        "one million 'a'");
  free(million);

  /* Padding edges: 55 bytes fit the length in one block, 56 need a second. */
  char a64[64];
  memset(a64, 'a', sizeof a64);
  check(a64, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318", "55 x 'a'");
  check(a64, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a", "56 x 'a'");
  check(a64, 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34", "63 x 'a'");
  check(a64, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb", "64 x 'a'");

  /* Raw bytes, including a zero byte, hashed as bytes and not as a C string. */
  const unsigned char bin[4] = {0x00, 0xff, 0x10, 0x80};
  check(bin, 4, "a33bb2aed757bc839807d7a9deab0688c3cf06d36e53cb428f2e539c8dc76c5b",
        "bytes 00 ff 10 80");

  (void)tap_close; /* tap.h helper unused here */

  /* ns_sha256 gives the raw bytes the hex spells. */
  unsigned char d[32];
  ns_sha256("abc", 3, d);
  tap_ok(d[0] == 0xba && d[1] == 0x78 && d[31] == 0xad, "raw digest bytes of \"abc\"");
  return tap_done();
}
