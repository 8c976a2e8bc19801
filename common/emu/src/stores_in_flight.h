// Internal header of the emu runtime (not for programs): the global store each worker is making.
//
// A check runs before its access, so for a moment a block's bytes carry its stamp (memory.h) while
// its store has not landed yet. A write over another block's bytes is judged by the value that
// block left (overwrites.cpp): before it reads that value, the check waits until no worker has a
// store to those bytes in flight (wait_for_landing, global_checks.cpp).
//
// Algorithm: each worker publishes, as each checked access starts (access_fine and check_access),
// the address of the plain store it makes, or 0, with release order: whoever sees the next
// publication sees the store before it. A block's end, and a wait at grid.sync(), publish 0. The
// stamp is written after the publication, with release order too, so a check that sees the stamp
// sees the publication.
#pragma once

#include <atomic>
#include <cstdint>

namespace cudalab::emu {

inline constexpr unsigned kMaxWorkers = 256;
struct alignas(64) StoreInFlight {  // (a cache line each: every access of its worker writes it)
  std::atomic<uintptr_t> address{0};
};
inline StoreInFlight stores_in_flight[kMaxWorkers];
inline std::atomic<unsigned> stores_claimed{0};  // entries handed out (may pass kMaxWorkers)
// This worker's entry, claimed when it first runs blocks (claim_store_in_flight); nullptr before,
// and for a worker past kMaxWorkers (its stores are not waited for).
inline constinit thread_local std::atomic<uintptr_t>* store_in_flight = nullptr;

inline void claim_store_in_flight() {
  if (store_in_flight != nullptr) return;
  const unsigned slot = stores_claimed.fetch_add(1);
  if (slot < kMaxWorkers) store_in_flight = &stores_in_flight[slot].address;
}

[[gnu::always_inline]] inline void publish_store(uintptr_t a) {
  if (store_in_flight != nullptr) store_in_flight->store(a, std::memory_order_release);
}

}  // namespace cudalab::emu
