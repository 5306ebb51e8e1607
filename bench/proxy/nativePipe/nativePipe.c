/*
 * A byte relay in C inside Node's event loop: the floor for a pgveil whose byte path were native
 * (a framer in C handing JavaScript only the messages it acts on). It accepts on 127.0.0.1, opens
 * one connection to PostgreSQL per client and relays both ways with recv/send on uv_poll handles
 * of Node's own loop: no JavaScript per read or write. It walks the message headers as it relays
 * (type byte and length, across chunk boundaries) as a framer must, and closes a pair on a length
 * under 4 or over 1 GiB. A reference for the benchmark only: upstream connects block (loopback),
 * startup packets are not parsed (SSL and GSS encryption requests, whose one-byte answers are not
 * messages, are not expected: the benchmark turns both off), and nothing is logged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#define CHUNK_BYTES (64 * 1024)
#define MAX_MESSAGE_BYTES (1u << 30)

struct pair;

/* One direction: bytes read from `from` go to `to`; what `to` did not take waits in `pending`. */
struct direction {
  struct pair *pair;
  int from_index;
  char *pending;
  size_t pending_from, pending_to;
  /* Framing state: bytes of the current header seen (0..4 of the length after the type), the message's bytes still to pass. */
  int header_seen;
  uint32_t length;
  uint64_t message_remaining;
  int startup; /* the client's first message has no type byte */
};

struct end {
  uv_poll_t poll;
  int fd;
  int events;
};

struct pair {
  int id;
  struct end ends[2]; /* 0: client, 1: upstream */
  struct direction directions[2]; /* 0: client → upstream, 1: upstream → client */
  int closing;
  int closed_handles;
};

static char upstream_path[108];
static struct sockaddr_in upstream_address;
static int upstream_is_unix;
static uv_poll_t listener;
static int listener_fd = -1;
static char read_buffer[CHUNK_BYTES];
static int next_pair_id;
/* With a JavaScript callback (start's third argument): each chunk read is handed to it instead of framed here. */
static napi_env js_env;
static napi_ref on_chunk;
static napi_async_context on_chunk_context;

/*
 * Calls onChunk(pair, direction, length) with the chunk in the shared read buffer (readBuffer());
 * returns how many of its bytes to forward, or -1 when the callback refused the chunk or failed.
 */
static int32_t chunk_to_javascript(struct pair *pair, int from, size_t length) {
  napi_handle_scope scope;
  if (napi_open_handle_scope(js_env, &scope) != napi_ok) return -1;
  napi_value callback, receiver, args[3], result;
  int32_t forward = -1;
  if (napi_get_reference_value(js_env, on_chunk, &callback) == napi_ok && napi_get_global(js_env, &receiver) == napi_ok
      && napi_create_int32(js_env, pair->id, &args[0]) == napi_ok && napi_create_int32(js_env, from, &args[1]) == napi_ok
      && napi_create_int32(js_env, (int32_t)length, &args[2]) == napi_ok
      && napi_make_callback(js_env, on_chunk_context, receiver, callback, 3, args, &result) == napi_ok) {
    if (napi_get_value_int32(js_env, result, &forward) != napi_ok) forward = -1;
  } else {
    bool pending = false;
    napi_value error;
    // A throw in the callback is the process's uncaught exception, as in any other callback.
    if (napi_is_exception_pending(js_env, &pending) == napi_ok && pending && napi_get_and_clear_last_exception(js_env, &error) == napi_ok) {
      napi_fatal_exception(js_env, error);
    }
  }
  napi_close_handle_scope(js_env, scope);
  return forward <= (int32_t)length ? forward : -1;
}

static void on_end_event(uv_poll_t *handle, int status, int events);

static void on_handle_closed(uv_handle_t *handle) {
  struct pair *pair = (struct pair *)handle->data;
  if (++pair->closed_handles < 2) return;
  free(pair->directions[0].pending);
  free(pair->directions[1].pending);
  free(pair);
}

static void close_pair(struct pair *pair) {
  if (pair->closing) return;
  pair->closing = 1;
  for (int i = 0; i < 2; i++) {
    uv_poll_stop(&pair->ends[i].poll);
    close(pair->ends[i].fd);
    uv_close((uv_handle_t *)&pair->ends[i].poll, on_handle_closed);
  }
}

static void set_events(struct pair *pair, int index, int events) {
  struct end *end = &pair->ends[index];
  if (end->events == events) return;
  if (events == 0) uv_poll_stop(&end->poll);
  else if (uv_poll_start(&end->poll, events, on_end_event) != 0) events = 0;
  end->events = events;
}

