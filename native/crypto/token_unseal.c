/*
 * sealToken's inverse (token_seal.c) for the tokens of one key version and scope: unwhitening,
 * the tag, the scope and the body's FF1, for one token or for many in one call, whose bodies are
 * then decrypted LANES at a time (as crypt does a group). tokeniser.ts does the same as an open
 * (openToken) and a batched FF1, which stay the reference (tokenUnseal.ts's unsealInTypeScript):
 * outcomes and bytes are identical, and this path is used only after it gave theirs.
 *
 * JS API:
 *   unsealToken(ff1Handle, macKeyHandle, token: Uint8Array, version, scopeId) -> number
 *     H‖S are unwhitened in place (unless the token is longer than any this takes: H‖S, a 16-byte
 *     nonce, a body of maxBytes and the tag); when the header names `version` (1 to 31), the
 *     layout holds a body of 3 to maxBytes bytes, the tag is the key's and S is `scopeId` (its 4
 *     bytes as a big-endian integer; both compared in constant time), the body is decrypted in
 *     place (FF1 radix 256, tweak H‖S‖N) and its first index returned (5 to 21). Otherwise -1:
 *     no token under this key (layout or tag); -2: a token of another scope; -3: not taken here
 *     (another key version, or a body longer than maxBytes): the caller opens it as openToken's
 *     callers do. Needs a token of at least 11 bytes; the caller wipes the decrypted body.
 *   unsealTokens(ff1Handle, macKeyHandle, tokens: Uint8Array, ends: Uint32Array, version, scopeId, outcomes: Int32Array) -> undefined
 *     unsealToken for each of 1 to 1024 tokens laid end to end in `tokens` (token j ends at
 *     ends[j], increasing, the last at tokens.length); outcomes[j] gets its outcome, with -1 for
 *     one shorter than 11 bytes and -3 for one longer than a body of maxBytes allows. `ends` is
 *     read once, and `outcomes` written once at the end: arrays that share memory with `tokens`
 *     or with each other change nothing the call relies on.
 * Every argument is checked; a bad one throws a TypeError or RangeError that names no byte.
 */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <stdio.h>
#include <string.h>

#include "addon.h"
#include "ff1_rounds.h"
#include "token_layout.h"

#define UNSEALED_NOT_A_TOKEN (-1)
#define UNSEALED_OTHER_SCOPE (-2)
#define UNSEALED_NOT_TAKEN (-3)
#define MAX_UNSEAL_TOKENS 1024
#define MAX_UNSEAL_TOKEN_BYTES (PREFIX_BYTES + MAX_NONCE_BYTES + MAX_BYTES_N + TAG_BYTES)

/* What unsealing needs besides the token: the keys, the version and the scope id's bytes. */
typedef struct {
  Ff1Context *context;
  const void *mac_key;
  uint32_t version;
  uint8_t scope[SCOPE_ID_BYTES];
} UnsealKeys;

/*
 * One token's bytes unwhitened in place and checked: the body's start when its body is to be
 * decrypted, else a negative outcome. *ok becomes 0 when OpenSSL fails.
 */
static int32_t open_in_place(napi_env env, const UnsealKeys *keys, uint8_t *token, size_t length, int *ok) {
  if (length < MIN_TOKEN_BYTES) return UNSEALED_NOT_A_TOKEN;
  if (length > MAX_UNSEAL_TOKEN_BYTES) return UNSEALED_NOT_TAKEN;
  uint8_t digest[DIGEST_BYTES];
  *ok = digests_sha256_of(env, token + PREFIX_BYTES, length - PREFIX_BYTES, digest);
  for (int p = 0; p < PREFIX_BYTES && *ok; p++) token[p] ^= digest[p];
  OPENSSL_cleanse(digest, sizeof(digest));
  if (!*ok || token_version(token[0]) != keys->version) return UNSEALED_NOT_TAKEN;
  size_t tagged_length = length - TAG_BYTES;
  size_t body_start = PREFIX_BYTES + token_nonce_length(token[0]);
  if (tagged_length < body_start + MIN_BODY_BYTES) return UNSEALED_NOT_A_TOKEN;
  if (tagged_length - body_start > MAX_BYTES_N) return UNSEALED_NOT_TAKEN;
  *ok = digests_hmac_of(env, keys->mac_key, token, tagged_length, digest);
  int tagged = *ok && CRYPTO_memcmp(digest, token + tagged_length, TAG_BYTES) == 0;
  OPENSSL_cleanse(digest, sizeof(digest));
  if (!*ok) return UNSEALED_NOT_TAKEN;
  if (!tagged) return UNSEALED_NOT_A_TOKEN;
  if (CRYPTO_memcmp(keys->scope, token + 1, SCOPE_ID_BYTES) != 0) return UNSEALED_OTHER_SCOPE;
  return (int32_t)body_start;
}

