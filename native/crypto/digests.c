/*
 * SHA-256 and HMAC-SHA-256 of short messages, for the tokenise tag, scope id and whitening hash
 * (src/engine/tokens/tokenFormat.ts), over OpenSSL's EVP (SHA extensions where the CPU has them).
 * A digest starts from a copied context rather than a fresh fetch, and a MAC key keeps its inner
 * and outer contexts after the padded key block, so a tag of a short message costs two
 * compressions (and, in OpenSSL 3, a small allocation per context copied). The TypeScript
 * SHA-256 (src/engine/crypto/sha256.ts) is the reference; outputs are identical.
 *
 * JS API:
 *   sha256Path: 'low-level' | 'evp', the path the digests below take in this process
 *   sha256(message: Uint8Array, length, digest: Uint8Array) -> undefined
 *     SHA-256 of message[0..length) into digest[0..32).
 *   createMacKey(key: Uint8Array) -> opaque handle (the two midstate contexts; the key bytes are
 *     not kept, the contexts are wiped by EVP_MD_CTX_free when the handle is collected)
 *   hmac(handle, message: Uint8Array, length, digest: Uint8Array) -> undefined
 *     HMAC-SHA-256 of message[0..length) into digest[0..32).
 * Every argument is checked; a bad one throws a TypeError or RangeError that names no byte.
 *
 * Where OpenSSL's low-level SHA-256 functions are found at load time (deprecated since 3.0, still
 * built, over the same block functions as EVP), digests run through them instead: their state is
 * a plain struct, so a MAC key's midstates are copied on the stack, where EVP_MD_CTX_copy_ex
 * allocates and frees — half the cost of a short message's HMAC. Looked up, not linked: an
 * OpenSSL without them leaves the EVP path, never an unresolved symbol.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
/* The low-level SHA-256 declarations (SHA256_CTX and its functions) are hidden at the 3.0 API level. */
#undef OPENSSL_API_COMPAT
#define OPENSSL_API_COMPAT 0x10101000L
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#if !defined(OPENSSL_NO_DEPRECATED_3_0) && !defined(_WIN32)
#define LOW_LEVEL_SHA256 1
#include <dlfcn.h>
#else
/* Headers built without the deprecated API: a stand-in type, never used (find_low_level finds nothing). */
typedef struct {
  unsigned int unused;
} SHA256_CTX;
#endif

#include "addon.h"

#define DIGEST_BYTES 32
#define SHA256_BLOCK 64

/*
 * Per module instance (each worker thread loads its own): the fetched digest and two contexts.
 * It is the addon's instance data (napi_set_instance_data): no other part may set it.
 */
typedef int (*Sha256Init)(SHA256_CTX *context);
typedef int (*Sha256Update)(SHA256_CTX *context, const void *data, size_t length);
typedef int (*Sha256Final)(unsigned char *digest, SHA256_CTX *context);

/* The low-level functions, all three or none. */
typedef struct {
  Sha256Init init;
  Sha256Update update;
  Sha256Final final;
} LowLevelSha256;

typedef struct {
  EVP_MD *md;
  EVP_MD_CTX *empty; /* initialised, nothing absorbed: copied to start a digest */
  EVP_MD_CTX *work;
  LowLevelSha256 low; /* init NULL: the EVP path */
} DigestState;

/* One path's midstates: the EVP contexts, or (with the low-level functions) the structs. */
typedef struct {
  EVP_MD_CTX *inner; /* after key ^ ipad */
  EVP_MD_CTX *outer; /* after key ^ opad */
  SHA256_CTX low_inner;
  SHA256_CTX low_outer;
  int low;
} MacKey;

/* Changed with MacKey's layout: a handle of another build of the addon in this process is refused. */
static const napi_type_tag MAC_KEY_TAG = {0x70677665696c6d61ULL, 0x636b65792d763032ULL};

static void free_state(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  DigestState *state = (DigestState *)data;
  if (state == NULL) return;
  EVP_MD_CTX_free(state->empty);
  EVP_MD_CTX_free(state->work);
  EVP_MD_free(state->md);
  free(state);
}

