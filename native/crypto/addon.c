/* The module's entry point: FF1 is required; the digests are optional (TypeScript has both). */
#include "addon.h"

static napi_value init(napi_env env, napi_value exports) {
  if (!ff1_define(env, exports)) return NULL;
  /* Without them JavaScript finds no sha256 export and hashes in TypeScript. */
  digests_define(env, exports);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
