#include "curl_transfer.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libcurl's entry points, found with dlsym. The prototypes are libcurl's own (setopt and
   getinfo are variadic), so every call below is an ordinary, well-typed C call. */
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
} curl;

static int curl_loaded = 0;
static char load_error[512] = "";
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void *symbol(void *library, const char *name) {
    void *address = dlsym(library, name);
    if (address == NULL && load_error[0] == '\0') {
        snprintf(load_error, sizeof load_error, "the libcurl loaded has no %s", name);
    }
    return address;
}

static void load_curl(void) {
    /* TOPREGIONS_LIBCURL names another build of libcurl (a path or a soname). */
    const char *name = getenv("TOPREGIONS_LIBCURL");
    if (name == NULL || name[0] == '\0') name = "libcurl.so.4";
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "libcurl cannot be loaded");
        return;
    }
    curl.global_init = (CURLcode (*)(long))symbol(library, "curl_global_init");
    curl.easy_init = (CURL * (*)(void)) symbol(library, "curl_easy_init");
    curl.easy_setopt = (CURLcode (*)(CURL *, CURLoption, ...))symbol(library, "curl_easy_setopt");
    curl.easy_perform = (CURLcode (*)(CURL *))symbol(library, "curl_easy_perform");
    curl.easy_getinfo = (CURLcode (*)(CURL *, CURLINFO, ...))symbol(library, "curl_easy_getinfo");
    curl.easy_cleanup = (void (*)(CURL *))symbol(library, "curl_easy_cleanup");
    curl.easy_strerror = (const char *(*)(CURLcode))symbol(library, "curl_easy_strerror");
    if (load_error[0] != '\0') return;
    /* Not thread-safe in libcurl before 7.84, hence once, before any transfer. */
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed");
        return;
    }
    curl_loaded = 1;
}

const char *tr_transfer_load_error(void) {
    pthread_once(&load_once, load_curl);
    return load_error;
}

/* A growing byte buffer with a ceiling. */
typedef struct {
    char *data;
    size_t length;
    size_t capacity;
    size_t limit;
    int exceeded;
} buffer;

static int buffer_append(buffer *into, const char *bytes, size_t count) {
    if (count > into->limit - into->length) {
        into->exceeded = 1;
        return 0;
    }
    if (into->length + count > into->capacity) {
        size_t capacity = into->capacity ? into->capacity : 16384;
        while (capacity < into->length + count) capacity *= 2;
        char *grown = realloc(into->data, capacity);
        if (grown == NULL) return 0;
        into->data = grown;
        into->capacity = capacity;
    }
    memcpy(into->data + into->length, bytes, count);
    into->length += count;
    return 1;
}

static size_t on_body(char *bytes, size_t size, size_t count, void *context) {
    /* Returning less than given aborts the transfer with CURLE_WRITE_ERROR. */
    return buffer_append((buffer *)context, bytes, size * count) ? size * count : 0;
}

static size_t on_header(char *bytes, size_t size, size_t count, void *context) {
    buffer *headers = (buffer *)context;
    size_t length = size * count;
    /* A status line starts another response (after a redirect or a 100 Continue). */
    if (length >= 5 && memcmp(bytes, "HTTP/", 5) == 0) headers->length = 0;
    return buffer_append(headers, bytes, length) ? length : 0;
}

static int on_progress(void *context, curl_off_t total_down, curl_off_t now_down, curl_off_t total_up, curl_off_t now_up) {
    (void)total_down; (void)now_down; (void)total_up; (void)now_up;
    const volatile int *cancelled = (const volatile int *)context;
    return cancelled != NULL && *cancelled != 0;
}

static tr_transfer_outcome outcome_of(CURLcode code, int body_exceeded) {
    switch (code) {
    case CURLE_OK: return TR_TRANSFER_OK;
    case CURLE_OPERATION_TIMEDOUT: return TR_TRANSFER_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED: return TR_TRANSFER_TOO_LARGE;
    case CURLE_WRITE_ERROR: return body_exceeded ? TR_TRANSFER_TOO_LARGE : TR_TRANSFER_FAILED;
    case CURLE_ABORTED_BY_CALLBACK: return TR_TRANSFER_CANCELLED;
    case CURLE_COULDNT_CONNECT: return TR_TRANSFER_CANNOT_CONNECT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return TR_TRANSFER_CANNOT_RESOLVE;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE: return TR_TRANSFER_CONNECTION_LOST;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION: return TR_TRANSFER_TLS;
    default: return TR_TRANSFER_FAILED;
    }
}

tr_transfer_outcome tr_transfer_get(const char *url, const char *user_agent, long timeout_ms, size_t max_bytes,
                                    const volatile int *cancelled, tr_transfer_result *result) {
    memset(result, 0, sizeof *result);
    pthread_once(&load_once, load_curl);
    if (!curl_loaded) return TR_TRANSFER_NO_LIBCURL;
    CURL *handle = curl.easy_init();
    if (handle == NULL) return TR_TRANSFER_FAILED;

    buffer body = {NULL, 0, 0, max_bytes, 0};
    buffer headers = {NULL, 0, 0, 256 * 1024, 0};
    curl.easy_setopt(handle, CURLOPT_URL, url);
    curl.easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    curl.easy_setopt(handle, CURLOPT_USERAGENT, user_agent);
    curl.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);
    curl.easy_setopt(handle, CURLOPT_MAXREDIRS, 5L);
    curl.easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  /* threads: no SIGALRM for DNS timeouts */
    curl.easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");  /* the limit applies to decoded bytes */
    curl.easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_bytes);
    curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_body);
    curl.easy_setopt(handle, CURLOPT_WRITEDATA, &body);
    curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION, on_header);
    curl.easy_setopt(handle, CURLOPT_HEADERDATA, &headers);
    curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl.easy_setopt(handle, CURLOPT_XFERINFODATA, (void *)cancelled);
    curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);

    CURLcode code = curl.easy_perform(handle);
    long status = 0;
    curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    curl.easy_cleanup(handle);

    result->status = status;
    result->body = body.data;
    result->body_length = body.length;
    result->headers = headers.data;
    result->headers_length = headers.length;
    result->curl_code = (int)code;
    const char *words = curl.easy_strerror(code);
    snprintf(result->curl_message, sizeof result->curl_message, "%s", words ? words : "");
    return outcome_of(code, body.exceeded);
}

void tr_transfer_free(tr_transfer_result *result) {
    free(result->body);
    free(result->headers);
    result->body = NULL;
    result->headers = NULL;
}