static void free_mac_key(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  MacKey *key = (MacKey *)data;
  if (key == NULL) return;
  EVP_MD_CTX_free(key->inner); /* clears the midstates */
  EVP_MD_CTX_free(key->outer);
  OPENSSL_cleanse(key, sizeof(*key));
  free(key);
}

static DigestState *state_of(napi_env env) {
  void *data = NULL;
  if (napi_get_instance_data(env, &data) != napi_ok) return NULL;
  return (DigestState *)data;
}

/* message[0..length) into digest[0..32), starting from `start` (the empty or a key's context). */
static int digest_from(DigestState *state, const EVP_MD_CTX *start, const uint8_t *message, size_t length, uint8_t *digest) {
  unsigned int written = 0;
  return EVP_MD_CTX_copy_ex(state->work, start) == 1
      && EVP_DigestUpdate(state->work, message, length) == 1
      && EVP_DigestFinal_ex(state->work, digest, &written) == 1
      && written == DIGEST_BYTES;
}

/* The same over the low-level functions, from a copy of `start` (the copy is wiped). */
static int low_digest_from(const LowLevelSha256 *low, const SHA256_CTX *start, const uint8_t *message, size_t length, uint8_t *digest) {
  SHA256_CTX context = *start;
  int ok = low->update(&context, message, length) == 1 && low->final(digest, &context) == 1;
  OPENSSL_cleanse(&context, sizeof(context));
  return ok;
}

/* SHA-256 of message[0..length) into digest[0..32), by whichever path the state has. */
static int plain_digest(DigestState *state, const uint8_t *message, size_t length, uint8_t *digest) {
  if (state->low.init == NULL) return digest_from(state, state->empty, message, length, digest);
  SHA256_CTX empty;
  return state->low.init(&empty) == 1 && low_digest_from(&state->low, &empty, message, length, digest);
}

/* Whether `symbol` lies in the same loaded object as `reference` (the OpenSSL whose EVP this addon uses). */
#if defined(LOW_LEVEL_SHA256)
static int same_object(const void *symbol, const void *reference) {
  Dl_info found, expected;
  return symbol != NULL && dladdr(symbol, &found) != 0 && dladdr(reference, &expected) != 0 && found.dli_fbase == expected.dli_fbase;
}
#endif

/*
 * OpenSSL's low-level SHA-256, when this process has all three functions in the OpenSSL that
 * serves EVP, EVP's SHA-256 comes from the default provider (not FIPS: the low-level functions
 * bypass providers), PGVEIL_NATIVE_SHA256 is not "evp" (read once, when the addon loads), and
 * they give SHA-256("abc"). Else none: the EVP path.
 */