/*
 * An unseal call's `count` arguments into argv, and its keys: argv[0] and [1] the handles,
 * argv[at] the version and argv[at + 1] the scope id. 0, with a TypeError or RangeError pending
 * that names `what`, when one is bad.
 */
static int unseal_call(napi_env env, napi_callback_info info, size_t count, napi_value *argv, size_t at, const char *what, UnsealKeys *keys) {
  char message[96];
  size_t argc = count;
  uint32_t scope;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != count) {
    snprintf(message, sizeof(message), "%s takes %zu arguments", what, count);
  } else if ((keys->context = ff1_context_of(env, argv[0])) == NULL) {
    snprintf(message, sizeof(message), "%s: the first argument must be a handle from createContext", what);
  } else if ((keys->mac_key = digests_mac_key_of(env, argv[1])) == NULL) {
    snprintf(message, sizeof(message), "%s: the second argument must be a handle from createMacKey", what);
  } else if (!integer_in(env, argv[at], 1, 31, &keys->version)) {
    snprintf(message, sizeof(message), "%s: version must be an integer from 1 to 31", what);
    throw_range(env, message);
    return 0;
  } else if (!integer_in(env, argv[at + 1], 0, 4294967295.0, &scope)) {
    snprintf(message, sizeof(message), "%s: scopeId must be a 32-bit unsigned integer", what);
    throw_range(env, message);
    return 0;
  } else {
    for (int p = 0; p < SCOPE_ID_BYTES; p++) keys->scope[p] = (uint8_t)(scope >> (8 * (SCOPE_ID_BYTES - 1 - p)));
    return 1;
  }
  throw_type(env, message);
  return 0;
}

static napi_value throw_openssl(napi_env env, const char *what) {
  ERR_clear_error();
  napi_throw_error(env, NULL, what);
  return NULL;
}

static napi_value unseal_token(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  UnsealKeys keys;
  if (!unseal_call(env, info, 5, argv, 3, "unsealToken", &keys)) return NULL;
  void *token_data;
  size_t length;
  if (!typed_array(env, argv[2], napi_uint8_array, &token_data, &length)) return throw_type(env, "unsealToken: the token must be a Uint8Array");
  if (length < MIN_TOKEN_BYTES) return throw_range(env, "unsealToken: a token is at least 11 bytes");
  uint8_t *token = (uint8_t *)token_data;
  int ok = 1;
  int32_t outcome = open_in_place(env, &keys, token, length, &ok);
  if (ok && outcome > 0) {
    uint32_t n = (uint32_t)(length - TAG_BYTES - (size_t)outcome);
    uint16_t sealed[MAX_BYTES_N], plain[MAX_BYTES_N];
    uint8_t *body = token + outcome;
    for (uint32_t p = 0; p < n; p++) sealed[p] = body[p];
    const Ff1Tweaks tweak = {token, (size_t)outcome, NULL};
    ok = ff1_crypt_radix256(keys.context, n, sealed, plain, 1, &tweak, true);
    for (uint32_t p = 0; p < n; p++) body[p] = ok ? (uint8_t)plain[p] : 0;
    OPENSSL_cleanse(plain, n * sizeof(plain[0]));
  }
  if (!ok) return throw_openssl(env, "unsealToken: OpenSSL failed");
  napi_value result;
  if (napi_create_int32(env, outcome, &result) != napi_ok) return NULL;
  return result;
}

/*
 * The bodies of the opened tokens of body length n (listed from `first` through `next`), decrypted
 * LANES at a time and written back in place. 1 on success; on failure every such body is wiped.
 */
