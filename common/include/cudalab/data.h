// Test inputs: seeded random data and the poison that marks unwritten outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cudalab {

// The seed of a test's random inputs: CUDALAB_SEED when set, else one derived from the test's
// name, so that every test has its own inputs and a failure replays with CUDALAB_SEED=<seed>.
uint64_t seed_for(const std::string& test_name);

std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);
std::vector<int> random_ints(size_t n, uint64_t seed, int lo, int hi);

// A quiet NaN with a recognisable payload: no correct kernel writes it, so an output element that
// still holds it after a run was never written.
float poison_float();
bool is_poison(float x);
inline constexpr int kPoisonInt = -1'094'795'586;  // 0xBEBEBEBE

}  // namespace cudalab
