// mimalloc's options for the executables that link it (cmake/DistirHelpers.cmake:
// distir_link_allocator). Set before main, so before the first decommit.
//
// mimalloc returns freed pages to the system 25 ms after they empty (decommit);
// the search frees a template of millions of objects and builds the next at
// once, so every returned page came back as a page fault (~15 us on this VM).
// Kept committed, the pages are reused: on a sample of the 1024-GPU space
// system time fell from 0.7-1.2 s to 0.2-0.3 s and peak RSS stayed the same
// (docs/cost_model.md §3.7).
//
// Each first touch of a 4 KiB page is a page fault, dear on this VM (a
// paravirtualised kernel). mimalloc asks for transparent huge pages (2 MiB,
// madvise) for the segments it maps once large_os_pages is on; set here it
// covers every segment but the first, which the libraries' own start-up
// allocations mapped before this runs (mimalloc is a shared library: its
// initialisation and theirs come before any constructor of the program). That
// one is advised here, the part of it not yet touched: the MLP-1B grid at
// batch 8192 faults 956 pages instead of 2,072, 77 instead of 92 ms of CPU;
// the 75-configuration sample of the 1024-GPU space 10.8k -> 1.3k page faults,
// 5.04 / 5.24 -> 4.86 / 4.92 user-s (docs/cost_model.md §3.7).
// MIMALLOC_LARGE_OS_PAGES=1 in the environment has mimalloc map the first
// segment so as well (577 page faults, 72 ms); =0 turns huge pages off.
// Without transparent huge pages the kernel maps 4 KiB ones.

#include <mimalloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

// Asks for transparent huge pages on the mapping that holds `block` (one of
// mimalloc's segments): the pages of it not yet touched then fault in 2 MiB
// at a time. Best effort: without /proc or transparent huge pages nothing
// changes.
void AdviseHugePages(const void* block) {
  std::unique_ptr<FILE, int (*)(FILE*)> maps(std::fopen("/proc/self/maps", "r"), &std::fclose);
  if (!maps) return;
  const auto at = reinterpret_cast<uintptr_t>(block);
  unsigned long begin = 0, end = 0;
  char line[512];
  while (std::fgets(line, sizeof line, maps.get()) != nullptr) {
    if (std::sscanf(line, "%lx-%lx", &begin, &end) != 2 || at < begin || at >= end) continue;
    const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
    const uintptr_t last = end & ~(kHugePage - 1);
    if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
    return;
  }
}

const bool kOptionsSet = [] {
  mi_option_disable(mi_option_allow_decommit);
  // mimalloc has read its environment before this runs (set_default would
  // come too late).
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) {
    mi_option_enable(mi_option_large_os_pages);
    void* block = mi_malloc(16);
    AdviseHugePages(block);
    mi_free(block);
  }
  return true;
}();

}  // namespace
