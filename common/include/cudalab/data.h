// Test inputs: seeded random data and the poison that marks unwritten outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cudalab/poison.h"

namespace cudalab {

// The seed of a test's random inputs: CUDALAB_SEED when set, else one derived from the test's
// name, so that every test has its own inputs and a failure replays with CUDALAB_SEED=<seed>.
uint64_t seed_for(const std::string& test_name);

std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);
std::vector<int> random_ints(size_t n, uint64_t seed, int lo, int hi);

// The poison as a float (a quiet NaN with a recognisable payload, see poison.h): no correct kernel
// writes it, so an output element that still holds it after a run was never written.
float poison_float();
bool is_poison(float x);

}  // namespace cudalab
