#ifndef TOPREGIONS_CPOSTGRESQL_SHIM_H
#define TOPREGIONS_CPOSTGRESQL_SHIM_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>

// A notice processor that drops the server's notices: libpq's default prints them to
// stderr as the server wrote them, and text from a server never reaches a terminal raw.
static inline void topregions_pq_ignore_notice(void *argument, const char *message) {
    (void)argument;
    (void)message;
}

static inline void topregions_pq_silence_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, topregions_pq_ignore_notice, 0);
}

// PQconnectdbParams with the server's notices dropped from the first byte. A notice sent
// while the session starts (a `client_min_messages` the database sets, or a hostile
// server) reaches libpq's default processor, which prints it raw to the C `stderr`,
// before a processor of ours can be set on the connection. So while any connection is
// being made, `stderr` is /dev/null (glibc lets a program assign it); this program writes
// its own messages to file descriptor 2, not through it. The blocking call is kept, rather
// than PQconnectStart and PQconnectPoll, for libpq's own connect timeout per host, after
// which it tries the next host a location names (failover).
static inline PGconn *topregions_pq_connect_quietly(const char *const *keywords, const char *const *values) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int connecting = 0;
    static FILE *quiet = NULL;
    static FILE *saved = NULL;
    pthread_mutex_lock(&lock);
    if (connecting++ == 0) {
        if (quiet == NULL) quiet = fopen("/dev/null", "w");
        if (quiet != NULL) {
            saved = stderr;
            stderr = quiet;
        }
    }
    pthread_mutex_unlock(&lock);
    PGconn *connection = PQconnectdbParams(keywords, values, 1);
    if (connection != NULL) topregions_pq_silence_notices(connection);
    pthread_mutex_lock(&lock);
    if (--connecting == 0 && saved != NULL) {
        stderr = saved;
        saved = NULL;
    }
    pthread_mutex_unlock(&lock);
    return connection;
}

#endif
