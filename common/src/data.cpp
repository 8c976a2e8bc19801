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

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<int> random_ints(size_t n, uint64_t seed, int lo, int hi) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int> v(n);
  for (int& x : v) x = dist(rng);
  return v;
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
