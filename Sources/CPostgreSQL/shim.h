#ifndef TOPREGIONS_CPOSTGRESQL_SHIM_H
#define TOPREGIONS_CPOSTGRESQL_SHIM_H

#include <libpq-fe.h>

// A notice processor that drops the server's notices: libpq's default prints them to
// stderr as the server wrote them, and text from a server never reaches a terminal raw.
static inline void topregions_pq_ignore_notice(void *argument, const char *message) {
    (void)argument;
    (void)message;
}

static inline void topregions_pq_silence_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, topregions_pq_ignore_notice, 0);
}

#endif
