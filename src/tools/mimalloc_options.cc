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
// allocations mapped before this runs. The 75-configuration sample of the
// 1024-GPU space on one core: 39k -> 13-17k page faults, 7.30 / 7.45 -> 6.81 /
// 7.12 user-s, the same peak RSS; on two ranks over the whole space no
// measurable change (docs/cost_model.md §3.7). MIMALLOC_LARGE_OS_PAGES=1 in
// the environment covers the first segment too (the MLP-1B grid at batch
// 8192 faults 580 pages instead of 2,080: 86-96 -> 70-75 ms); =0 turns it
// off. Without transparent huge pages the kernel maps 4 KiB ones.

#include <mimalloc.h>

#include <cstdlib>

namespace {

const bool kOptionsSet = [] {
  mi_option_disable(mi_option_allow_decommit);
  // mimalloc has read its environment before this runs (set_default would
  // come too late).
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) mi_option_enable(mi_option_large_os_pages);
  return true;
}();

}  // namespace
