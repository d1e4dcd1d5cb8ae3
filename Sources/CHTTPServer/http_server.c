#include "http_server.h"

#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libmicrohttpd's entry points, found with dlsym, with its own prototypes. */
static struct {
    struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                       MHD_AccessHandlerCallback, void *, ...);
    void (*stop_daemon)(struct MHD_Daemon *);
    MHD_socket (*quiesce_daemon)(struct MHD_Daemon *);
    const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
    const char *(*lookup_connection_value)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
    int (*get_connection_values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
    const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *, enum MHD_ConnectionInfoType, ...);
    enum MHD_Result (*set_connection_option)(struct MHD_Connection *, enum MHD_CONNECTION_OPTION, ...);
    struct MHD_Response *(*create_response_from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
    struct MHD_Response *(*create_response_from_callback)(uint64_t, size_t, MHD_ContentReaderCallback, void *,
                                                          MHD_ContentReaderFreeCallback);
    enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
    enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
    void (*destroy_response)(struct MHD_Response *);
    void (*suspend_connection)(struct MHD_Connection *);
    void (*resume_connection)(struct MHD_Connection *);
} mhd;

static char load_error[512] = "";
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void *symbol(void *library, const char *name) {
    void *address = dlsym(library, name);
    if (address == NULL && load_error[0] == '\0') {
        snprintf(load_error, sizeof load_error, "the libmicrohttpd loaded has no %s", name);
    }
    return address;
}

#define LOAD(field, name) *(void **)(&mhd.field) = symbol(library, name)

static void load_mhd(void) {
    const char *name = getenv("TOPREGIONS_LIBMICROHTTPD");
    if (name == NULL || name[0] == '\0') name = "libmicrohttpd.so.12";
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "libmicrohttpd cannot be loaded");
        return;
    }
    LOAD(start_daemon, "MHD_start_daemon");
    LOAD(stop_daemon, "MHD_stop_daemon");
    LOAD(quiesce_daemon, "MHD_quiesce_daemon");
    LOAD(get_daemon_info, "MHD_get_daemon_info");
    LOAD(lookup_connection_value, "MHD_lookup_connection_value");
    LOAD(get_connection_values, "MHD_get_connection_values");
    LOAD(get_connection_info, "MHD_get_connection_info");
    LOAD(set_connection_option, "MHD_set_connection_option");
    LOAD(create_response_from_buffer, "MHD_create_response_from_buffer");
    LOAD(create_response_from_callback, "MHD_create_response_from_callback");
    LOAD(add_response_header, "MHD_add_response_header");
    LOAD(queue_response, "MHD_queue_response");
    LOAD(destroy_response, "MHD_destroy_response");
    LOAD(suspend_connection, "MHD_suspend_connection");
    LOAD(resume_connection, "MHD_resume_connection");
}

const char *tr_http_load_error(void) {
    pthread_once(&load_once, load_mhd);
    return load_error;
}

static int hex_value(char digit) {
    if (digit >= '0' && digit <= '9') return digit - '0';
    if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
    if (digit >= 'A' && digit <= 'F') return digit - 'A' + 10;
    return -1;
}

// Percent-decoding of the path and of each query value, in place. As libmicrohttpd's own,
// except that "%00" stays as written: decoded, it would end the C string there, and
// "/api/photos/1%00/thumbnail" would be served as "/api/photos/1".
static size_t unescape_keeping_nul(void *context, struct MHD_Connection *connection, char *text) {
    (void)context;
    (void)connection;
    char *read = text, *write = text;
    while (*read != '\0') {
        int high, low;
        if (read[0] == '%' && (high = hex_value(read[1])) >= 0 && (low = hex_value(read[2])) >= 0 && (high | low) != 0) {
            *write++ = (char)(high * 16 + low);
            read += 3;
        } else {
            *write++ = *read++;
        }
    }
    *write = '\0';
    return (size_t)(write - text);
}

struct MHD_Daemon *tr_http_start(const struct sockaddr *address, const tr_http_limits *limits,
                                 MHD_AccessHandlerCallback handler, void *handler_context,
                                 MHD_RequestCompletedCallback completed, void *completed_context,
                                 MHD_NotifyConnectionCallback notify, void *notify_context) {
    if (tr_http_load_error()[0] != '\0') return NULL;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    uint16_t port = 0;
    if (address->sa_family == AF_INET6) {
        flags |= MHD_USE_IPv6;
        port = ntohs(((const struct sockaddr_in6 *)address)->sin6_port);
    } else {
        port = ntohs(((const struct sockaddr_in *)address)->sin_port);
    }
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_SOCK_ADDR, 0, (void *)address},
        {MHD_OPTION_CONNECTION_LIMIT, limits->connection_limit, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, limits->per_address_connection_limit, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, limits->idle_timeout_seconds, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)limits->connection_memory_limit, NULL},
        {MHD_OPTION_THREAD_POOL_SIZE, limits->threads > 1 ? limits->threads : 0, NULL},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape_keeping_nul, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_context},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, notify_context},
        {MHD_OPTION_END, 0, NULL},
    };
    return mhd.start_daemon(flags, port, NULL, NULL, handler, handler_context, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

uint16_t tr_http_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = mhd.get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

int tr_http_quiesce(struct MHD_Daemon *daemon) { return (int)mhd.quiesce_daemon(daemon); }

void tr_http_stop(struct MHD_Daemon *daemon, int listening_socket) {
    mhd.stop_daemon(daemon);
    if (listening_socket >= 0) close(listening_socket);
}

const char *tr_http_header(struct MHD_Connection *connection, const char *name) {
    return mhd.lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

int tr_http_values(struct MHD_Connection *connection, enum MHD_ValueKind kind, MHD_KeyValueIterator iterator, void *context) {
    return mhd.get_connection_values(connection, kind, iterator, context);
}

int tr_http_client_address(struct MHD_Connection *connection, char *text, size_t size) {
    const union MHD_ConnectionInfo *info = mhd.get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    socklen_t length = info->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    return getnameinfo(info->client_addr, length, text, (socklen_t)size, NULL, 0, NI_NUMERICHOST) == 0 ? 0 : -1;
}

int tr_http_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = mhd.get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int)info->connect_fd : -1;
}

void tr_http_set_idle_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    mhd.set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

struct MHD_Response *tr_http_buffer_response(const void *bytes, size_t count) {
    return mhd.create_response_from_buffer(count, (void *)bytes, MHD_RESPMEM_MUST_COPY);
}

struct MHD_Response *tr_http_stream_response(size_t block_size, MHD_ContentReaderCallback reader, void *context,
                                             MHD_ContentReaderFreeCallback free_context) {
    return mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, block_size, reader, context, free_context);
}

int tr_http_add_header(struct MHD_Response *response, const char *name, const char *value) {
    return mhd.add_response_header(response, name, value) == MHD_YES ? 0 : -1;
}

int tr_http_queue(struct MHD_Connection *connection, unsigned int status, struct MHD_Response *response) {
    return mhd.queue_response(connection, status, response) == MHD_YES ? 0 : -1;
}

void tr_http_destroy_response(struct MHD_Response *response) { mhd.destroy_response(response); }
void tr_http_suspend(struct MHD_Connection *connection) { mhd.suspend_connection(connection); }
void tr_http_resume(struct MHD_Connection *connection) { mhd.resume_connection(connection); }
