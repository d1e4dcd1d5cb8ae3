#ifndef TOPREGIONS_CSQLITE_SHIM_H
#define TOPREGIONS_CSQLITE_SHIM_H

// Debian's libsqlite3 is built with the pre-update hook (PRAGMA compile_options lists
// ENABLE_PREUPDATE_HOOK); its declarations are only visible with this defined.
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type topregions_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// sqlite3_db_config is variadic; Swift cannot call it directly.
static inline int topregions_sqlite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

#endif
