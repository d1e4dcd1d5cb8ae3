#ifndef TOPREGIONS_HTTP_SERVER_H
#define TOPREGIONS_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// libmicrohttpd, loaded with dlopen when a server first starts (like libcurl: the commands
/// that never serve do not load it and the TLS libraries behind it). It loads
/// `libmicrohttpd.so.12`, or what the environment variable TOPREGIONS_LIBMICROHTTPD names.
/// Each function below is one libmicrohttpd call (MHD_start_daemon is variadic, which
/// Swift cannot call).

/// "" once libmicrohttpd is loaded, else why it cannot be.
const char *tr_http_load_error(void);

typedef struct {
    /// Connections open at once, in all.
    unsigned int connection_limit;
    /// Connections open at once from one client address.
    unsigned int per_address_connection_limit;
    /// Seconds a connection may be idle (nothing received or sent) before it is closed.
    unsigned int idle_timeout_seconds;
    /// Bytes of memory per connection, which bounds its request line and headers.
    size_t connection_memory_limit;
    /// Threads that poll the connections (each with its own epoll set).
    unsigned int threads;
} tr_http_limits;

/// Starts a daemon listening on `address` (IPv4 or IPv6), with epoll, suspend and resume.
/// NULL when it cannot (errno says why when the socket failed).
struct MHD_Daemon *tr_http_start(const struct sockaddr *address, const tr_http_limits *limits,
                                 MHD_AccessHandlerCallback handler, void *handler_context,
                                 MHD_RequestCompletedCallback completed, void *completed_context,
                                 MHD_NotifyConnectionCallback notify, void *notify_context);
/// The port the daemon listens on (the one the system chose when asked for port 0).
uint16_t tr_http_bound_port(struct MHD_Daemon *daemon);
/// Stops accepting connections; returns the listening socket, which `tr_http_stop` closes.
int tr_http_quiesce(struct MHD_Daemon *daemon);
/// Stops the daemon and closes every connection; closes `listening_socket` when >= 0.
void tr_http_stop(struct MHD_Daemon *daemon, int listening_socket);

/// A request header's value, or NULL.
const char *tr_http_header(struct MHD_Connection *connection, const char *name);
/// Calls `iterator` for each value of `kind`: MHD_GET_ARGUMENT_KIND for the query's
/// arguments (decoded; value NULL for `?name`), MHD_HEADER_KIND for the headers.
int tr_http_values(struct MHD_Connection *connection, enum MHD_ValueKind kind, MHD_KeyValueIterator iterator, void *context);
/// The client's address as numeric text into `text`; 0 when known.
int tr_http_client_address(struct MHD_Connection *connection, char *text, size_t size);
/// The connection's socket.
int tr_http_socket(struct MHD_Connection *connection);
/// Seconds this connection may be idle (0: no limit), set from one of its callbacks.
void tr_http_set_idle_timeout(struct MHD_Connection *connection, unsigned int seconds);

/// A response holding a copy of these bytes.
struct MHD_Response *tr_http_buffer_response(const void *bytes, size_t count);
/// A response of unknown length (chunked) whose bytes `reader` produces.
struct MHD_Response *tr_http_stream_response(size_t block_size, MHD_ContentReaderCallback reader, void *context,
                                             MHD_ContentReaderFreeCallback free_context);
int tr_http_add_header(struct MHD_Response *response, const char *name, const char *value);
int tr_http_queue(struct MHD_Connection *connection, unsigned int status, struct MHD_Response *response);
void tr_http_destroy_response(struct MHD_Response *response);
void tr_http_suspend(struct MHD_Connection *connection);
void tr_http_resume(struct MHD_Connection *connection);

#endif
