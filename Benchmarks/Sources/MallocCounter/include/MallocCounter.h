#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

/// The number of heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) made by
/// the whole process so far. The counting allocator replaces glibc's entry points in the benchmark executable
/// and forwards to glibc's own implementation (__libc_malloc and friends).
long malloc_counter_allocations(void);

#endif
