#ifndef TOPREGIONS_CMICROHTTPD_SHIM_H
#define TOPREGIONS_CMICROHTTPD_SHIM_H

// Headers only: CHTTPServer loads libmicrohttpd with dlopen when a server starts, so the
// commands that never serve do not need it (and nothing links it).
#include <microhttpd.h>

#endif
