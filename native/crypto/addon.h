/*
 * The pgveil_crypto addon's parts, each adding its functions to the module's exports (addon.c):
 * FF1 (ff1.c, ff1_prf.c, ff1_bytes.c), the token digests (digests.c) and the token seal and unseal
 * over both (token_seal.c, token_unseal.c).
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

/* The key behind a createMacKey handle; NULL for anything else. */
const void *digests_mac_key_of(napi_env env, napi_value value);

/* HMAC-SHA-256 under a key from digests_mac_key_of into digest. 1 on success; 0 when OpenSSL fails. */
int digests_hmac_of(napi_env env, const void *key, const uint8_t *message, size_t length, uint8_t digest[32]);

/* Adds sealToken and openToken (token_seal.c); needs both parts above. 1 on success. */
int token_seal_define(napi_env env, napi_value exports);

/* Adds unsealToken and unsealTokens (token_unseal.c); needs FF1 and the digests. 1 on success. */
int token_unseal_define(napi_env env, napi_value exports);

#endif
