// mimalloc's options for the executables that link it (cmake/DistirHelpers.cmake:
// distir_link_allocator). Set before main, so before the first decommit.
//
// mimalloc returns freed pages to the system 25 ms after they empty (decommit);
// the search frees a template of millions of objects and builds the next at
// once, so every returned page came back as a page fault (~15 us on this VM).
// Kept committed, the pages are reused: on a sample of the 1024-GPU space
// system time fell from 0.7-1.2 s to 0.2-0.3 s and peak RSS stayed the same
// (docs/cost_model.md §3.7).

#include <mimalloc.h>

namespace {

const bool kKeepFreedPages = [] {
  mi_option_disable(mi_option_allow_decommit);
  return true;
}();

}  // namespace