static LowLevelSha256 find_low_level(const EVP_MD *md) {
  LowLevelSha256 none = {NULL, NULL, NULL};
#if !defined(LOW_LEVEL_SHA256)
  (void)md;
  return none;
#else
  const char *choice = getenv("PGVEIL_NATIVE_SHA256");
  if (choice != NULL && strcmp(choice, "evp") == 0) return none;
  const OSSL_PROVIDER *provider = md == NULL ? NULL : EVP_MD_get0_provider(md);
  const char *provider_name = provider == NULL ? NULL : OSSL_PROVIDER_get0_name(provider);
  if (EVP_default_properties_is_fips_enabled(NULL) || provider_name == NULL || strcmp(provider_name, "default") != 0) return none;
  void *init = dlsym(RTLD_DEFAULT, "SHA256_Init");
  void *update = dlsym(RTLD_DEFAULT, "SHA256_Update");
  void *final = dlsym(RTLD_DEFAULT, "SHA256_Final");
  const void *reference = (const void *)&EVP_MD_fetch;
  if (!same_object(init, reference) || !same_object(update, reference) || !same_object(final, reference)) return none;
  LowLevelSha256 low;
  /* Object pointers to function pointers, as dlsym's results are used (POSIX). */
  memcpy(&low.init, &init, sizeof(init));
  memcpy(&low.update, &update, sizeof(update));
  memcpy(&low.final, &final, sizeof(final));
  static const uint8_t ABC_DIGEST[DIGEST_BYTES] = {
      0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
      0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
  SHA256_CTX empty;
  uint8_t digest[DIGEST_BYTES];
  if (low.init(&empty) != 1 || !low_digest_from(&low, &empty, (const uint8_t *)"abc", 3, digest)
      || memcmp(digest, ABC_DIGEST, DIGEST_BYTES) != 0) {
    return none;
  }
  return low;
#endif
}

/* The (message, length, digest) arguments at argv[0..3). 1 when they are usable. */
static int message_arguments(napi_env env, napi_value *argv, uint8_t **message, size_t *length, uint8_t **digest) {
  void *message_data, *digest_data;
  size_t message_length, digest_length;
  double used;
  napi_valuetype type;
  if (!typed_array(env, argv[0], napi_uint8_array, &message_data, &message_length)) {
    throw_type(env, "digest: the message must be a Uint8Array");
    return 0;
  }
  /* Compared as doubles: a message may pass 2^32 bytes, beyond what integer_in converts. */
  if (napi_typeof(env, argv[1], &type) != napi_ok || type != napi_number || napi_get_value_double(env, argv[1], &used) != napi_ok
      || !(used >= 0 && used <= (double)message_length) || used != (double)(size_t)used) {
    throw_range(env, "digest: the length must be an integer within the message");
    return 0;
  }
  if (!typed_array(env, argv[2], napi_uint8_array, &digest_data, &digest_length) || digest_length < DIGEST_BYTES) {
    throw_type(env, "digest: the digest must be a Uint8Array of at least 32 bytes");
    return 0;
  }
  *message = (uint8_t *)message_data;
  *length = (size_t)used;
  *digest = (uint8_t *)digest_data;
  return 1;
}

static napi_value sha256(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 3) return throw_type(env, "sha256 takes 3 arguments");
  uint8_t *message, *digest;
  size_t length;
  if (!message_arguments(env, argv, &message, &length, &digest)) return NULL;
  DigestState *state = state_of(env);
  if (state == NULL || !plain_digest(state, message, length, digest)) {
    ERR_clear_error();
    napi_throw_error(env, NULL, "sha256: OpenSSL failed");
  }
  return NULL;
}

/* The low-level midstate after absorbing the key block xored with `pad`. 1 on success. */
static int padded_low_context(const LowLevelSha256 *low, const uint8_t block[SHA256_BLOCK], uint8_t pad, SHA256_CTX *context) {
  uint8_t padded[SHA256_BLOCK];
  for (int i = 0; i < SHA256_BLOCK; i++) padded[i] = block[i] ^ pad;
  int ok = low->init(context) == 1 && low->update(context, padded, SHA256_BLOCK) == 1;
  OPENSSL_cleanse(padded, sizeof(padded));
  return ok;
}

/* A context after absorbing the key block xored with `pad`. NULL on failure. */
static EVP_MD_CTX *padded_context(DigestState *state, const uint8_t block[SHA256_BLOCK], uint8_t pad) {
  uint8_t padded[SHA256_BLOCK];
  for (int i = 0; i < SHA256_BLOCK; i++) padded[i] = block[i] ^ pad;
  EVP_MD_CTX *context = EVP_MD_CTX_new();
  int ok = context != NULL && EVP_MD_CTX_copy_ex(context, state->empty) == 1 && EVP_DigestUpdate(context, padded, SHA256_BLOCK) == 1;
  OPENSSL_cleanse(padded, sizeof(padded));
  if (!ok) {
    EVP_MD_CTX_free(context);
    return NULL;
  }
  return context;
}

static napi_value create_mac_key(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1) return throw_type(env, "createMacKey takes one argument, the key");
  void *key;
  size_t key_length;
  if (!typed_array(env, argv[0], napi_uint8_array, &key, &key_length)) return throw_type(env, "createMacKey: the key must be a Uint8Array");
  DigestState *state = state_of(env);
  if (state == NULL) {
    napi_throw_error(env, NULL, "createMacKey: the addon is not initialised");
    return NULL;
  }
  /* RFC 2104: a key longer than a block is hashed first; a shorter one is padded with zeros. */
  uint8_t block[SHA256_BLOCK] = {0};
  int ok = 1;
  if (key_length > SHA256_BLOCK) ok = plain_digest(state, (const uint8_t *)key, key_length, block);
  else if (key_length > 0) memcpy(block, key, key_length);
  MacKey *mac = ok ? (MacKey *)calloc(1, sizeof(MacKey)) : NULL;
  if (mac != NULL && state->low.init != NULL) {
    mac->low = padded_low_context(&state->low, block, 0x36, &mac->low_inner) && padded_low_context(&state->low, block, 0x5c, &mac->low_outer);
    ok = mac->low;
  } else if (mac != NULL) {
    mac->inner = padded_context(state, block, 0x36);
    mac->outer = padded_context(state, block, 0x5c);
    ok = mac->inner != NULL && mac->outer != NULL;
  }
  OPENSSL_cleanse(block, sizeof(block));
  if (mac == NULL || !ok) {
    free_mac_key(env, mac, NULL);
    ERR_clear_error();
    napi_throw_error(env, NULL, "createMacKey: OpenSSL could not set up HMAC");
    return NULL;
  }
  return tagged_handle(env, mac, free_mac_key, &MAC_KEY_TAG, "createMacKey");
}

