// cuRAND on the emu backend: the device API's XORWOW generator (curandState, curand_init, curand,
// curand_uniform, curand_normal, their double and log-normal forms, skipahead) computed exactly as
// cuRAND computes it, so a kernel draws the same numbers as on a GPU (normals may differ in the
// last bits: the GPU's Box-Muller uses its fast sine and cosine); and the host API's pseudo-random
// generators (curandCreateGenerator, curandGenerate*), which draw numbers of the same distributions
// but not the same sequences as a GPU's (the host API does not say how it lays its states out).
// Quasi-random Sobol sequences (32 and 64 bits, device and host API) use the Joe-Kuo direction
// numbers cuRAND uses, computed by Boost.Random, so they are a GPU's exact sequences (up to
// Boost's 3,667 dimensions; cuRAND has 20,000). Scrambled Sobol and quasi-random normals are not
// supported: the generator refuses them with a message.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "cudalab/emu/types.h"

#define CURAND_H_
#define CURAND_KERNEL_H_
#define CURAND_VERSION 10400

enum curandStatus {
  CURAND_STATUS_SUCCESS = 0,
  CURAND_STATUS_VERSION_MISMATCH = 100,
  CURAND_STATUS_NOT_INITIALIZED = 101,
  CURAND_STATUS_ALLOCATION_FAILED = 102,
  CURAND_STATUS_TYPE_ERROR = 103,
  CURAND_STATUS_OUT_OF_RANGE = 104,
  CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105,
  CURAND_STATUS_DOUBLE_PRECISION_REQUIRED = 106,
  CURAND_STATUS_LAUNCH_FAILURE = 201,
  CURAND_STATUS_PREEXISTING_FAILURE = 202,
  CURAND_STATUS_INITIALIZATION_FAILED = 203,
  CURAND_STATUS_ARCH_MISMATCH = 204,
  CURAND_STATUS_INTERNAL_ERROR = 999,
};
typedef enum curandStatus curandStatus_t;
typedef enum curandStatus curandResult;
enum curandRngType {
  CURAND_RNG_TEST = 0,
  CURAND_RNG_PSEUDO_DEFAULT = 100,
  CURAND_RNG_PSEUDO_XORWOW = 101,
  CURAND_RNG_PSEUDO_MRG32K3A = 121,
  CURAND_RNG_PSEUDO_MTGP32 = 141,
  CURAND_RNG_PSEUDO_MT19937 = 142,
  CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161,
  CURAND_RNG_QUASI_DEFAULT = 200,
  CURAND_RNG_QUASI_SOBOL32 = 201,
  CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 = 202,
  CURAND_RNG_QUASI_SOBOL64 = 203,
  CURAND_RNG_QUASI_SCRAMBLED_SOBOL64 = 204,
};
typedef enum curandRngType curandRngType_t;
enum curandOrdering {
  CURAND_ORDERING_PSEUDO_BEST = 100,
  CURAND_ORDERING_PSEUDO_DEFAULT = 101,
  CURAND_ORDERING_PSEUDO_SEEDED = 102,
  CURAND_ORDERING_QUASI_DEFAULT = 201,
};
typedef enum curandOrdering curandOrdering_t;
struct curandGenerator_st;
typedef curandGenerator_st* curandGenerator_t;
enum curandDirectionVectorSet {
  CURAND_DIRECTION_VECTORS_32_JOEKUO6 = 101,
  CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6 = 102,
  CURAND_DIRECTION_VECTORS_64_JOEKUO6 = 103,
  CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6 = 104,
};
typedef enum curandDirectionVectorSet curandDirectionVectorSet_t;
typedef unsigned int curandDirectionVectors32_t[32];
typedef unsigned long long curandDirectionVectors64_t[64];

curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t type);
curandStatus_t curandCreateGeneratorHost(curandGenerator_t* generator, curandRngType_t type);
curandStatus_t curandDestroyGenerator(curandGenerator_t generator);
curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator,
                                                  unsigned long long seed);
curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset);
curandStatus_t curandSetGeneratorOrdering(curandGenerator_t generator, curandOrdering_t order);
curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream);
curandStatus_t curandGetVersion(int* version);
curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int* out, size_t n);
curandStatus_t curandGenerateUniform(curandGenerator_t generator, float* out, size_t n);
curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double* out, size_t n);
curandStatus_t curandGenerateNormal(curandGenerator_t generator, float* out, size_t n, float mean,
                                    float stddev);
curandStatus_t curandGenerateNormalDouble(curandGenerator_t generator, double* out, size_t n,
                                          double mean, double stddev);
