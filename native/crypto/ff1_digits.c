/*
 * FF1 radix 10 over the digits of text fields where they lie: the read path's ssn and card
 * numbers, rows of a result set in a few frames. The kinds (src/engine/kinds) decide what a
 * spelling is and which tweak it takes; this only finds the fields that spell one given template
 * byte for byte, and runs the rounds of ff1.c over their digits, LANES fields at a time, with
 * no numeral leaving C. The TypeScript path (NumeralGroups, ccn.ts, digitSpellings.ts) is the
 * reference; outputs are identical.
 *
 * JS API:
 *   cryptDigitsInPlace(handle, template: Uint8Array, luhn: boolean, tweakBytes: Uint8Array,
 *                      decrypt: boolean, bytes: Uint8Array, starts: Int32Array, lengths: Int32Array,
 *                      handled: Uint8Array) -> number of fields rewritten
 *     Field i is bytes[starts[i], starts[i] + lengths[i]); fields come in order and do not overlap
 *     (so each is read before any write reaches it, as on the TypeScript path, which reads all
 *     first). A field is taken when handled[i] is 0 and it spells `template` (a byte per
 *     position: 0 a digit place, any other byte itself). Its digits
 *     (with luhn: all but the last, a Luhn check digit, which is then set so that the field's Luhn
 *     state is kept) go through FF1 radix 10 under tweakBytes, are written back in their places,
 *     and handled[i] becomes 1. 6 to 30 digits go through FF1; a template is at most 64 bytes.
 * Every argument is checked (a field outside `bytes` is a RangeError, not a skip); an error names
 * no value, tweak or key byte.
 */
#include <openssl/crypto.h>
#include <string.h>

#include "addon.h"
#include "ff1_rounds.h"

#define MAX_TEMPLATE 64
#define MIN_DIGITS 6
/* 10^15 < 2^53 <= 10^16: halves of at most 15 digits. */
#define MAX_DIGITS 30

static const uint8_t LUHN_DOUBLE[10] = {0, 2, 4, 6, 8, 1, 3, 5, 7, 9};

/* The check digit that makes body[0..n) followed by it Luhn-valid. */
static uint32_t luhn_check_digit(const uint16_t *body, uint32_t n) {
  uint32_t sum = 0;
  int doubled = 1; /* the digit next to the check digit is doubled */
  for (uint32_t j = n; j > 0; j--, doubled = !doubled) sum += doubled ? LUHN_DOUBLE[body[j - 1]] : body[j - 1];
  return (10 - sum % 10) % 10;
}

/* Whether two byte ranges overlap (compared as addresses). */
static int shares_memory(const void *a, size_t a_length, const void *b, size_t b_length) {
  uintptr_t a_start = (uintptr_t)a, b_start = (uintptr_t)b;
  return a_length > 0 && b_length > 0 && a_start < b_start + b_length && b_start < a_start + a_length;
}

/* Whether [start, start + length) lies within a buffer of `size` bytes. */
static int field_in(int32_t start, int32_t length, size_t size) {
  return start >= 0 && length >= 0 && (size_t)start + (size_t)length <= size;
}

/* Whether field[0..length) spells template[0..length) (digits at its 0 places); its digits into `digits`. */
static int spells(const uint8_t *field, const uint8_t *template, uint32_t length, uint16_t *digits) {
  uint32_t k = 0;
  for (uint32_t p = 0; p < length; p++) {
    uint8_t code = field[p];
    if (template[p] == 0) {
      if (code < '0' || code > '9') return 0;
      digits[k++] = (uint16_t)(code - '0');
    } else if (code != template[p]) {
      return 0;
    }
  }
  return 1;
}

/* Writes digits back into field's digit places; with luhn, the last place gets `check`. */
static void write_digits(uint8_t *field, const uint8_t *template, uint32_t length, const uint16_t *digits, int luhn, uint32_t check) {
  uint32_t k = 0;
  uint32_t last = length;
  if (luhn) {
    while (last > 0 && template[last - 1] != 0) last--;
    last--; /* the check digit's place (the template has one: checked by the caller) */
  }
  for (uint32_t p = 0; p < length; p++) {
    if (template[p] != 0) continue;
    field[p] = (uint8_t)('0' + (luhn && p == last ? check : digits[k++]));
  }
}

