// glibc's allocator settings a yoke program runs with. glibc reads GLIBC_TUNABLES once, when the
// program starts, so use_fast_math_library_settings (util/thread_policy.h) sets it and runs the
// program again, as it does for the math libraries' settings.
//
// A training or decoding step allocates and frees its tensors (MBs each) every step. By default
// glibc serves large blocks with mmaps of their own and gives freed memory at the heap's top back
// to the system, so the next step's pages fault in again, 4 KB at a time; in a virtual machine
// where a fault is dear that was a tenth to a fifth of the time (docs/performance.md).
#pragma once

namespace yoke {

// Pure: the GLIBC_TUNABLES to run the yoke command `command` with (argv[1]; may be null), or
// nullptr for glibc's defaults. Blocks up to 32 MB come from the heap (mmap_threshold), freed
// memory stays with the process up to 1 GB (trim_threshold) and the heap asks for transparent
// huge pages (hugetlb=1: one fault a 2 MB page). Threads other than the first (`translate
// --workers 2`) allocate from arenas of their own, made of heaps of at most 64 MB, and glibc
// unmaps such a heap as soon as it is free if the heap before it has top_pad to spare, whatever
// trim_threshold says; top_pad = 64 MB, more than a heap can spare, keeps them (the first arena
// merely asks the system for 64 MB more address space at a time). Peak memory is a step's, as
// before; memory freed after the peak is kept. `serve` keeps glibc's defaults: a server runs for
// days and should give back what a burst of requests took.
const char* malloc_tunables_for(const char* command);

}  // namespace yoke
