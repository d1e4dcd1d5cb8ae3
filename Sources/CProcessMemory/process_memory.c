#include "process_memory.h"

#include <malloc.h>

int topregions_limit_malloc_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}