napi_value ff1_crypt_digits_in_place(napi_env env, napi_callback_info info) {
  napi_value argv[9];
  Ff1Context *context = ff1_call(env, info, 9, argv, "cryptDigitsInPlace");
  if (context == NULL) return NULL;
  void *template_data, *tweak_data, *bytes_data, *starts_data, *lengths_data, *handled_data;
  size_t template_length, tweak_length, bytes_length, count, lengths_count, handled_count;
  bool luhn, decrypt;
  if (!typed_array(env, argv[1], napi_uint8_array, &template_data, &template_length)) return throw_type(env, "cryptDigitsInPlace: template must be a Uint8Array");
  if (napi_get_value_bool(env, argv[2], &luhn) != napi_ok) return throw_type(env, "cryptDigitsInPlace: luhn must be a boolean");
  if (!typed_array(env, argv[3], napi_uint8_array, &tweak_data, &tweak_length)) return throw_type(env, "cryptDigitsInPlace: tweakBytes must be a Uint8Array");
  if (napi_get_value_bool(env, argv[4], &decrypt) != napi_ok) return throw_type(env, "cryptDigitsInPlace: decrypt must be a boolean");
  if (!typed_array(env, argv[5], napi_uint8_array, &bytes_data, &bytes_length)) return throw_type(env, "cryptDigitsInPlace: bytes must be a Uint8Array");
  if (!typed_array(env, argv[6], napi_int32_array, &starts_data, &count)) return throw_type(env, "cryptDigitsInPlace: starts must be an Int32Array");
  if (!typed_array(env, argv[7], napi_int32_array, &lengths_data, &lengths_count)) return throw_type(env, "cryptDigitsInPlace: lengths must be an Int32Array");
  if (!typed_array(env, argv[8], napi_uint8_array, &handled_data, &handled_count)) return throw_type(env, "cryptDigitsInPlace: handled must be a Uint8Array");
  if (lengths_count != count || handled_count != count) return throw_range(env, "cryptDigitsInPlace: starts, lengths and handled must have one entry per field");
  if (tweak_length > UINT32_MAX) return throw_range(env, "cryptDigitsInPlace: a tweak is limited to 2^32 - 1 bytes");
  if (template_length == 0 || template_length > MAX_TEMPLATE) return throw_range(env, "cryptDigitsInPlace: a template is 1 to 64 bytes");
  const uint8_t *template = (const uint8_t *)template_data;
  uint32_t places = 0;
  for (size_t p = 0; p < template_length; p++) places += template[p] == 0;
  uint32_t check_places = luhn ? 1 : 0;
  if (places < MIN_DIGITS + check_places || places > MAX_DIGITS + check_places) return throw_range(env, "cryptDigitsInPlace: FF1 here takes 6 to 30 digits");
  uint32_t n = places - check_places;
  /* The fields' places, flags and template are not in the bytes written: a write would move or change them. */
  if (shares_memory(starts_data, count * sizeof(int32_t), bytes_data, bytes_length)
      || shares_memory(lengths_data, count * sizeof(int32_t), bytes_data, bytes_length)
      || shares_memory(handled_data, count, bytes_data, bytes_length)
      || shares_memory(template_data, template_length, bytes_data, bytes_length)) {
    return throw_range(env, "cryptDigitsInPlace: starts, lengths, handled and template must not share memory with bytes");
  }
  const int32_t *starts = (const int32_t *)starts_data;
  const int32_t *lengths = (const int32_t *)lengths_data;
  /* Fields in order and apart, as a frame's rows are: every field is read before it is written. */
  size_t previous_end = 0;
  for (size_t i = 0; i < count; i++) {
    if (!field_in(starts[i], lengths[i], bytes_length)) return throw_range(env, "cryptDigitsInPlace: a field lies outside its buffer");
    if ((size_t)starts[i] < previous_end) return throw_range(env, "cryptDigitsInPlace: fields must come in order and not overlap");
    previous_end = (size_t)starts[i] + (size_t)lengths[i];
  }

  uint32_t u = n / 2, v = n - u;
  uint64_t modulus_u = 1, modulus_v = 1;
  for (uint32_t p = 0; p < v; p++) {
    modulus_v *= 10;
    if (p < u) modulus_u = modulus_v;
  }
  uint8_t *bytes = (uint8_t *)bytes_data;
  uint8_t *handled = (uint8_t *)handled_data;
  const Ff1Tweaks tweaks = {(const uint8_t *)tweak_data, tweak_length, NULL};
  uint16_t input[LANES * (MAX_DIGITS + 1)], output[LANES * MAX_DIGITS];
  size_t field_of[LANES], start_of[LANES];
  uint8_t delta[LANES];
  size_t rewritten = 0;
  int ok = 1;
  for (size_t i = 0; i < count && ok;) {
    /* Gather up to LANES fields that spell the template, each value's digits n apart. */
    size_t lanes = 0;
    for (; i < count && lanes < LANES; i++) {
      /* Read once and checked again: another thread (a SharedArrayBuffer) may have changed it. */
      int32_t start = starts[i], length = lengths[i];
      if (handled[i] != 0 || (size_t)length != template_length || !field_in(start, length, bytes_length)) continue;
      uint16_t *digits = input + lanes * n;
      /* Room for n + 1 digits: the check digit lands one past the body, before the next lane's. */
      if (!spells(bytes + start, template, (uint32_t)template_length, digits)) continue;
      if (luhn) delta[lanes] = (uint8_t)((digits[n] + 10 - luhn_check_digit(digits, n)) % 10);
      start_of[lanes] = (size_t)start;
      field_of[lanes++] = i;
    }
    if (lanes == 0) break;
    const Ff1Values values = {input, output, NULL, NULL};
    ok = ff1_crypt_lanes(context, 10, n, modulus_u, modulus_v, &tweaks, lanes, decrypt, &values);
    for (size_t j = 0; j < lanes && ok; j++) {
      const uint16_t *digits = output + j * n;
      uint32_t check = luhn ? (luhn_check_digit(digits, n) + delta[j]) % 10 : 0;
      write_digits(bytes + start_of[j], template, (uint32_t)template_length, digits, luhn, check);
      handled[field_of[j]] = 1;
    }
    rewritten += lanes;
  }
  /* No digits of a value left on the stack. */
  OPENSSL_cleanse(input, sizeof(input));
  OPENSSL_cleanse(output, sizeof(output));
  OPENSSL_cleanse(delta, sizeof(delta));
  if (!ok) {
    napi_throw_error(env, NULL, "cryptDigitsInPlace: OpenSSL AES failed");
    return NULL;
  }
  napi_value result;
  if (napi_create_double(env, (double)rewritten, &result) != napi_ok) return NULL;
  return result;
}
