#include "digest.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* libcrypto's one-shot SHA256: unsigned char *SHA256(const unsigned char *, size_t, unsigned char *). */
static unsigned char *(*sha256_function)(const unsigned char *, size_t, unsigned char *);
static char load_error[512] = "";
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_crypto(void) {
    const char *name = getenv("TOPREGIONS_LIBCRYPTO");
    if (name == NULL || name[0] == '\0') name = "libcrypto.so.3";
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "libcrypto cannot be loaded");
        return;
    }
    sha256_function = (unsigned char *(*)(const unsigned char *, size_t, unsigned char *))dlsym(library, "SHA256");
    if (sha256_function == NULL) snprintf(load_error, sizeof load_error, "the libcrypto loaded has no SHA256");
}

const char *tr_digest_load_error(void) {
    pthread_once(&load_once, load_crypto);
    return load_error;
}

int tr_sha256(const void *bytes, size_t count, unsigned char *digest) {
    if (tr_digest_load_error()[0] != '\0') return -1;
    return sha256_function((const unsigned char *)bytes, count, digest) == NULL ? -1 : 0;
}
