/*
 * The pgveil_crypto addon's parts, each adding its functions to the module's exports (addon.c):
 * FF1 (ff1.c, ff1_prf.c, ff1_bytes.c), the token digests (digests.c) and the token seal over both
 * (token_seal.c).
 */
#ifndef PGVEIL_ADDON_H
#define PGVEIL_ADDON_H

#include "napi_checks.h"

/* Adds createContext, crypt and maxBytes. 1 on success. */
int ff1_define(napi_env env, napi_value exports);

/* Adds sha256, createMacKey and hmac. 1 on success. */
int digests_define(napi_env env, napi_value exports);

/* SHA-256 of message[0..length) into digest. 1 on success; 0 when OpenSSL fails or digests_define did not run. */
int digests_sha256_of(napi_env env, const uint8_t *message, size_t length, uint8_t digest[32]);

/* HMAC-SHA-256 under a createMacKey handle into digest. 1 on success, 0 when OpenSSL fails, -1 for another handle. */
int digests_hmac_of(napi_env env, napi_value key, const uint8_t *message, size_t length, uint8_t digest[32]);

/* Adds sealToken (token_seal.c); needs both parts above. 1 on success. */
int token_seal_define(napi_env env, napi_value exports);

#endif