static int decrypt_bodies(const UnsealKeys *keys, uint8_t *tokens, const uint32_t *ends, const int32_t *outcomes,
                          const int16_t *next, int16_t first, uint32_t n) {
  uint16_t sealed[LANES * MAX_BYTES_N], plain[LANES * MAX_BYTES_N];
  uint8_t tweak_bytes[LANES * (PREFIX_BYTES + MAX_NONCE_BYTES)];
  uint32_t tweak_ends[LANES];
  int16_t members[LANES];
  int ok = 1;
  for (int16_t j = first; j >= 0;) {
    size_t count = 0, tweak_at = 0;
    for (; j >= 0 && count < LANES; j = next[j]) {
      uint8_t *token = tokens + (j == 0 ? 0 : ends[j - 1]);
      size_t body_start = (size_t)outcomes[j];
      memcpy(tweak_bytes + tweak_at, token, body_start);
      tweak_at += body_start;
      tweak_ends[count] = (uint32_t)tweak_at;
      for (uint32_t p = 0; p < n; p++) sealed[count * n + p] = token[body_start + p];
      members[count++] = j;
    }
    const Ff1Tweaks tweaks = {tweak_bytes, tweak_at, tweak_ends};
    ok = ok && ff1_crypt_radix256(keys->context, n, sealed, plain, count, &tweaks, true);
    for (size_t m = 0; m < count; m++) {
      uint8_t *body = tokens + (members[m] == 0 ? 0 : ends[members[m] - 1]) + outcomes[members[m]];
      for (uint32_t p = 0; p < n; p++) body[p] = ok ? (uint8_t)plain[m * n + p] : 0;
    }
    OPENSSL_cleanse(plain, count * n * sizeof(plain[0]));
  }
  return ok;
}

static napi_value unseal_tokens(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  UnsealKeys keys;
  if (!unseal_call(env, info, 7, argv, 4, "unsealTokens", &keys)) return NULL;
  void *tokens_data, *ends_data, *outcomes_data;
  size_t length, count, outcome_count;
  if (!typed_array(env, argv[2], napi_uint8_array, &tokens_data, &length)) return throw_type(env, "unsealTokens: tokens must be a Uint8Array");
  if (!typed_array(env, argv[3], napi_uint32_array, &ends_data, &count)) return throw_type(env, "unsealTokens: ends must be a Uint32Array");
  if (!typed_array(env, argv[6], napi_int32_array, &outcomes_data, &outcome_count)) return throw_type(env, "unsealTokens: outcomes must be an Int32Array");
  if (count < 1 || count > MAX_UNSEAL_TOKENS) return throw_range(env, "unsealTokens: from 1 to 1024 tokens");
  if (outcome_count != count) return throw_range(env, "unsealTokens: outcomes must have one entry per token");
  /* Copied before they are checked: unwhitening below may write memory the caller's array shares. */
  uint32_t ends[MAX_UNSEAL_TOKENS];
  int32_t outcomes[MAX_UNSEAL_TOKENS];
  memcpy(ends, ends_data, count * sizeof(ends[0]));
  for (size_t j = 0; j < count; j++) {
    if (ends[j] < (j == 0 ? 0 : ends[j - 1]) || ends[j] > length) return throw_range(env, "unsealTokens: ends must increase within tokens");
  }
  if (ends[count - 1] != length) return throw_range(env, "unsealTokens: the last token must end at tokens.length");
  uint8_t *tokens = (uint8_t *)tokens_data;

  /* Opened tokens listed by body length, so that each length's bodies decrypt together. */
  int16_t first_of_length[MAX_BYTES_N + 1], last_of_length[MAX_BYTES_N + 1], next[MAX_UNSEAL_TOKENS];
  for (int n = 0; n <= MAX_BYTES_N; n++) first_of_length[n] = last_of_length[n] = -1;
  int ok = 1;
  for (size_t j = 0; j < count && ok; j++) {
    size_t start = j == 0 ? 0 : ends[j - 1];
    outcomes[j] = open_in_place(env, &keys, tokens + start, ends[j] - start, &ok);
    if (!ok || outcomes[j] < 0) continue;
    uint32_t n = (uint32_t)(ends[j] - start - TAG_BYTES - (size_t)outcomes[j]);
    next[j] = -1;
    if (first_of_length[n] < 0) first_of_length[n] = (int16_t)j;
    else next[last_of_length[n]] = (int16_t)j;
    last_of_length[n] = (int16_t)j;
  }
  for (uint32_t n = MIN_BODY_BYTES; n <= MAX_BYTES_N && ok; n++) {
    if (first_of_length[n] >= 0) ok = decrypt_bodies(&keys, tokens, ends, outcomes, next, first_of_length[n], n);
  }
  if (!ok) {
    /* No body is left half done: every token's bytes are wiped. */
    OPENSSL_cleanse(tokens, length);
    return throw_openssl(env, "unsealTokens: OpenSSL failed");
  }
  memcpy(outcomes_data, outcomes, count * sizeof(outcomes[0]));
  return NULL;
}

int token_unseal_define(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"unsealToken", NULL, unseal_token, NULL, NULL, NULL, napi_enumerable, NULL},
      {"unsealTokens", NULL, unseal_tokens, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  return napi_define_properties(env, exports, 2, properties) == napi_ok;
}
