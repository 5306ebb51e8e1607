/* The module's entry point: FF1 is required; the digests and the token seal are optional (TypeScript has all three). */
#include "addon.h"

static napi_value init(napi_env env, napi_value exports) {
  if (!ff1_define(env, exports)) return NULL;
  /* Without them JavaScript finds no sha256 export and hashes in TypeScript, and seals tokens there too. */
  if (digests_define(env, exports) && token_seal_define(env, exports)) token_unseal_define(env, exports);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
