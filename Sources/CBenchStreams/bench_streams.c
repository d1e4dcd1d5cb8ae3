#define _GNU_SOURCE
#include "bench_streams.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    tr_streams *owner;
    int index;
    char *body;
    size_t length, capacity;
    double seen;
    /* When each occurrence of the owner's `counted` marker arrived. */
    double *marks;
    int mark_count, mark_capacity;
    struct curl_slist *headers;
    int ended;
    CURLcode result;
    long status;
} stream_t;

struct tr_streams {
    CURLM *multi;
    int count;
    stream_t *streams;
    CURL **handles;
    pthread_t thread;
    pthread_mutex_t lock;
    int stop;
    char marker[64];
    char counted[64];
};

double tr_streams_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Called with the lock held. */
static void check_marker(tr_streams *streams, stream_t *stream) {
    if (stream->seen >= 0 || streams->marker[0] == 0) return;
    if (memmem(stream->body, stream->length, streams->marker, strlen(streams->marker)) != NULL) stream->seen = tr_streams_now();
}

/* Called with the lock held, after `bytes` were appended: records the arrival of every
   occurrence of the counted marker that ends in them. */
static void count_marks(tr_streams *streams, stream_t *stream, size_t bytes) {
    size_t marker_length = strlen(streams->counted);
    if (marker_length == 0) return;
    size_t start = stream->length - bytes;
    start = start >= marker_length - 1 ? start - (marker_length - 1) : 0;
    const char *cursor = stream->body + start, *end = stream->body + stream->length;
    double now = tr_streams_now();
    while (cursor < end) {
        const char *found = memmem(cursor, (size_t)(end - cursor), streams->counted, marker_length);
        if (found == NULL) break;
        if (stream->mark_count == stream->mark_capacity) {
            int capacity = stream->mark_capacity ? stream->mark_capacity * 2 : 8;
            double *grown = realloc(stream->marks, (size_t)capacity * sizeof(double));
            if (grown == NULL) return;
            stream->marks = grown;
            stream->mark_capacity = capacity;
        }
        stream->marks[stream->mark_count++] = now;
        cursor = found + marker_length;
    }
}

static size_t received(char *data, size_t size, size_t count, void *context) {
    stream_t *stream = context;
    size_t bytes = size * count;
    pthread_mutex_lock(&stream->owner->lock);
    if (stream->length + bytes > stream->capacity) {
        size_t capacity = (stream->length + bytes) * 2;
        char *grown = realloc(stream->body, capacity);
        if (grown == NULL) { pthread_mutex_unlock(&stream->owner->lock); return 0; }
        stream->body = grown;
        stream->capacity = capacity;
    }
    memcpy(stream->body + stream->length, data, bytes);
    stream->length += bytes;
    check_marker(stream->owner, stream);
    count_marks(stream->owner, stream, bytes);
    pthread_mutex_unlock(&stream->owner->lock);
    return bytes;
}

static void *drive(void *context) {
    tr_streams *streams = context;
    int running = 1;
    while (running > 0) {
        pthread_mutex_lock(&streams->lock);
        int stop = streams->stop;
        pthread_mutex_unlock(&streams->lock);
        if (stop) break;
        curl_multi_perform(streams->multi, &running);
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(streams->multi, &left)) != NULL) {
            if (message->msg != CURLMSG_DONE) continue;
            stream_t *stream = NULL;
            curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&stream);
            if (stream != NULL) {
                long status = 0;
                curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &status);
                pthread_mutex_lock(&streams->lock);
                stream->ended = 1;
                stream->result = message->data.result;
                stream->status = status;
                pthread_mutex_unlock(&streams->lock);
            }
        }
        curl_multi_poll(streams->multi, NULL, 0, 100, NULL);
    }
    return NULL;
}

tr_streams *tr_streams_start(const char *url, int count) {
    const char **urls = calloc((size_t)count, sizeof(char *));
    if (urls == NULL) return NULL;
    for (int index = 0; index < count; index++) urls[index] = url;
    tr_streams *streams = tr_streams_start_each(urls, NULL, count);
    free(urls);
    return streams;
}

tr_streams *tr_streams_start_each(const char *const *urls, const char *const *authorizations, int count) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return NULL;
    tr_streams *streams = calloc(1, sizeof *streams);
    if (streams == NULL) return NULL;
    streams->multi = curl_multi_init();
    streams->count = count;
    streams->streams = calloc((size_t)count, sizeof(stream_t));
    streams->handles = calloc((size_t)count, sizeof(CURL *));
    pthread_mutex_init(&streams->lock, NULL);
    curl_multi_setopt(streams->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
    for (int index = 0; index < count; index++) {
        stream_t *stream = &streams->streams[index];
        stream->owner = streams;
        stream->index = index;
        stream->seen = -1;
        CURL *easy = curl_easy_init();
        streams->handles[index] = easy;
        curl_easy_setopt(easy, CURLOPT_URL, urls[index]);
        if (authorizations != NULL && authorizations[index] != NULL) {
            char header[512];
            snprintf(header, sizeof header, "Authorization: %s", authorizations[index]);
            stream->headers = curl_slist_append(NULL, header);
            curl_easy_setopt(easy, CURLOPT_HTTPHEADER, stream->headers);
        }
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, received);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, stream);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, stream);
        curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT, 60L);
        curl_multi_add_handle(streams->multi, easy);
    }
    pthread_create(&streams->thread, NULL, drive, streams);
    return streams;
}

