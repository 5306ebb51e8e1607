/* Argument checks and handles the addon's N-API functions share. */
#include <stdio.h>

#include "napi_checks.h"

napi_value throw_type(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

napi_value throw_range(napi_env env, const char *message) {
  napi_throw_range_error(env, NULL, message);
  return NULL;
}

int typed_array(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length) {
  /* napi_get_typedarray_info refuses anything but a typed array; the ArrayBuffer and offset are not asked for. */
  napi_typedarray_type type;
  if (napi_get_typedarray_info(env, value, &type, length, data, NULL, NULL) != napi_ok) return 0;
  if (type != want) return 0;
  if (*length > 0 && *data == NULL) return 0;
  return 1;
}

int integer_in(napi_env env, napi_value value, double min, double max, uint32_t *out) {
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_number) return 0;
  double x;
  if (napi_get_value_double(env, value, &x) != napi_ok) return 0;
  /* In range first: converting a double past UINT32_MAX to uint32_t is undefined. */
  if (!(x >= min && x <= max && x <= (double)UINT32_MAX) || x != (double)(uint32_t)x) return 0;
  *out = (uint32_t)x;
  return 1;
}

napi_value tagged_handle(napi_env env, void *data, napi_finalize finalize, const napi_type_tag *tag, const char *what) {
  char message[96];
  napi_value handle;
  if (napi_create_external(env, data, finalize, NULL, &handle) != napi_ok) {
    finalize(env, data, NULL);
    snprintf(message, sizeof(message), "%s: could not create the handle", what);
    napi_throw_error(env, NULL, message);
    return NULL;
  }
  if (napi_type_tag_object(env, handle, tag) != napi_ok) {
    /* The external owns the data now: the collector frees it. */
    snprintf(message, sizeof(message), "%s: could not tag the handle", what);
    napi_throw_error(env, NULL, message);
    return NULL;
  }
  return handle;
}

void *handle_data(napi_env env, napi_value value, const napi_type_tag *tag) {
  napi_valuetype type;
  bool tagged = false;
  void *data = NULL;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external
      || napi_check_object_type_tag(env, value, tag, &tagged) != napi_ok || !tagged
      || napi_get_value_external(env, value, &data) != napi_ok) {
    return NULL;
  }
  return data;
}
