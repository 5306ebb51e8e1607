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
 * Events reach JavaScript through the socket's callback, onEvent(value, kind), made with
 * napi_make_callback so that promises and nextTicks run after it as after Node's own callbacks:
 * DATA (value: bytes in the read buffer, valid during the call only; no kind), END (the peer closed its
 * side), DRAIN (everything waiting has been sent), ERROR (value: a negative errno). After ERROR
 * or END nothing more is read.
 *
 * A socket paired with another (pair()) forwards reads to it without a second call: the count
 * JavaScript leaves in the forward slot (forwardSlot()) when DATA's callback is done is how many
 * bytes, from the start of the read, to send on to the paired socket, as if it had written them
 * (JavaScript sends them itself first, and clears the slot, when anything is to follow them sooner,
 * its nextTicks and promise reactions included). While
 * they wait in the paired socket, the reading socket is not read (its own backpressure, which
 * JavaScript does not see).
 */
#define _GNU_SOURCE
#include "socket_io.h"

static void on_poll(uv_poll_t *handle, int status, int events);

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
void finish_cleanup_if_done(struct io_env *io) {
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
void close_socket(struct native_socket *s) {
  if (s->closing) return;
  pair_sockets(s, NULL);
  if (s->forwarded_from) pair_sockets(s->forwarded_from, NULL);
  s->closing = true;
  s->io->closing++;
  unlink_socket(s);
  uv_close((uv_handle_t *)&s->poll, on_handle_closed);
  close(s->fd);
  s->fd = -1;
}

void on_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  struct native_socket *s = (struct native_socket *)data;
  s->finalized = true;
  if (!s->closing) close_socket(s);
  if (s->handle_closed) free_socket(s);
}

void update_events(struct native_socket *s) {
  if (s->closing) return;
  int events = 0;
  if (s->reading && !s->read_ended && !s->stalled) events |= UV_READABLE;
  if (s->pending_from < s->pending_to && !s->failed) events |= UV_WRITABLE;
  if (events == s->events) return;
  if (events == 0 || uv_poll_start(&s->poll, events, on_poll) != 0) {
    uv_poll_stop(&s->poll);
    events = 0;
  }
  s->events = events;
}

/* Calls onEvent(value, kind) (DATA: emit_data); a throw there is the process's uncaught exception, as in any callback. */
static void emit(struct native_socket *s, int kind, int32_t value) {
  if (s->on_event == NULL) return;
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value callback, args[2], result;
  /* The callback is its own receiver (an object at hand; it does not use `this`). */
  if (napi_get_reference_value(env, s->on_event, &callback) == napi_ok && callback != NULL
      && napi_create_int32(env, value, &args[0]) == napi_ok && napi_create_int32(env, kind, &args[1]) == napi_ok
      && napi_make_callback(env, s->context, callback, callback, 2, args, &result) != napi_ok) {
    bool pending = false;
    napi_value error;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending && napi_get_and_clear_last_exception(env, &error) == napi_ok) {
      napi_fatal_exception(env, error);
    }
  }
  napi_close_handle_scope(env, scope);
}

/*
 * The bytes forwarded to `to` have gone out: its source is read again. Not when they never will
 * (`to` failed or closed): the source then stays unread, as a writer waiting for a 'drain' that
 * never comes, so that its unread bytes make its close a reset the client sees.
 */
static void unstall_source(struct native_socket *to) {
  struct native_socket *from = to->forwarded_from;
  if (from == NULL || !from->stalled) return;
  from->stalled = false;
  update_events(from);
}

/* A stalled source stays so when unpaired, as a stopped pump leaves its source paused; a new pairing starts afresh. */
void pair_sockets(struct native_socket *s, struct native_socket *to) {
  if (s->forward_to != NULL) {
    s->forward_to->forwarded_from = NULL;
    s->forward_to = NULL;
  }
  if (to == NULL) return;
  if (s->stalled) {
    s->stalled = false;
    update_events(s);
  }
  if (to->forwarded_from != NULL) pair_sockets(to->forwarded_from, NULL);
  s->forward_to = to;
  to->forwarded_from = s;
}

