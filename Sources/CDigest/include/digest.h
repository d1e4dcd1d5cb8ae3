#ifndef TOPREGIONS_DIGEST_H
#define TOPREGIONS_DIGEST_H

#include <stddef.h>

/// SHA-256 by libcrypto (OpenSSL), loaded with dlopen on first use: `libcrypto.so.3`, or
/// what the environment variable TOPREGIONS_LIBCRYPTO names.
/// Writes 32 bytes to `digest`; 0 on success, -1 when libcrypto cannot be used
/// (tr_digest_load_error says why).
int tr_sha256(const void *bytes, size_t count, unsigned char *digest);

/// "" once libcrypto is loaded, else why it cannot be.
const char *tr_digest_load_error(void);

#endif
