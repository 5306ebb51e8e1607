/* Argument checks the addon's N-API functions share (napi_checks.c). */
#ifndef PGVEIL_NAPI_CHECKS_H
#define PGVEIL_NAPI_CHECKS_H

#ifndef NAPI_VERSION
#define NAPI_VERSION 8
#endif
#include <node_api.h>
#include <stdint.h>

/* Throw, and return NULL for the caller to return. */
napi_value throw_type(napi_env env, const char *message);
napi_value throw_range(napi_env env, const char *message);

/* A typed array of type `want`: its data and element count. 1 when it is one. */
int typed_array(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length);

/* A number that is an integer in [min, max]. 1 when it is one. */
int integer_in(napi_env env, napi_value value, double min, double max, uint32_t *out);

#endif