/* HMAC-SHA-256 of message[0..length) under `mac` into digest[0..32). 1 on success. */
static int mac_digest(DigestState *state, const MacKey *mac, const uint8_t *message, size_t length, uint8_t *digest) {
  uint8_t inner[DIGEST_BYTES];
  int ok;
  if (mac->low) {
    ok = state != NULL && state->low.init != NULL && low_digest_from(&state->low, &mac->low_inner, message, length, inner)
      && low_digest_from(&state->low, &mac->low_outer, inner, DIGEST_BYTES, digest);
  } else {
    ok = state != NULL && digest_from(state, mac->inner, message, length, inner)
      && digest_from(state, mac->outer, inner, DIGEST_BYTES, digest);
  }
  OPENSSL_cleanse(inner, sizeof(inner));
  return ok;
}

static napi_value hmac(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 4) return throw_type(env, "hmac takes 4 arguments");
  MacKey *mac = (MacKey *)handle_data(env, argv[0], &MAC_KEY_TAG);
  if (mac == NULL) return throw_type(env, "hmac: the first argument must be a handle from createMacKey");
  uint8_t *message, *digest;
  size_t length;
  if (!message_arguments(env, argv + 1, &message, &length, &digest)) return NULL;
  if (!mac_digest(state_of(env), mac, message, length, digest)) {
    ERR_clear_error();
    napi_throw_error(env, NULL, "hmac: OpenSSL failed");
  }
  return NULL;
}

int digests_sha256_of(napi_env env, const uint8_t *message, size_t length, uint8_t digest[32]) {
  DigestState *state = state_of(env);
  return state != NULL && plain_digest(state, message, length, digest);
}

const void *digests_mac_key_of(napi_env env, napi_value value) {
  return handle_data(env, value, &MAC_KEY_TAG);
}

int digests_hmac_of(napi_env env, const void *key, const uint8_t *message, size_t length, uint8_t digest[32]) {
  return mac_digest(state_of(env), (const MacKey *)key, message, length, digest);
}

int digests_define(napi_env env, napi_value exports) {
  DigestState *state = (DigestState *)calloc(1, sizeof(DigestState));
  if (state == NULL) return 0;
  state->md = EVP_MD_fetch(NULL, "SHA256", NULL);
  state->empty = EVP_MD_CTX_new();
  state->work = EVP_MD_CTX_new();
  state->low = find_low_level(state->md);
  if (state->md == NULL || state->empty == NULL || state->work == NULL || EVP_DigestInit_ex(state->empty, state->md, NULL) != 1
      || napi_set_instance_data(env, state, free_state, NULL) != napi_ok) {
    free_state(env, state, NULL);
    ERR_clear_error();
    return 0;
  }
  napi_value path;
  if (napi_create_string_utf8(env, state->low.init != NULL ? "low-level" : "evp", NAPI_AUTO_LENGTH, &path) != napi_ok) return 0;
  napi_property_descriptor properties[] = {
      {"sha256Path", NULL, NULL, NULL, NULL, path, napi_enumerable, NULL},
      {"sha256", NULL, sha256, NULL, NULL, NULL, napi_enumerable, NULL},
      {"createMacKey", NULL, create_mac_key, NULL, NULL, NULL, napi_enumerable, NULL},
      {"hmac", NULL, hmac, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  return napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties) == napi_ok;
}