void tr_streams_watch(tr_streams *streams, const char *marker) {
    pthread_mutex_lock(&streams->lock);
    strncpy(streams->marker, marker, sizeof streams->marker - 1);
    for (int index = 0; index < streams->count; index++) {
        streams->streams[index].seen = -1;
        check_marker(streams, &streams->streams[index]);
    }
    pthread_mutex_unlock(&streams->lock);
}

int tr_streams_seen(tr_streams *streams) {
    int seen = 0;
    pthread_mutex_lock(&streams->lock);
    for (int index = 0; index < streams->count; index++) seen += streams->streams[index].seen >= 0;
    pthread_mutex_unlock(&streams->lock);
    return seen;
}

int tr_streams_ended(tr_streams *streams) {
    int ended = 0;
    pthread_mutex_lock(&streams->lock);
    for (int index = 0; index < streams->count; index++) ended += streams->streams[index].ended;
    pthread_mutex_unlock(&streams->lock);
    return ended;
}

int tr_streams_first_end(tr_streams *streams, char *reason, size_t capacity) {
    int found = -1;
    pthread_mutex_lock(&streams->lock);
    for (int index = 0; index < streams->count && found < 0; index++) {
        stream_t *stream = &streams->streams[index];
        if (!stream->ended) continue;
        found = index;
        /* The body is the server's text: only its length is told, not its bytes. */
        snprintf(reason, capacity, "curl: %s; HTTP status %ld; %zu bytes received",
                 curl_easy_strerror(stream->result), stream->status, stream->length);
    }
    pthread_mutex_unlock(&streams->lock);
    return found;
}

void tr_streams_times(tr_streams *streams, double *times) {
    pthread_mutex_lock(&streams->lock);
    for (int index = 0; index < streams->count; index++) times[index] = streams->streams[index].seen;
    pthread_mutex_unlock(&streams->lock);
}

char *tr_streams_body(tr_streams *streams, int index, size_t *length) {
    pthread_mutex_lock(&streams->lock);
    stream_t *stream = &streams->streams[index];
    char *copy = malloc(stream->length + 1);
    if (copy != NULL) {
        memcpy(copy, stream->body, stream->length);
        copy[stream->length] = 0;
        *length = stream->length;
    }
    pthread_mutex_unlock(&streams->lock);
    return copy;
}

void tr_streams_close(tr_streams *streams) {
    pthread_mutex_lock(&streams->lock);
    streams->stop = 1;
    pthread_mutex_unlock(&streams->lock);
    curl_multi_wakeup(streams->multi);
    pthread_join(streams->thread, NULL);
    for (int index = 0; index < streams->count; index++) {
        curl_multi_remove_handle(streams->multi, streams->handles[index]);
        curl_easy_cleanup(streams->handles[index]);
    }
    free(streams->handles);
    curl_multi_cleanup(streams->multi);
    for (int index = 0; index < streams->count; index++) {
        free(streams->streams[index].body);
        free(streams->streams[index].marks);
        curl_slist_free_all(streams->streams[index].headers);
    }
    free(streams->streams);
    pthread_mutex_destroy(&streams->lock);
    free(streams);
}

typedef struct { char *body; size_t length; } fetched_t;

static size_t append(char *data, size_t size, size_t count, void *context) {
    fetched_t *fetched = context;
    size_t bytes = size * count;
    char *grown = realloc(fetched->body, fetched->length + bytes + 1);
    if (grown == NULL) return 0;
    fetched->body = grown;
    memcpy(fetched->body + fetched->length, data, bytes);
    fetched->length += bytes;
    fetched->body[fetched->length] = 0;
    return bytes;
}

char *tr_fetch(const char *url, size_t *length, long *status) {
    char *body = tr_fetch_with(url, NULL, length, status);
    if (body != NULL && *status != 200) { free(body); return NULL; }
    return body;
}

void tr_streams_count(tr_streams *streams, const char *marker) {
    pthread_mutex_lock(&streams->lock);
    strncpy(streams->counted, marker, sizeof streams->counted - 1);
    for (int index = 0; index < streams->count; index++) streams->streams[index].mark_count = 0;
    pthread_mutex_unlock(&streams->lock);
}

int tr_streams_marks(tr_streams *streams, int index, double *times, int capacity) {
    pthread_mutex_lock(&streams->lock);
    stream_t *stream = &streams->streams[index];
    int count = stream->mark_count;
    for (int mark = 0; mark < count && mark < capacity; mark++) times[mark] = stream->marks[mark];
    pthread_mutex_unlock(&streams->lock);
    return count;
}

static size_t discard(char *data, size_t size, size_t count, void *context) {
    (void)data;
    (void)context;
    return size * count;
}

long tr_post(const char *url, const char *authorization) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return -1;
    CURL *easy = curl_easy_init();
    if (easy == NULL) return -1;
    char header[512];
    snprintf(header, sizeof header, "Authorization: %s", authorization);
    struct curl_slist *headers = curl_slist_append(NULL, header);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    long status = -1;
    if (curl_easy_perform(easy) == CURLE_OK) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
    return status;
}

char *tr_fetch_with(const char *url, const char *authorization, size_t *length, long *status) {
    *status = -1;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return NULL;
    CURL *easy = curl_easy_init();
    if (easy == NULL) return NULL;
    struct curl_slist *headers = NULL;
    if (authorization != NULL) {
        char header[512];
        snprintf(header, sizeof header, "Authorization: %s", authorization);
        headers = curl_slist_append(NULL, header);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    }
    fetched_t fetched = {calloc(1, 1), 0};
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &fetched);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    CURLcode code = curl_easy_perform(easy);
    if (code == CURLE_OK) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
    if (code != CURLE_OK) { free(fetched.body); return NULL; }
    *length = fetched.length;
    return fetched.body;
}