curandStatus_t curandGenerateLogNormal(curandGenerator_t generator, float* out, size_t n,
                                       float mean, float stddev);
curandStatus_t curandGenerateLongLong(curandGenerator_t generator, unsigned long long* out,
                                      size_t n);
curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t generator,
                                                       unsigned int num_dimensions);
// Host tables of direction vectors, one row per dimension (the first: van der Corput's).
curandStatus_t curandGetDirectionVectors32(curandDirectionVectors32_t* vectors[],
                                           curandDirectionVectorSet_t set);
curandStatus_t curandGetDirectionVectors64(curandDirectionVectors64_t* vectors[],
                                           curandDirectionVectorSet_t set);

// ---- device API ---------------------------------------------------------------------------
struct curandStateXORWOW {
  unsigned int d, v[5];
  int boxmuller_flag;
  int boxmuller_flag_double;
  float boxmuller_extra;
  double boxmuller_extra_double;
};
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStateXORWOW curandState_t;
typedef struct curandStateXORWOW curandState;

namespace cudalab::emu {
// state.v = J^subsequence A^offset state.v (J = A^(2^67)), by squarings computed once.
void xorwow_skip(curandStateXORWOW_t* state, unsigned long long steps, bool subsequences);
}  // namespace cudalab::emu

inline void skipahead(unsigned long long n, curandStateXORWOW_t* state) {
  cudalab::emu::xorwow_skip(state, n, false);
}
inline void skipahead_sequence(unsigned long long n, curandStateXORWOW_t* state) {
  cudalab::emu::xorwow_skip(state, n, true);
}
inline void curand_init(unsigned long long seed, unsigned long long subsequence,
                        unsigned long long offset, curandStateXORWOW_t* state) {
  // The seed is split, salted and mixed into the five words as cuRAND does.
  const unsigned s0 = static_cast<unsigned>(seed) ^ 0xaad26b49u;
  const unsigned s1 = static_cast<unsigned>(seed >> 32) ^ 0xf7dcefddu;
  const unsigned t0 = 1099087573u * s0, t1 = 2591861531u * s1;
  state->d = 6615241u + t1 + t0;
  state->v[0] = 123456789u + t0;
  state->v[1] = 362436069u ^ t0;
  state->v[2] = 521288629u + t1;
  state->v[3] = 88675123u ^ t1;
  state->v[4] = 5783321u + t0;
  skipahead_sequence(subsequence, state);
  skipahead(offset, state);
  state->boxmuller_flag = state->boxmuller_flag_double = 0;
  state->boxmuller_extra = 0.0f;
  state->boxmuller_extra_double = 0.0;
}
inline unsigned int curand(curandStateXORWOW_t* state) {
  const unsigned t = state->v[0] ^ (state->v[0] >> 2);
  state->v[0] = state->v[1];
  state->v[1] = state->v[2];
  state->v[2] = state->v[3];
  state->v[3] = state->v[4];
  state->v[4] = (state->v[4] ^ (state->v[4] << 4)) ^ (t ^ (t << 1));
  state->d += 362437u;
  return state->v[4] + state->d;
}
namespace cudalab::emu {
constexpr float k2pow32inv = 2.3283064e-10f;
constexpr double k2pow32invDouble = 2.3283064365386963e-10;
constexpr double k2pow53invDouble = 1.1102230246251565e-16;
constexpr float k2pow32inv2pi = 2.3283064e-10f * 6.2831855f;
}  // namespace cudalab::emu
// Uniform in (0, 1]: never 0, as cuRAND's.
inline float curand_uniform(curandStateXORWOW_t* state) {
  using namespace cudalab::emu;
  return curand(state) * k2pow32inv + (k2pow32inv / 2.0f);
}
inline double curand_uniform_double(curandStateXORWOW_t* state) {
  using namespace cudalab::emu;
  const unsigned x = curand(state), y = curand(state);
  const unsigned long long z =
      static_cast<unsigned long long>(x) ^ (static_cast<unsigned long long>(y) << (53 - 32));
  return z * k2pow53invDouble + (k2pow53invDouble / 2.0);
}
// Box-Muller: two normals from two draws; the second is kept for the next call.
inline float curand_normal(curandStateXORWOW_t* state) {
  using namespace cudalab::emu;
  if (state->boxmuller_flag != 1) {
    const unsigned x = curand(state), y = curand(state);
    const float u = x * k2pow32inv + (k2pow32inv / 2), v = y * k2pow32inv2pi + (k2pow32inv2pi / 2);
    const float s = std::sqrt(-2.0f * std::log(u));
    state->boxmuller_extra = std::cos(v) * s;
    state->boxmuller_flag = 1;
    return std::sin(v) * s;
  }
  state->boxmuller_flag = 0;
  return state->boxmuller_extra;
}
inline double curand_normal_double(curandStateXORWOW_t* state) {
  using namespace cudalab::emu;
  if (state->boxmuller_flag_double != 1) {
    const unsigned x0 = curand(state), x1 = curand(state), y0 = curand(state), y1 = curand(state);
    const unsigned long long zx =
        static_cast<unsigned long long>(x0) ^ (static_cast<unsigned long long>(x1) << (53 - 32));
    const unsigned long long zy =
        static_cast<unsigned long long>(y0) ^ (static_cast<unsigned long long>(y1) << (53 - 32));
    const double u = zx * k2pow53invDouble + (k2pow53invDouble / 2.0);
    const double v = zy * (k2pow53invDouble * 2.0) + k2pow53invDouble;  // in units of pi
    const double s = std::sqrt(-2.0 * std::log(u));
    state->boxmuller_extra_double = std::cos(v * M_PI) * s;
    state->boxmuller_flag_double = 1;
    return std::sin(v * M_PI) * s;
  }
  state->boxmuller_flag_double = 0;
  return state->boxmuller_extra_double;
}
inline float curand_log_normal(curandStateXORWOW_t* state, float mean, float stddev) {
  return std::exp(mean + stddev * curand_normal(state));
}
inline double curand_log_normal_double(curandStateXORWOW_t* state, double mean, double stddev) {
  return std::exp(mean + stddev * curand_normal_double(state));
}
inline float2 curand_normal2(curandStateXORWOW_t* state) {
  const float a = curand_normal(state);
  return {a, curand_normal(state)};
}

