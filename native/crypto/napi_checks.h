/* Argument checks and handles the addon's N-API functions share (napi_checks.c). */
#ifndef PGVEIL_NAPI_CHECKS_H
#define PGVEIL_NAPI_CHECKS_H

#ifndef NAPI_VERSION
#define NAPI_VERSION 8
/*
 * `data` as a new opaque handle tagged `tag`, freed by `finalize` when collected; NULL with an
 * exception pending (and `data` freed) when it cannot be made. `what` names the caller in errors.
 */
napi_value tagged_handle(napi_env env, void *data, napi_finalize finalize, const napi_type_tag *tag, const char *what);

/* The data of a handle made by tagged_handle with `tag`; NULL for anything else. */
void *handle_data(napi_env env, napi_value value, const napi_type_tag *tag);

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

/*
 * `data` as a new opaque handle tagged `tag`, freed by `finalize` when collected; NULL with an
 * exception pending (and `data` freed) when it cannot be made. `what` names the caller in errors.
 */
napi_value tagged_handle(napi_env env, void *data, napi_finalize finalize, const napi_type_tag *tag, const char *what);

/* The data of a handle made by tagged_handle with `tag`; NULL for anything else. */
void *handle_data(napi_env env, napi_value value, const napi_type_tag *tag);

#endif
