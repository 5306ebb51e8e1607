/*
 * The socket addon's N-API surface: adopt(fd, onEvent), setReading, write, pair, shutdown,
 * pendingBytes, close, readBuffer and forwardSlot (src/proxy/nativeSockets/socketAddon.ts types them), the per-environment
 * state and its teardown. Every argument is checked here; the poll/send core is socket_io.c.
 */
#define _GNU_SOURCE
#include "socket_io.h"

static const napi_type_tag SOCKET_TAG = { 0x70677665696c736fULL, 0x636b6574494f0001ULL };

static napi_value throw_error(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value int_value(napi_env env, int32_t value) {
  napi_value result;
  return napi_create_int32(env, value, &result) == napi_ok ? result : NULL;
}

static struct native_socket *socket_of(napi_env env, napi_value value) {
  bool tagged = false;
  void *data = NULL;
  if (napi_check_object_type_tag(env, value, &SOCKET_TAG, &tagged) != napi_ok || !tagged) return NULL;
  if (napi_get_value_external(env, value, &data) != napi_ok) return NULL;
  return (struct native_socket *)data;
}

/* The socket in argv[0] (an exception is pending when it is not one); the other arguments in argv[1..]. */
static struct native_socket *arguments(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    throw_error(env, "missing arguments");
    return NULL;
  }
  struct native_socket *s = socket_of(env, argv[0]);
  if (s == NULL) throw_error(env, "not a socket of this addon");
  return s;
}

/* adopt(fd, onEvent): a socket over a duplicate of `fd`, not reading yet. */
static napi_value adopt(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd = -1;
  napi_valuetype callback_type = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2
      || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0
      || napi_typeof(env, argv[1], &callback_type) != napi_ok || callback_type != napi_function) {
    return throw_error(env, "adopt(fd, onEvent)");
  }
  struct io_env *io = NULL;
  if (napi_get_instance_data(env, (void **)&io) != napi_ok || io == NULL) return throw_error(env, "the addon was not initialised");
  int type = 0;
  socklen_t type_length = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_length) != 0 || type != SOCK_STREAM) return throw_error(env, "not a stream socket");
  struct native_socket *s = calloc(1, sizeof *s);
  if (s == NULL) return throw_error(env, "out of memory");
  s->io = io;
  s->env = env;
  s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (s->fd < 0) {
    free(s);
    return throw_error(env, "cannot duplicate the descriptor");
  }
  fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
  napi_value resource, name, handle;
  if (uv_poll_init(io->loop, &s->poll, s->fd) != 0) {
    close(s->fd);
    free(s);
    return throw_error(env, "cannot poll the descriptor");
  }
  s->poll.data = s;
  s->next = io->open;
  if (io->open) io->open->previous = s;
  io->open = s;
  if (napi_create_reference(env, argv[1], 1, &s->on_event) != napi_ok || napi_create_object(env, &resource) != napi_ok
      || napi_create_string_utf8(env, "pgveilSocket", NAPI_AUTO_LENGTH, &name) != napi_ok
      || napi_async_init(env, resource, name, &s->context) != napi_ok) {
    s->finalized = true; /* nothing in JavaScript holds it: freed once libuv lets the handle go */
    close_socket(s);
    return throw_error(env, "cannot keep the socket's callback");
  }
  if (napi_create_external(env, s, on_finalize, NULL, &handle) != napi_ok) {
    s->finalized = true;
    close_socket(s);
    return throw_error(env, "cannot make the socket's handle");
  }
  if (napi_type_tag_object(env, handle, &SOCKET_TAG) != napi_ok) {
    close_socket(s); /* the external's finalizer frees it */
    return throw_error(env, "cannot tag the socket's handle");
  }
  return handle;
}

/* setReading(socket, on): whether the socket is read (a paused stream stops asking). */
static napi_value set_reading(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  struct native_socket *s = arguments(env, info, 2, argv);
  bool on = false;
  if (s == NULL) return NULL;
  if (napi_get_value_bool(env, argv[1], &on) != napi_ok) return throw_error(env, "setReading(socket, boolean)");
  s->reading = on;
  update_events(s);
  return NULL;
}

/*
 * write(socket, bytes): 1 when all of it was sent, 0 when some waits here (a DRAIN follows), or a
 * negative errno (the socket has failed: nothing more is sent).
 */
static napi_value write_bytes(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  struct native_socket *s = arguments(env, info, 2, argv);
  if (s == NULL) return NULL;
  void *data = NULL;
  size_t length = 0;
  if (napi_get_buffer_info(env, argv[1], &data, &length) != napi_ok) return throw_error(env, "write(socket, buffer)");
  return int_value(env, send_after_pending(s, data, length));
}

