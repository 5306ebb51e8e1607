/*
 * Socket I/O for a running session's two connections, on libuv poll handles of Node's own loop:
 * recv() into one buffer per Node environment, handed to JavaScript once per read; send() straight
 * from the caller's bytes, with what the kernel did not take kept here until the socket is
 * writable again. Node's stream machinery (a fresh buffer and a Readable/Writable round per read
 * and write, read()/write() through the VFS) costs a relay more CPU than the relaying itself;
 * every byte of protocol logic stays in JavaScript.
 *
 * A socket is adopted by duplicating a descriptor Node's socket holds; Node's socket is then
 * destroyed by the caller, so this addon owns the connection outright and no two libuv handles
 * ever watch one descriptor.
 *
 * Events reach JavaScript through the socket's callback, onEvent(kind, value), made with
 * napi_make_callback so that promises and nextTicks run after it as after Node's own callbacks:
 * DATA (value: bytes in the read buffer, valid during the call only), END (the peer closed its
 * side), DRAIN (everything waiting has been sent), ERROR (value: a negative errno). After ERROR
 * or END nothing more is read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* Node ignores SIGPIPE itself */
#endif

#define READ_BUFFER_BYTES (64 * 1024)

enum { EVENT_DATA = 0, EVENT_END = 1, EVENT_DRAIN = 2, EVENT_ERROR = 3 };

struct native_socket;

/* One per Node environment: the read buffer its sockets share and the sockets still open. */
struct io_env {
  char read_buffer[READ_BUFFER_BYTES];
  uv_loop_t *loop;
  struct native_socket *open;
  int closing;                                 /* handles whose close callback has not run yet */
  napi_async_cleanup_hook_handle cleanup_hook; /* set while the environment waits for them */
};

struct native_socket {
  struct io_env *io;
  napi_env env;
  napi_ref on_event;
  napi_async_context context;
  uv_poll_t poll;
  int fd;
  int events;           /* what the poll handle watches now */
  bool reading;         /* JavaScript wants reads */
  bool read_ended;      /* EOF or an error: nothing more to read */
  bool shut_after_send; /* end() came while bytes waited */
  bool write_shut;
  bool failed;          /* a send or recv failed: nothing more goes out */
  bool closing;         /* uv_close called, descriptor closed */
  bool handle_closed;   /* libuv is done with the poll handle */
  bool finalized;       /* JavaScript's handle is gone */
  bool tearing_down;    /* the environment is going away: no more N-API calls */
  char *pending;        /* bytes the kernel did not take yet: pending[from..to) */
  size_t pending_from, pending_to, pending_capacity;
  struct native_socket *previous, *next;
};

static const napi_type_tag SOCKET_TAG = { 0x70677665696c736fULL, 0x636b6574494f0001ULL };

static void on_poll(uv_poll_t *handle, int status, int events);

static napi_value throw_error(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value int_value(napi_env env, int32_t value) {
  napi_value result;
  return napi_create_int32(env, value, &result) == napi_ok ? result : NULL;
}

static void free_socket(struct native_socket *s) {
  free(s->pending);
  free(s);
}

static void unlink_socket(struct native_socket *s) {
  if (s->previous) s->previous->next = s->next;
  else if (s->io->open == s) s->io->open = s->next;
  if (s->next) s->next->previous = s->previous;
  s->previous = s->next = NULL;
}

/* The environment going away waits for this: the addon may be unloaded right after. */
static void finish_cleanup_if_done(struct io_env *io) {
  if (io->cleanup_hook == NULL || io->open != NULL || io->closing > 0) return;
  napi_async_cleanup_hook_handle hook = io->cleanup_hook;
  io->cleanup_hook = NULL;
  napi_remove_async_cleanup_hook(hook);
}

static void on_handle_closed(uv_handle_t *handle) {
  struct native_socket *s = (struct native_socket *)handle->data;
  struct io_env *io = s->io;
  s->handle_closed = true;
  if (!s->tearing_down) {
    if (s->on_event) napi_delete_reference(s->env, s->on_event);
    if (s->context) napi_async_destroy(s->env, s->context);
  }
  s->on_event = NULL;
  s->context = NULL;
  if (s->finalized) free_socket(s);
  io->closing--;
  finish_cleanup_if_done(io);
}

/* Stops watching and closes the descriptor (in that order: libuv forgets it before it is reused). */
static void close_socket(struct native_socket *s) {
  if (s->closing) return;
  s->closing = true;
  s->io->closing++;
  unlink_socket(s);
  uv_close((uv_handle_t *)&s->poll, on_handle_closed);
  close(s->fd);
  s->fd = -1;
}

static void on_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  struct native_socket *s = (struct native_socket *)data;
  s->finalized = true;
  if (!s->closing) close_socket(s);
  if (s->handle_closed) free_socket(s);
}

static void update_events(struct native_socket *s) {
  if (s->closing) return;
  int events = 0;
  if (s->reading && !s->read_ended) events |= UV_READABLE;
  if (s->pending_from < s->pending_to && !s->failed) events |= UV_WRITABLE;
  if (events == s->events) return;
  if (events == 0 || uv_poll_start(&s->poll, events, on_poll) != 0) {
    uv_poll_stop(&s->poll);
    events = 0;
  }
  s->events = events;
}

