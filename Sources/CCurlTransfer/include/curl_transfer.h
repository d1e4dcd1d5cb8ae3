#ifndef TOPREGIONS_CURL_TRANSFER_H
#define TOPREGIONS_CURL_TRANSFER_H

#include <stddef.h>

/// One HTTP GET through libcurl, which is loaded with dlopen the first time a transfer
/// runs: a process that never goes to the network (most `topregions` commands) does not
/// load libcurl and the forty libraries behind it, which took half of its start-up time.
/// It loads `libcurl.so.4`, or what the environment variable TOPREGIONS_LIBCURL names.

typedef enum {
    TR_TRANSFER_OK = 0,
    TR_TRANSFER_NO_LIBCURL,       /* libcurl.so.4 could not be loaded or initialised */
    TR_TRANSFER_TIMEOUT,          /* no complete answer within the timeout */
    TR_TRANSFER_TOO_LARGE,        /* the body passed max_bytes (announced or received) */
    TR_TRANSFER_CANCELLED,        /* *cancelled became non-zero */
    TR_TRANSFER_CANNOT_CONNECT,
    TR_TRANSFER_CANNOT_RESOLVE,
    TR_TRANSFER_CONNECTION_LOST,  /* the server closed or reset the connection mid-answer */
    TR_TRANSFER_TLS,
    TR_TRANSFER_FAILED            /* anything else; curl_code says what */
} tr_transfer_outcome;

typedef struct {
    long status;
    char *body;
    size_t body_length;
    /// The header lines of the last response (after redirects), as received.
    char *headers;
    size_t headers_length;
    int curl_code;
    /// libcurl's words for curl_code (curl_easy_strerror).
    char curl_message[128];
} tr_transfer_result;

/// Blocks until the transfer ends. `result` is filled in every case; free it with
/// tr_transfer_free. `cancelled` is read while the transfer runs.
tr_transfer_outcome tr_transfer_get(const char *url, const char *user_agent, long timeout_ms, size_t max_bytes,
                                    const volatile int *cancelled, tr_transfer_result *result);

void tr_transfer_free(tr_transfer_result *result);

/// Why libcurl could not be loaded (empty when it was).
const char *tr_transfer_load_error(void);

#endif
