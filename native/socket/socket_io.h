/* The socket addon's shared parts: the per-environment state, a socket, and the poll/send core (socket_io.c) the N-API surface (socket_napi.c) calls. */
#ifndef PGVEIL_SOCKET_IO_H
#define PGVEIL_SOCKET_IO_H

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

/* The kinds of onEvent(value, kind), as socketAddon.ts numbers them. DATA has no kind: emit_data
 * calls onEvent with the read's length alone. */
enum { EVENT_END = 1, EVENT_DRAIN = 2, EVENT_ERROR = 3 };

struct native_socket;

/* One per Node environment: the read buffer its sockets share and the sockets still open. */
struct io_env {
  char read_buffer[READ_BUFFER_BYTES];
  /* Set by JavaScript during a DATA callback (forwardSlot()): bytes of the read to send on to the paired socket. */
  int32_t forward_bytes;
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
  bool stalled;         /* what was forwarded waits in forward_to: no reads until it has gone out */
  char *pending;        /* bytes the kernel did not take yet: pending[from..to) */
  size_t pending_from, pending_to, pending_capacity;
  struct native_socket *previous, *next;
  /* Paired (pair()): what DATA's callback returns of a read is sent on to forward_to, which knows its forwarded_from. */
  struct native_socket *forward_to, *forwarded_from;
};

/* The environment going away waits for this: the addon may be unloaded right after. */
void finish_cleanup_if_done(struct io_env *io);
/* Stops watching and closes the descriptor (in that order: libuv forgets it before it is reused). */
void close_socket(struct native_socket *s);
/* The N-API finalizer of a socket's handle. */
void on_finalize(napi_env env, void *data, void *hint);
/* Watches for what the socket wants now: reads, and writability while bytes wait. */
void update_events(struct native_socket *s);
/* Keeps bytes the kernel did not take; false when out of memory. */
bool keep_pending(struct native_socket *s, const char *bytes, size_t length);
/* Sends bytes[0..length) as far as the kernel takes them: how many, or a negative errno. */
ssize_t send_some(int fd, const char *bytes, size_t length);
/* After the last waiting byte: the FIN end() asked for. 0 or a negative errno. */
int shut_if_asked(struct native_socket *s);
/* Sends bytes after whatever waits on `s` (keeping what the kernel does not take): 1 all sent, 0 some waits, or a negative errno (`s` failed). */
int send_after_pending(struct native_socket *s, const char *bytes, size_t length);
/* Forwards `s`'s reads to `to` (NULL: no longer), undoing any earlier pairing of either. */
void pair_sockets(struct native_socket *s, struct native_socket *to);

#endif