/* Walks the message headers in bytes[0..n): returns 0 when a length is invalid. */
static int frame(struct direction *direction, const unsigned char *bytes, size_t n) {
  size_t pos = 0;
  while (pos < n) {
    if (direction->message_remaining > 0) {
      size_t take = direction->message_remaining < n - pos ? (size_t)direction->message_remaining : n - pos;
      direction->message_remaining -= take;
      pos += take;
      continue;
    }
    /* A header: the type byte (none for the startup packet), then 4 bytes of length. */
    if (direction->header_seen == 0 && !direction->startup) {
      pos++;
      direction->header_seen = 1;
      direction->length = 0;
      continue;
    }
    if (direction->startup && direction->header_seen == 0) direction->header_seen = 1;
    direction->length = (direction->length << 8) | bytes[pos++];
    if (++direction->header_seen < 5) continue;
    direction->header_seen = 0;
    if (direction->length < 4 || direction->length > MAX_MESSAGE_BYTES) return 0;
    direction->message_remaining = direction->length - 4;
    direction->startup = 0;
  }
  return 1;
}

/* Sends what is pending towards `to`; returns 0 on a failed send. */
static int flush_pending(struct direction *direction) {
  struct pair *pair = direction->pair;
  int to = 1 - direction->from_index;
  while (direction->pending_from < direction->pending_to) {
    ssize_t sent = send(pair->ends[to].fd, direction->pending + direction->pending_from, direction->pending_to - direction->pending_from, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 1;
      if (errno == EINTR) continue;
      return 0;
    }
    direction->pending_from += (size_t)sent;
  }
  direction->pending_from = direction->pending_to = 0;
  return 1;
}

static int wants_read(struct pair *pair, int index) {
  struct direction *out = &pair->directions[index]; /* direction index == the end it reads from */
  return out->pending_from == out->pending_to;
}

static void update_events(struct pair *pair) {
  for (int i = 0; i < 2; i++) {
    int events = 0;
    if (wants_read(pair, i)) events |= UV_READABLE;
    /* End i is written by the direction reading the other end. */
    struct direction *in = &pair->directions[1 - i];
    if (in->pending_from < in->pending_to) events |= UV_WRITABLE;
    set_events(pair, i, events);
  }
}

