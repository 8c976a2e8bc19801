#include "cudalab/data.h"

#include <cstdlib>
#include <cstring>
#include <random>

namespace cudalab {

uint64_t seed_for(const std::string& test_name) {
  if (const char* env = std::getenv("CUDALAB_SEED"); env && *env)
    return std::strtoull(env, nullptr, 10);
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across compilers and runs
  for (unsigned char c : test_name) h = (h ^ c) * 1099511628211ull;
  return h % 1000000007ull;
}

namespace {
template <class Distribution>
std::vector<typename Distribution::result_type> draw(size_t n, uint64_t seed, Distribution dist) {
  std::mt19937_64 rng(seed);
  std::vector<typename Distribution::result_type> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}
}  // namespace

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  return draw(n, seed, std::uniform_real_distribution<float>(lo, hi));
}

std::vector<int> random_ints(size_t n, uint64_t seed, int lo, int hi) {
  return draw(n, seed, std::uniform_int_distribution<int>(lo, hi));
}

float poison_float() {
  float x;
  std::memcpy(&x, &kPoisonBits, sizeof x);
  return x;
}

bool is_poison(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits == kPoisonBits;
}

}  // namespace cudalab