/*
 * DATA: onEvent(bytes) (one argument: the commonest event costs one value less). What JavaScript
 * wrote into the forward slot by the time the callback returns (its nextTicks and promise reactions
 * included: JavaScript sends the bytes itself, and clears the slot, if anything is to follow them
 * sooner) is sent on to the paired socket; a failure of that send is reported afterwards (ERROR on
 * the paired socket), as a failed write() is.
 */
static void emit_data(struct native_socket *s, size_t got) {
  if (s->on_event == NULL) return;
  napi_env env = s->env;
  struct io_env *io = s->io;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value callback, arg, result;
  io->forward_bytes = 0;
  if (napi_get_reference_value(env, s->on_event, &callback) == napi_ok && callback != NULL
      && napi_create_int32(env, (int32_t)got, &arg) == napi_ok
      && napi_make_callback(env, s->context, callback, callback, 1, &arg, &result) != napi_ok) {
    bool pending = false;
    napi_value error;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending && napi_get_and_clear_last_exception(env, &error) == napi_ok) {
      napi_fatal_exception(env, error);
    }
  }
  napi_close_handle_scope(env, scope);
  int32_t forward = io->forward_bytes;
  io->forward_bytes = 0;
  struct native_socket *to = s->forward_to;
  if (forward <= 0 || to == NULL || s->closing) return;
  int sent = send_after_pending(to, io->read_buffer, (size_t)forward < got ? (size_t)forward : got);
  if (sent == 0) {
    s->stalled = true;
    update_events(s);
  } else if (sent < 0 && sent != -EPIPE) {
    emit(to, EVENT_ERROR, sent);
  }
}

int send_after_pending(struct native_socket *s, const char *bytes, size_t length) {
  if (s->closing || s->failed || s->write_shut || s->shut_after_send) return -EPIPE;
  if (s->pending_from < s->pending_to) return keep_pending(s, bytes, length) ? 0 : -ENOMEM;
  ssize_t sent = send_some(s->fd, bytes, length);
  if (sent < 0) {
    s->failed = true;
    update_events(s);
    return (int)sent;
  }
  if ((size_t)sent == length) return 1;
  if (!keep_pending(s, bytes + sent, length - (size_t)sent)) return -ENOMEM;
  update_events(s);
  return 0;
}

bool keep_pending(struct native_socket *s, const char *bytes, size_t length) {
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
ssize_t send_some(int fd, const char *bytes, size_t length) {
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
int shut_if_asked(struct native_socket *s) {
  if (!s->shut_after_send || s->write_shut || s->pending_from < s->pending_to) return 0;
  s->write_shut = true;
  return shutdown(s->fd, SHUT_WR) == 0 || errno == ENOTCONN ? 0 : -errno;
}

/* One recv() into the environment's buffer: bytes read, 0 at EOF, or a negative errno (-EAGAIN: nothing yet). */
static ssize_t read_some(struct native_socket *s) {
  ssize_t got;
  do got = recv(s->fd, s->io->read_buffer, READ_BUFFER_BYTES, MSG_DONTWAIT);
  while (got < 0 && errno == EINTR);
  return got < 0 ? -errno : got;
}

static bool nothing_yet(ssize_t got) {
  return got == -EAGAIN || got == -EWOULDBLOCK;
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
      ssize_t got = read_some(s);
      if (got > 0) {
        emit_data(s, (size_t)got);
        continue;
      }
      if (got < 0 && !nothing_yet(got)) error = (int)got;
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
      unstall_source(s);
      emit(s, EVENT_DRAIN, 0);
      if (s->closing) return;
    }
  }
  if ((events & UV_READABLE) && s->reading && !s->read_ended) {
    ssize_t got = read_some(s);
    if (got > 0) {
      emit_data(s, (size_t)got);
    } else if (got == 0) {
      s->read_ended = true;
      update_events(s);
      emit(s, EVENT_END, 0);
    } else if (!nothing_yet(got)) {
      s->failed = s->read_ended = true;
      update_events(s);
      emit(s, EVENT_ERROR, (int32_t)got);
    }
    if (s->closing) return;
  }
  update_events(s);
}
