#ifndef TOPREGIONS_CSQLITE_SHIM_H
#define TOPREGIONS_CSQLITE_SHIM_H

// Debian's libsqlite3 is built with the pre-update hook (PRAGMA compile_options lists
// ENABLE_PREUPDATE_HOOK); its declarations are only visible with this defined.
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>
#include <stddef.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type topregions_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// sqlite3_db_config is variadic; Swift cannot call it directly.
static inline int topregions_sqlite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

// The WAL-index (the -shm file's first region), mapped through SQLite's own VFS, so that no
// other file descriptor is opened on the -shm file (closing one would drop every POSIX lock
// this process holds on it). NULL when the connection has no shared memory (not WAL, or
// exclusive locking). Valid until the connection closes.
static inline const volatile unsigned char *topregions_sqlite_wal_index(sqlite3 *db) {
    sqlite3_file *file = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == NULL) return NULL;
    if (file->pMethods == NULL || file->pMethods->iVersion < 2 || file->pMethods->xShmMap == NULL) return NULL;
    void volatile *region = NULL;
    if (file->pMethods->xShmMap(file, 0, 32768, 0, &region) != SQLITE_OK) return NULL;
    return (const volatile unsigned char *)region;
}

// A hash of the WAL-index header (https://www.sqlite.org/walformat.html, "the wal-index
// header": 48 bytes a writer rewrites, twice, at every commit, its change counter among
// them) when its two copies agree; 0 while they do not (a commit is being written).
static inline unsigned long long topregions_sqlite_wal_index_state(const volatile unsigned char *header) {
    unsigned char first[48], second[48];
    for (int i = 0; i < 48; i++) first[i] = header[i];
    __sync_synchronize();
    for (int i = 0; i < 48; i++) second[i] = header[48 + i];
    for (int i = 0; i < 48; i++) if (first[i] != second[i]) return 0;
    unsigned long long hash = 14695981039346656037ULL;
    for (int i = 0; i < 48; i++) hash = (hash ^ first[i]) * 1099511628211ULL;
    return hash == 0 ? 1 : hash;
}

#endif