static int relay_once(struct pair *pair, int from) {
  struct direction *direction = &pair->directions[from];
  ssize_t got = recv(pair->ends[from].fd, read_buffer, sizeof read_buffer, MSG_DONTWAIT);
  if (got == 0) return 0;
  if (got < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  if (on_chunk != NULL) {
    int32_t forward = chunk_to_javascript(pair, from, (size_t)got);
    if (forward < 0) return 0;
    got = forward;
  } else if (!frame(direction, (const unsigned char *)read_buffer, (size_t)got)) {
    return 0;
  }
  size_t done = 0;
  while (done < (size_t)got) {
    ssize_t sent = send(pair->ends[1 - from].fd, read_buffer + done, (size_t)got - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return 0;
      break;
    }
    done += (size_t)sent;
  }
  if (done < (size_t)got) {
    size_t rest = (size_t)got - done;
    if (direction->pending == NULL) direction->pending = malloc(CHUNK_BYTES);
    if (direction->pending == NULL) return 0;
    memcpy(direction->pending, read_buffer + done, rest);
    direction->pending_from = 0;
    direction->pending_to = rest;
  }
  return 1;
}

static void on_end_event(uv_poll_t *handle, int status, int events) {
  struct pair *pair = (struct pair *)handle->data;
  if (pair->closing) return;
  int index = handle == &pair->ends[0].poll ? 0 : 1;
  if (status < 0) {
    close_pair(pair);
    return;
  }
  /* Writable: the direction writing to this end drains what waited. */
  if ((events & UV_WRITABLE) && !flush_pending(&pair->directions[1 - index])) {
    close_pair(pair);
    return;
  }
  if ((events & (UV_READABLE | UV_DISCONNECT)) && wants_read(pair, index) && !relay_once(pair, index)) {
    close_pair(pair);
    return;
  }
  update_events(pair);
}

static int connect_upstream(void) {
  int fd;
  if (upstream_is_unix) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    memcpy(address.sun_path, upstream_path, sizeof address.sun_path - 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
      close(fd);
      return -1;
    }
  } else {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&upstream_address, sizeof upstream_address) < 0) {
      close(fd);
      return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

static void on_listener(uv_poll_t *handle, int status, int events) {
  (void)events;
  if (status < 0) return;
  for (;;) {
    int client = accept4(listener_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) {
      /* Out of descriptors, the socket stays readable: stop accepting rather than spin (a benchmark has failed then anyway). */
      if (errno == EMFILE || errno == ENFILE) uv_poll_stop(handle);
      return;
    }
    int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int upstream = connect_upstream();
    struct pair *pair = upstream < 0 ? NULL : calloc(1, sizeof *pair);
    if (pair == NULL) {
      close(client);
      if (upstream >= 0) close(upstream);
      continue;
    }
    pair->id = next_pair_id++;
    pair->ends[0].fd = client;
    pair->ends[1].fd = upstream;
    int initialised = 0;
    for (int i = 0; i < 2; i++) {
      pair->directions[i].pair = pair;
      pair->directions[i].from_index = i;
      if (uv_poll_init(handle->loop, &pair->ends[i].poll, pair->ends[i].fd) == 0) initialised++;
      pair->ends[i].poll.data = pair;
    }
    if (initialised < 2) { /* only a handle that was initialised may be closed: none is kept */
      close(client);
      close(upstream);
      free(pair);
      continue;
    }
    pair->directions[0].startup = 1;
    update_events(pair);
    if (pair->ends[0].events == 0 || pair->ends[1].events == 0) close_pair(pair); /* uv_poll_start failed */
  }
}

/* start(upstreamHostOrSocketDir, upstreamPort[, onChunk]): listens on 127.0.0.1 and returns the port. */
static napi_value start(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char host[80];
  size_t host_length = 0;
  int32_t port = 0;
  if (argc < 2 || napi_get_value_string_utf8(env, argv[0], host, sizeof host, &host_length) != napi_ok || napi_get_value_int32(env, argv[1], &port) != napi_ok) {
    napi_throw_type_error(env, NULL, "start(host, port)");
    return NULL;
  }
  if (listener_fd >= 0) {
    napi_throw_error(env, NULL, "start() runs once per process");
    return NULL;
  }
  if (host_length >= sizeof host - 1 || (host[0] == '/' && host_length + sizeof "/.s.PGSQL.65535" > sizeof upstream_path)) {
    napi_throw_error(env, NULL, "the upstream host is too long");
    return NULL;
  }
  if (host[0] == '/') {
    upstream_is_unix = 1;
    snprintf(upstream_path, sizeof upstream_path, "%s/.s.PGSQL.%d", host, port);
  } else {
    upstream_address.sin_family = AF_INET;
    upstream_address.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &upstream_address.sin_addr) != 1) {
      napi_throw_error(env, NULL, "the upstream host must be an IPv4 address or a socket directory");
      return NULL;
    }
  }
  listener_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (listener_fd < 0 || bind(listener_fd, (struct sockaddr *)&address, sizeof address) < 0 || listen(listener_fd, 128) < 0
      || getsockname(listener_fd, (struct sockaddr *)&address, &length) < 0) {
    if (listener_fd >= 0) close(listener_fd);
    listener_fd = -1;
    napi_throw_error(env, NULL, "cannot listen on 127.0.0.1");
    return NULL;
  }
  napi_valuetype callback_type = napi_undefined;
  if (argc >= 3) napi_typeof(env, argv[2], &callback_type);
  if (callback_type == napi_function) {
    napi_value resource, name;
    js_env = env;
    if (napi_create_reference(env, argv[2], 1, &on_chunk) != napi_ok || napi_create_object(env, &resource) != napi_ok
        || napi_create_string_utf8(env, "nativePipeChunk", NAPI_AUTO_LENGTH, &name) != napi_ok
        || napi_async_init(env, resource, name, &on_chunk_context) != napi_ok) {
      napi_throw_error(env, NULL, "cannot keep the chunk callback");
      return NULL;
    }
  }
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  if (uv_poll_init(loop, &listener, listener_fd) != 0 || uv_poll_start(&listener, UV_READABLE, on_listener) != 0) {
    napi_throw_error(env, NULL, "cannot poll the listening socket");
    return NULL;
  }
  napi_value result;
  napi_create_int32(env, ntohs(address.sin_port), &result);
  return result;
}

/* readBuffer(): the buffer each chunk is read into, for the chunk callback (valid during the call only). */
static napi_value read_buffer_view(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value buffer;
  if (napi_create_external_buffer(env, sizeof read_buffer, read_buffer, NULL, NULL, &buffer) != napi_ok) {
    napi_throw_error(env, NULL, "cannot share the read buffer");
    return NULL;
  }
  return buffer;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "start", NAPI_AUTO_LENGTH, start, NULL, &fn);
  napi_set_named_property(env, exports, "start", fn);
  napi_create_function(env, "readBuffer", NAPI_AUTO_LENGTH, read_buffer_view, NULL, &fn);
  napi_set_named_property(env, exports, "readBuffer", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
