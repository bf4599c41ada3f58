/* sha256.h: SHA-256 (FIPS 180-4) of a byte string, for seeds derived from claim names. */
#ifndef NS_SHA256_H
#define NS_SHA256_H

#include <stddef.h>
#include <stdint.h>

void ns_sha256(const void *data, size_t len, uint8_t digest[32]);
/* Lowercase hex digest into hex[65] (NUL-terminated). */
void ns_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
