#ifndef TOPREGIONS_BENCH_STREAMS_H
#define TOPREGIONS_BENCH_STREAMS_H

#include <stddef.h>

/// Many long HTTP GETs at once (Server-Sent Events subscribers) for the http.fanout
/// benchmark, driven by libcurl's multi interface on one thread of their own. Each
/// stream's body is kept; the time each stream's body first contains a marker is recorded.
typedef struct tr_streams tr_streams;

/// Starts `count` GETs of `url`; NULL when libcurl cannot start.
tr_streams *tr_streams_start(const char *url, int count);

/// Starts one GET of each of `urls`, with an `Authorization:` header of each of
/// `authorizations` (NULL, or a NULL entry: none); NULL when libcurl cannot start.
tr_streams *tr_streams_start_each(const char *const *urls, const char *const *authorizations, int count);

/// Records, from now on, when each occurrence of `marker` arrives in each stream (resets
/// earlier records).
void tr_streams_count(tr_streams *streams, const char *marker);

/// The arrival times of stream `index`'s occurrences of the counted marker, into `times`
/// (at most `capacity`); returns how many there are.
int tr_streams_marks(tr_streams *streams, int index, double *times, int capacity);

/// `tr_fetch` with an `Authorization:` header (none when NULL); returns the body whatever
/// the status.
char *tr_fetch_with(const char *url, const char *authorization, size_t *length, long *status);

/// A POST without a body, with an `Authorization:` header; the HTTP status (-1: failed).
long tr_post(const char *url, const char *authorization);

/// Records, from now on, when each stream's body first contains `marker` (resets earlier
/// records; a body that has it already counts at once).
void tr_streams_watch(tr_streams *streams, const char *marker);

/// How many streams have shown the marker.
int tr_streams_seen(tr_streams *streams);

/// Streams that ended (closed by the server or failed).
int tr_streams_ended(tr_streams *streams);

/// The index of the first stream that ended, and why into `reason` (curl's result, the
/// HTTP status, the bytes received); -1 when none has.
int tr_streams_first_end(tr_streams *streams, char *reason, size_t capacity);

/// Monotonic seconds at which each stream first showed the marker (-1: not yet), into
/// `times` (`count` of them).
void tr_streams_times(tr_streams *streams, double *times);

/// A copy of stream `index`'s body so far (free it with free); its length in `length`.
char *tr_streams_body(tr_streams *streams, int index, size_t *length);

/// Monotonic seconds now, on the clock the times use.
double tr_streams_now(void);

/// Stops every transfer and frees everything.
void tr_streams_close(tr_streams *streams);



/// The body of one GET of `url` (free it with free), its length in `length`; NULL, and the
/// HTTP status or -1 in `status`, when it is not a 200.
char *tr_fetch(const char *url, size_t *length, long *status);
#endif