/* Calls onEvent(kind, value); a throw there is the process's uncaught exception, as in any callback. */
static void emit(struct native_socket *s, int kind, int32_t value) {
  if (s->on_event == NULL) return;
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value callback, args[2], result;
  /* The callback is its own receiver (an object at hand; it does not use `this`). */
  if (napi_get_reference_value(env, s->on_event, &callback) == napi_ok && callback != NULL
      && napi_create_int32(env, kind, &args[0]) == napi_ok && napi_create_int32(env, value, &args[1]) == napi_ok
      && napi_make_callback(env, s->context, callback, callback, 2, args, &result) != napi_ok) {
    bool pending = false;
    napi_value error;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending && napi_get_and_clear_last_exception(env, &error) == napi_ok) {
      napi_fatal_exception(env, error);
    }
  }
  napi_close_handle_scope(env, scope);
}

static bool keep_pending(struct native_socket *s, const char *bytes, size_t length) {
  if (s->pending_from == s->pending_to) s->pending_from = s->pending_to = 0;
  size_t waiting = s->pending_to - s->pending_from;
  if (s->pending_from > 0 && s->pending_to + length > s->pending_capacity) {
    memmove(s->pending, s->pending + s->pending_from, waiting);
    s->pending_from = 0;
    s->pending_to = waiting;
  }
  if (s->pending_to + length > s->pending_capacity) {
    size_t capacity = s->pending_capacity ? s->pending_capacity : 16 * 1024;
    while (capacity < s->pending_to + length) capacity *= 2;
    char *grown = realloc(s->pending, capacity);
    if (grown == NULL) return false;
    s->pending = grown;
    s->pending_capacity = capacity;
  }
  memcpy(s->pending + s->pending_to, bytes, length);
  s->pending_to += length;
  return true;
}

/* Sends bytes[0..length) as far as the kernel takes them: how many, or a negative errno. */
static ssize_t send_some(int fd, const char *bytes, size_t length) {
  size_t done = 0;
  while (done < length) {
    ssize_t sent = send(fd, bytes + done, length - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return -errno;
    }
    done += (size_t)sent;
  }
  return (ssize_t)done;
}

/* After the last waiting byte: the FIN end() asked for. 0 or a negative errno. */
static int shut_if_asked(struct native_socket *s) {
  if (!s->shut_after_send || s->write_shut || s->pending_from < s->pending_to) return 0;
  s->write_shut = true;
  return shutdown(s->fd, SHUT_WR) == 0 || errno == ENOTCONN ? 0 : -errno;
}

static void on_poll(uv_poll_t *handle, int status, int events) {
  struct native_socket *s = (struct native_socket *)handle->data;
  if (s->closing) return;
  if (status < 0) {
    /*
     * An error condition on the socket (a reset), which libuv reports as EBADF without the bytes
     * that came before it: those are read and delivered first (a server's last words before its
     * exit reset the connection), then the error the socket names.
     */
    int error = 0;
    while (s->reading && !s->read_ended && !s->closing) {
      ssize_t got = recv(s->fd, s->io->read_buffer, READ_BUFFER_BYTES, MSG_DONTWAIT);
      if (got > 0) {
        emit(s, EVENT_DATA, (int32_t)got);
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) error = -errno;
      break;
    }
    if (s->closing) return;
    int pending = 0;
    socklen_t length = sizeof pending;
    if (error == 0 && getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &pending, &length) == 0 && pending != 0) error = -pending;
    s->failed = s->read_ended = true;
    update_events(s);
    emit(s, EVENT_ERROR, error != 0 ? error : status);
    return;
  }
  if ((events & UV_WRITABLE) && s->pending_from < s->pending_to && !s->failed) {
    ssize_t sent = send_some(s->fd, s->pending + s->pending_from, s->pending_to - s->pending_from);
    int error = sent < 0 ? (int)sent : 0;
    if (sent > 0) s->pending_from += (size_t)sent;
    if (error == 0) error = shut_if_asked(s);
    if (error != 0) {
      s->failed = s->read_ended = true;
      update_events(s);
      emit(s, EVENT_ERROR, error);
      return;
    }
    if (s->pending_from == s->pending_to) {
      update_events(s);
      emit(s, EVENT_DRAIN, 0);
      if (s->closing) return;
    }
  }
  if ((events & UV_READABLE) && s->reading && !s->read_ended) {
    ssize_t got;
    do got = recv(s->fd, s->io->read_buffer, READ_BUFFER_BYTES, MSG_DONTWAIT);
    while (got < 0 && errno == EINTR);
    if (got > 0) {
      emit(s, EVENT_DATA, (int32_t)got);
    } else if (got == 0) {
      s->read_ended = true;
      update_events(s);
      emit(s, EVENT_END, 0);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      int error = -errno;
      s->failed = s->read_ended = true;
      update_events(s);
      emit(s, EVENT_ERROR, error);
    }
    if (s->closing) return;
  }
  update_events(s);
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
  if (s->closing || s->failed || s->write_shut || s->shut_after_send) return int_value(env, -EPIPE);
  if (s->pending_from < s->pending_to) {
    if (!keep_pending(s, data, length)) return int_value(env, -ENOMEM);
    return int_value(env, 0);
  }
  ssize_t sent = send_some(s->fd, data, length);
  if (sent < 0) {
    s->failed = true;
    update_events(s);
    return int_value(env, (int32_t)sent);
  }
  if ((size_t)sent == length) return int_value(env, 1);
  if (!keep_pending(s, (const char *)data + sent, length - (size_t)sent)) return int_value(env, -ENOMEM);
  update_events(s);
  return int_value(env, 0);
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
    { "pendingBytes", pending_bytes }, { "close", close_native }, { "readBuffer", read_buffer },
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
