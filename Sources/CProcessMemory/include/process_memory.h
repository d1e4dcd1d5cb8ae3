#ifndef TOPREGIONS_PROCESS_MEMORY_H
#define TOPREGIONS_PROCESS_MEMORY_H

/// Caps the number of glibc malloc arenas the process's threads may create (mallopt's
/// M_ARENA_MAX, which Swift's Glibc module does not import). Returns 1 on success, 0 on
/// failure, as mallopt does.
int topregions_limit_malloc_arenas(int count);

#endif
