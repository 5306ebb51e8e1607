/*
 * The bytes of a tokenise token (src/engine/tokens/tokenFormat.ts): H (1: nonce length code in
 * the top 3 bits, key version in the low 5), S (4: scope id), N (0 or 4 to 16: nonce), E (>= 3:
 * the body), T (3: tag); H‖S whitened with the SHA-256 of everything after them.
 */
#ifndef PGVEIL_TOKEN_LAYOUT_H
#define PGVEIL_TOKEN_LAYOUT_H

#include <stdint.h>

#define PREFIX_BYTES 5
#define SCOPE_ID_BYTES 4
#define TAG_BYTES 3
#define MIN_BODY_BYTES 3
#define MAX_NONCE_BYTES 16
#define DIGEST_BYTES 32
#define MIN_TOKEN_BYTES (PREFIX_BYTES + MIN_BODY_BYTES + TAG_BYTES)

/* The nonce length H's top 3 bits code: none for 0, else 2 + 2 * code. */
static inline uint32_t token_nonce_length(uint8_t header) {
  uint32_t code = header >> 5;
  return code == 0 ? 0 : 2 + 2 * code;
}

static inline uint32_t token_version(uint8_t header) {
  return header & 0x1f;
}

#endif
