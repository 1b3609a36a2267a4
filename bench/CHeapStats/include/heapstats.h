#ifndef FLINT_HEAPSTATS_H
#define FLINT_HEAPSTATS_H
#include <stddef.h>
/// Bytes the allocator has handed out and not had back (small blocks plus mmapped ones).
size_t flint_heap_bytes_in_use(void);
#endif
