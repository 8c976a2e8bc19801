// Memory-traffic counters of one kernel launch, as the emu backend measures them (common/emu).
// Plain data: the lab harnesses name them on both backends; only emu fills them in.
#pragma once

#include <string>
#include <vector>

#include "cudalab/records.h"

namespace cudalab {

// Counters of the memory traffic of instrumented kernels, as a GPU would see it. A warp is 32
// consecutive threads of a block; the accesses of a warp at one place in the code (the n-th time
// each of its threads gets there since the last barrier) form one request, as in lockstep.
// Global memory moves 32-byte sectors; shared memory serves 32 banks of 4-byte words per
// wavefront, and threads reading the same word share it (a broadcast).
struct AccessSite {
  records::SourceLine where;
  bool shared, store;  // (atomics are counted per launch, not per line)
  unsigned long long requests = 0;
  unsigned long long transactions = 0;        // global: sectors; shared: wavefronts
  unsigned long long ideal_transactions = 0;  // the fewest that the same bytes could need
  unsigned long long bytes = 0;               // requested by the threads
  unsigned max_degree = 0;                    // worst transactions/ideal of one request

  // Adds another site's counts: the same line reached at another code address, in another
  // launch, or on another worker.
  void add(const AccessSite& o) {
    requests += o.requests;
    transactions += o.transactions;
    ideal_transactions += o.ideal_transactions;
    bytes += o.bytes;
    max_degree = o.max_degree > max_degree ? o.max_degree : max_degree;
  }
};

struct LaunchCounters {
  std::string kernel, where;
  unsigned long long global_load_requests = 0, global_store_requests = 0;
  unsigned long long global_load_sectors = 0, global_store_sectors = 0;
  unsigned long long global_load_bytes = 0, global_store_bytes = 0;
  unsigned long long shared_load_requests = 0, shared_store_requests = 0;
  unsigned long long shared_wavefronts = 0, shared_ideal_wavefronts = 0;
  unsigned long long barriers = 0, atomics = 0;
  std::vector<AccessSite> sites;  // by source line

  // Bytes the threads asked for per byte moved (1: every sector fully used).
  double load_efficiency() const {
    return global_load_sectors ? double(global_load_bytes) / (32.0 * global_load_sectors) : 1.0;
  }
  double store_efficiency() const {
    return global_store_sectors ? double(global_store_bytes) / (32.0 * global_store_sectors) : 1.0;
  }
  // Wavefronts per ideal wavefront over all shared accesses (1: conflict-free).
  double bank_conflict_degree() const {
    return shared_ideal_wavefronts ? double(shared_wavefronts) / double(shared_ideal_wavefronts)
                                   : 1.0;
  }
  // The line whose shared accesses conflict worst, for a failed test: "bank_conflicts.cu:41:
  // 32-way bank conflict on its loads (32 passes per request where 1 would do)"; or, for global
  // memory (shared == false), the line whose requests use their sectors worst.
  std::string worst_line(bool shared) const {
    const AccessSite* worst = nullptr;
    auto ratio = [](const AccessSite& a) {
      return a.ideal_transactions ? double(a.transactions) / double(a.ideal_transactions) : 1.0;
    };
    for (const AccessSite& a : sites)
      if (a.shared == shared && ratio(a) > 1.0 && (worst == nullptr || ratio(a) > ratio(*worst)))
        worst = &a;
    if (worst == nullptr) return shared ? "no line has a bank conflict" : "every line is coalesced";
    const std::string what = worst->store ? "stores" : "loads";
    const auto per_request = [&](unsigned long long n) {
      return std::to_string(double(n) / double(worst->requests)).substr(0, 4);
    };
    if (shared)
      return worst->where.text() + ": up to " + std::to_string(worst->max_degree) +
             "-way bank conflict on its " + what + " (" + per_request(worst->transactions) +
             " passes per request where " + per_request(worst->ideal_transactions) + " would do)";
    return worst->where.text() + ": its " + what + " move " + per_request(worst->transactions) +
           " sectors per request where " + per_request(worst->ideal_transactions) +
           " would do (neighbouring threads should touch neighbouring addresses)";
  }
};

}  // namespace cudalab
