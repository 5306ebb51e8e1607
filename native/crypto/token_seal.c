/*
 * A tokenise token sealed in one call, and opened as far as its tag in one (the layout:
 * src/engine/tokens/tokenFormat.ts): the packed value encrypted with FF1 in radix 256 under the
 * body key, tweak H‖S‖N; the tag, HMAC-SHA-256
 * under the tag key of everything before it, cut to 3 bytes; H‖S whitened with the SHA-256 of
 * everything after them. tokeniser.ts does the same in three calls (FF1, HMAC, SHA-256), which
 * stay the reference: outputs are identical, and this path is used only after it gave theirs.
 *
 * JS API:
 *   sealToken(ff1Handle, macKeyHandle, token: Uint8Array, tweakLength, bodyLength) -> undefined
 *     token[0..tweakLength) holds H‖S‖N and token[tweakLength..+bodyLength) the packed value; on
 *     return the value is encrypted in place, the tag follows it, and H‖S are whitened. Needs
 *     5 <= tweakLength <= 64, 3 <= bodyLength <= maxBytes, and `token` exactly tweakLength +
 *     bodyLength + 3 bytes long (the whitening hashes everything after H‖S, as TypeScript's does).
 *   openToken(macKeyHandle, token: Uint8Array) -> boolean
 *     The inverse's first half, for token bytes as a codec read them: H‖S are unwhitened in place
 *     (always), then whether the last 3 bytes are the tag of everything before them under this
 *     key (compared in constant time). The caller reads the header to know the key version the
 *     tag is under; the FF1 decryption of the body stays the caller's, batched. Needs a token
 *     of at least 11 bytes (the shortest: H‖S, a 3-byte body and the tag).
 * Every argument is checked; a bad one throws a TypeError or RangeError that names no byte.
 */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <string.h>

#include "addon.h"
#include "ff1_rounds.h"
#include "token_layout.h"

#define MAX_TWEAK_BYTES 64

static napi_value seal_token(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 5) return throw_type(env, "sealToken takes 5 arguments");
  Ff1Context *context = ff1_context_of(env, argv[0]);
  if (context == NULL) return throw_type(env, "sealToken: the first argument must be a handle from createContext");
  const void *mac_key = digests_mac_key_of(env, argv[1]);
  if (mac_key == NULL) return throw_type(env, "sealToken: the second argument must be a handle from createMacKey");
  void *token_data;
  size_t token_length;
  if (!typed_array(env, argv[2], napi_uint8_array, &token_data, &token_length)) return throw_type(env, "sealToken: the token must be a Uint8Array");
  uint32_t tweak_length, body_length;
  if (!integer_in(env, argv[3], PREFIX_BYTES, MAX_TWEAK_BYTES, &tweak_length)) return throw_range(env, "sealToken: tweakLength must be an integer from 5 to 64");
  if (!integer_in(env, argv[4], 3, MAX_BYTES_N, &body_length)) return throw_range(env, "sealToken: bodyLength must be an integer from 3 to maxBytes");
  size_t tagged_length = (size_t)tweak_length + body_length;
  if (token_length != tagged_length + TAG_BYTES) return throw_range(env, "sealToken: the token must be tweakLength + bodyLength + 3 bytes long");
  uint8_t *token = (uint8_t *)token_data;

  uint16_t plain[MAX_BYTES_N], sealed[MAX_BYTES_N];
  uint8_t digest[DIGEST_BYTES];
  for (uint32_t p = 0; p < body_length; p++) plain[p] = token[tweak_length + p];
  const Ff1Tweaks tweak = {token, tweak_length, NULL};
  int ok = ff1_crypt_radix256(context, body_length, plain, sealed, 1, &tweak, false);
  OPENSSL_cleanse(plain, body_length * sizeof(plain[0]));
  /* Whatever fails below, the plaintext is no longer in the token. */
  for (uint32_t p = 0; p < body_length; p++) token[tweak_length + p] = ok ? (uint8_t)sealed[p] : 0;
  OPENSSL_cleanse(sealed, body_length * sizeof(sealed[0]));
  ok = ok && digests_hmac_of(env, mac_key, token, tagged_length, digest);
  if (ok) {
    memcpy(token + tagged_length, digest, TAG_BYTES);
    ok = digests_sha256_of(env, token + PREFIX_BYTES, tagged_length + TAG_BYTES - PREFIX_BYTES, digest);
    for (int p = 0; p < PREFIX_BYTES && ok; p++) token[p] ^= digest[p];
  }
  OPENSSL_cleanse(digest, sizeof(digest));
  if (!ok) {
    ERR_clear_error();
    napi_throw_error(env, NULL, "sealToken: OpenSSL failed");
  }
  return NULL;
}

static napi_value open_token(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2) return throw_type(env, "openToken takes 2 arguments");
  const void *mac_key = digests_mac_key_of(env, argv[0]);
  if (mac_key == NULL) return throw_type(env, "openToken: the first argument must be a handle from createMacKey");
  void *token_data;
  size_t token_length;
  if (!typed_array(env, argv[1], napi_uint8_array, &token_data, &token_length)) return throw_type(env, "openToken: the token must be a Uint8Array");
  if (token_length < MIN_TOKEN_BYTES) return throw_range(env, "openToken: a token is at least 11 bytes");
  uint8_t *token = (uint8_t *)token_data;
  size_t tagged_length = token_length - TAG_BYTES;
  uint8_t digest[DIGEST_BYTES];
  int ok = digests_sha256_of(env, token + PREFIX_BYTES, token_length - PREFIX_BYTES, digest);
  for (int p = 0; p < PREFIX_BYTES && ok; p++) token[p] ^= digest[p];
  ok = ok && digests_hmac_of(env, mac_key, token, tagged_length, digest);
  int tagged = ok && CRYPTO_memcmp(digest, token + tagged_length, TAG_BYTES) == 0;
  OPENSSL_cleanse(digest, sizeof(digest));
  if (!ok) {
    ERR_clear_error();
    napi_throw_error(env, NULL, "openToken: OpenSSL failed");
    return NULL;
  }
  napi_value result;
  if (napi_get_boolean(env, tagged, &result) != napi_ok) return NULL;
  return result;
}

int token_seal_define(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"sealToken", NULL, seal_token, NULL, NULL, NULL, napi_enumerable, NULL},
      {"openToken", NULL, open_token, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  return napi_define_properties(env, exports, 2, properties) == napi_ok;
}