// ---- Sobol quasi-random sequences (device API) ----------------------------------------------
// Point i of a dimension is the XOR of the direction vectors at the bits set in gray(i) =
// i ^ (i >> 1); stepping from i to i + 1 flips one bit of gray(i): the lowest zero bit of i.
struct curandStateSobol32 {
  unsigned int i, x, c;
  unsigned int direction_vectors[32];
};
typedef struct curandStateSobol32 curandStateSobol32_t;
struct curandStateSobol64 {
  unsigned long long i, x, c;
  unsigned long long direction_vectors[64];
};
typedef struct curandStateSobol64 curandStateSobol64_t;

template <class SobolState>
requires std::is_same_v<SobolState, curandStateSobol32_t> ||
    std::is_same_v<SobolState, curandStateSobol64_t>
inline void skipahead(decltype(SobolState::i) n, SobolState* state) {
  constexpr int bits = 8 * sizeof state->x;
  state->i += n;
  const auto gray = state->i ^ (state->i >> 1);
  state->x = state->c;
  for (int k = 0; k < bits; ++k)
    if (gray >> k & 1) state->x ^= state->direction_vectors[k];
}
inline void curand_init(unsigned int* direction_vectors, unsigned int offset,
                        curandStateSobol32_t* state) {
  state->i = state->c = state->x = 0;
  for (int k = 0; k < 32; ++k) state->direction_vectors[k] = direction_vectors[k];
  skipahead(offset, state);
}
inline void curand_init(unsigned long long* direction_vectors, unsigned long long offset,
                        curandStateSobol64_t* state) {
  state->i = state->c = state->x = 0;
  for (int k = 0; k < 64; ++k) state->direction_vectors[k] = direction_vectors[k];
  skipahead(offset, state);
}
inline unsigned int curand(curandStateSobol32_t* state) {
  const unsigned int point = state->x;
  state->x ^= state->direction_vectors[std::countr_one(state->i)];
  ++state->i;
  return point;
}
inline unsigned long long curand(curandStateSobol64_t* state) {
  const unsigned long long point = state->x;
  state->x ^= state->direction_vectors[std::countr_one(state->i)];
  ++state->i;
  return point;
}
inline float curand_uniform(curandStateSobol32_t* state) {
  using namespace cudalab::emu;
  return curand(state) * k2pow32inv + (k2pow32inv / 2.0f);
}
inline double curand_uniform_double(curandStateSobol32_t* state) {
  using namespace cudalab::emu;
  return curand(state) * k2pow32invDouble + k2pow32invDouble;
}
inline float curand_uniform(curandStateSobol64_t* state) {
  using namespace cudalab::emu;
  return static_cast<unsigned int>(curand(state) >> 32) * k2pow32inv + (k2pow32inv / 2.0f);
}
inline double curand_uniform_double(curandStateSobol64_t* state) {
  using namespace cudalab::emu;
  return (curand(state) >> 11) * k2pow53invDouble + (k2pow53invDouble / 2.0);
}