/*
 * pair(socket, to): what DATA's callback on `socket` leaves in the forward slot is how many bytes of
 * the read to send on to `to` (null: none from now on). A socket forwards to one other and is
 * forwarded to by one.
 */
static napi_value pair(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  struct native_socket *s = arguments(env, info, 2, argv);
  if (s == NULL) return NULL;
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env, argv[1], &type) != napi_ok) return throw_error(env, "pair(socket, socket | null)");
  struct native_socket *to = NULL;
  if (type != napi_null) {
    to = socket_of(env, argv[1]);
    if (to == NULL || to == s) return throw_error(env, "pair(socket, socket | null)");
    if (to->closing) return NULL;
  }
  if (s->closing) return NULL;
  pair_sockets(s, to);
  return NULL;
}

/* shutdown(socket): a FIN after whatever waits; 0 or a negative errno. */
static napi_value shutdown_socket(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  struct native_socket *s = arguments(env, info, 1, argv);
  if (s == NULL) return NULL;
  if (s->closing) return int_value(env, -EPIPE);
  s->shut_after_send = true;
  return int_value(env, shut_if_asked(s));
}

/* pendingBytes(socket): bytes waiting for the kernel to take them. */
static napi_value pending_bytes(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  struct native_socket *s = arguments(env, info, 1, argv);
  if (s == NULL) return NULL;
  return int_value(env, (int32_t)(s->pending_to - s->pending_from));
}

/* close(socket): stops watching and closes the descriptor; unsent bytes are dropped. */
static napi_value close_native(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  struct native_socket *s = arguments(env, info, 1, argv);
  if (s == NULL) return NULL;
  close_socket(s);
  return NULL;
}

/* readBuffer(): the buffer DATA's bytes are in, shared by this environment's sockets (read during the callback only). */
static napi_value read_buffer(napi_env env, napi_callback_info info) {
  (void)info;
  struct io_env *io = NULL;
  napi_value buffer;
  if (napi_get_instance_data(env, (void **)&io) != napi_ok || io == NULL) return throw_error(env, "the addon was not initialised");
  if (napi_create_external_buffer(env, READ_BUFFER_BYTES, io->read_buffer, NULL, NULL, &buffer) != napi_ok) {
    return throw_error(env, "cannot share the read buffer");
  }
  return buffer;
}

/* forwardSlot(): 4 bytes, an int32 in the machine's order: what DATA's callback leaves there is forwarded (socket_io.c). */
static napi_value forward_slot(napi_env env, napi_callback_info info) {
  (void)info;
  struct io_env *io = NULL;
  napi_value buffer;
  if (napi_get_instance_data(env, (void **)&io) != napi_ok || io == NULL) return throw_error(env, "the addon was not initialised");
  if (napi_create_external_buffer(env, sizeof io->forward_bytes, &io->forward_bytes, NULL, NULL, &buffer) != napi_ok) {
    return throw_error(env, "cannot share the forward slot");
  }
  return buffer;
}

/*
 * The environment is going away (a worker thread ends): close what is still open, and let it go
 * once libuv has run every close callback (they call into this addon).
 */
static void on_env_cleanup(napi_async_cleanup_hook_handle hook, void *data) {
  struct io_env *io = (struct io_env *)data;
  io->cleanup_hook = hook;
  while (io->open) {
    struct native_socket *s = io->open;
    s->tearing_down = true;
    close_socket(s);
  }
  finish_cleanup_if_done(io);
}

static void on_env_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

static napi_value init(napi_env env, napi_value exports) {
  struct io_env *io = calloc(1, sizeof *io);
  if (io == NULL || napi_get_uv_event_loop(env, &io->loop) != napi_ok
      || napi_set_instance_data(env, io, on_env_finalize, NULL) != napi_ok) {
    free(io);
    return throw_error(env, "cannot initialise the socket addon");
  }
  if (napi_add_async_cleanup_hook(env, on_env_cleanup, io, NULL) != napi_ok) return throw_error(env, "cannot initialise the socket addon");
  const struct { const char *name; napi_callback fn; } functions[] = {
    { "adopt", adopt }, { "setReading", set_reading }, { "write", write_bytes }, { "shutdown", shutdown_socket },
    { "pendingBytes", pending_bytes }, { "close", close_native }, { "readBuffer", read_buffer }, { "pair", pair }, { "forwardSlot", forward_slot },
  };
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
    napi_value fn;
    if (napi_create_function(env, functions[i].name, NAPI_AUTO_LENGTH, functions[i].fn, NULL, &fn) != napi_ok
        || napi_set_named_property(env, exports, functions[i].name, fn) != napi_ok) {
      return throw_error(env, "cannot export the socket addon's functions");
    }
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
