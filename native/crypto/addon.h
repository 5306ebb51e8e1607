/*
 * The pgveil_crypto addon's parts, each adding its functions to the module's exports (addon.c):
 * FF1 (ff1.c, ff1_prf.c, ff1_bytes.c) and the token digests (digests.c).
 */
#ifndef PGVEIL_ADDON_H
#define PGVEIL_ADDON_H

#include "napi_checks.h"

/* Adds createContext, crypt and maxBytes. 1 on success. */
int ff1_define(napi_env env, napi_value exports);

/* Adds sha256, createMacKey and hmac. 1 on success. */
int digests_define(napi_env env, napi_value exports);

#endif
