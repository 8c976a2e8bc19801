// cuRAND's XORWOW skipahead and the host API's generators (see cudalab/emu/curand.h).
//
// One XORWOW step is linear over GF(2) on the 160 bits of v[0..4]: a 160 x 160 bit matrix A.
// Skipping n steps multiplies v by A^n, and skipping n subsequences by J^n with J = A^(2^67), as
// cuRAND defines a subsequence. The powers A^(2^b) and J^(2^b) come from repeated squaring, once
// per program; a skip applies those of the bits set in n. The counter d advances by 362437 per
// step, and not at all for subsequences, as in cuRAND.
#include "cudalab/emu/curand.h"

#include <array>
#include <boost/random/sobol.hpp>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "errors.h"
#include "memory.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

constexpr int kBits = 160, kWords = 5;
using Vec = std::array<uint32_t, kWords>;
struct Matrix {
  std::array<Vec, kBits> row;  // row i: which input bits make output bit i
};

Vec step(const Vec& v) {
  const uint32_t t = v[0] ^ (v[0] >> 2);
  return {v[1], v[2], v[3], v[4], (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1))};
}

bool bit(const Vec& v, int i) { return v[i / 32] >> (i % 32) & 1u; }

Vec times(const Matrix& m, const Vec& v) {
  Vec out{};
  for (int i = 0; i < kBits; ++i) {
    uint32_t parity = 0;
    for (int w = 0; w < kWords; ++w) parity ^= m.row[i][w] & v[w];
    if (__builtin_parity(parity)) out[i / 32] |= 1u << (i % 32);
  }
  return out;
}

Matrix square(const Matrix& m) {
  Matrix out{};
  for (int i = 0; i < kBits; ++i)
    for (int j = 0; j < kBits; ++j)
      if (bit(m.row[i], j))
        for (int w = 0; w < kWords; ++w) out.row[i][w] ^= m.row[j][w];
  return out;
}

Matrix one_step() {
  Matrix a{};
  for (int j = 0; j < kBits; ++j) {  // column j: the step of the j-th unit vector
    Vec e{};
    e[j / 32] = 1u << (j % 32);
    const Vec column = step(e);
    for (int i = 0; i < kBits; ++i)
      if (bit(column, i)) a.row[i][j / 32] |= 1u << (j % 32);
  }
  return a;
}

// powers[b] = A^(2^b) for steps, J^(2^b) = A^(2^(67 + b)) for subsequences.
struct Powers {
  std::vector<Matrix> steps, subsequences;
  Powers() {
    steps.push_back(one_step());
    for (int b = 1; b < 64 + 67; ++b) steps.push_back(square(steps.back()));
    subsequences.assign(steps.begin() + 67, steps.end());
    steps.resize(64);
  }
};
const Powers& powers() {
  static const Powers p;
  return p;
}

}  // namespace

void xorwow_skip(curandStateXORWOW_t* state, unsigned long long n, bool subsequences) {
  if (n == 0) return;
  const auto& table = subsequences ? powers().subsequences : powers().steps;
  Vec v{state->v[0], state->v[1], state->v[2], state->v[3], state->v[4]};
  for (int b = 0; b < 64; ++b)
    if (n >> b & 1) v = times(table[b], v);
  std::memcpy(state->v, v.data(), sizeof v);
  if (!subsequences) state->d += 362437u * static_cast<unsigned>(n);
}

}  // namespace cudalab::emu

// ---- host API -----------------------------------------------------------------------------

struct curandGenerator_st {
  curandRngType_t type;
  unsigned long long seed = 0, offset = 0;
  bool host;
  curandStateXORWOW_t state{};  // pseudo-random generators
  bool seeded = false;
  unsigned dimensions = 1;  // quasi-random generators: points drawn in each dimension
  unsigned long long points = 0;
};

namespace {
using cudalab::emu::check_range;
using cudalab::emu::kEarlierKernelStamp;
using cudalab::emu::mark_written;

bool is_quasi(curandRngType_t type) { return type >= CURAND_RNG_QUASI_DEFAULT; }

curandStatus_t create(curandGenerator_t* g, curandRngType_t type, bool host) {
  if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 || type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL64) {
    cudalab::emu::diagnose(
        "curandCreateGenerator: scrambled Sobol generators are not supported by the emu backend "
        "(CURAND_RNG_QUASI_SOBOL32 and SOBOL64 are)");
    return CURAND_STATUS_TYPE_ERROR;
  }
  static std::once_flag noted;
  if (!is_quasi(type))
    std::call_once(noted, [] {
      std::fprintf(
          stderr,
          "cudalab emu: note: curandGenerate* draws numbers of the same distributions as a "
          "GPU's generator, but not the same sequence (the device API's curand_init and "
          "curand do give a GPU's numbers)\n");
    });
  *g = new curandGenerator_st{type, 0, 0, host};
  return CURAND_STATUS_SUCCESS;
}

// Quasi-random output is ordered by dimension: n / dimensions points of the first, then the next.
template <class SobolState, class T, class Draw>
void draw_quasi(curandGenerator_t g, auto* vectors, T* out, size_t n, Draw draw) {
  const size_t per_dimension = n / g->dimensions;
  for (unsigned d = 0; d < g->dimensions; ++d) {
    SobolState state;
    curand_init(vectors[d], g->offset + g->points, &state);
    for (size_t j = 0; j < per_dimension; ++j) out[d * per_dimension + j] = draw(&state);
  }
  g->points += per_dimension;
}

// The output must be device memory (a device generator) or any memory (a host generator).
// `draw` takes a generator state: XORWOW for the pseudo-random ones, Sobol for the others (the
// normals take XORWOW only).
template <class T, class Draw>
curandStatus_t generate(curandGenerator_t g, T* out, size_t n, const char* call, Draw draw) {
  if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (is_quasi(g->type) && n % g->dimensions != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
  if (n > 0 && !g->host && check_range(out, n * sizeof(T), call, "output") != cudaSuccess)
    return CURAND_STATUS_LAUNCH_FAILURE;
  if (is_quasi(g->type)) {
    if constexpr (std::is_invocable_v<Draw, curandStateSobol32_t*>) {
      if (g->type == CURAND_RNG_QUASI_SOBOL64) {
        curandDirectionVectors64_t* vectors;
        curandGetDirectionVectors64(&vectors, CURAND_DIRECTION_VECTORS_64_JOEKUO6);
        draw_quasi<curandStateSobol64_t>(g, vectors, out, n, draw);
      } else {
        curandDirectionVectors32_t* vectors;
        curandGetDirectionVectors32(&vectors, CURAND_DIRECTION_VECTORS_32_JOEKUO6);
        draw_quasi<curandStateSobol32_t>(g, vectors, out, n, draw);
      }
    } else {  // normals: cuRAND's quasi-random ones use the inverse normal CDF
      cudalab::emu::diagnose(std::string(call) +
                             ": normals from a quasi-random (Sobol) generator are not supported "
                             "by the emu backend");
      return CURAND_STATUS_TYPE_ERROR;
    }
  } else {
    if (!g->seeded) {
      curand_init(g->seed, 0, g->offset, &g->state);
      g->seeded = true;
    }
    for (size_t i = 0; i < n; ++i) out[i] = draw(&g->state);
  }
  if (n > 0 && !g->host) mark_written(out, n * sizeof(T), kEarlierKernelStamp);  // device work
  return CURAND_STATUS_SUCCESS;
}

// The direction numbers of dimension d (d >= 1) from the Joe-Kuo primitive polynomials, as
// Boost.Random's Sobol lattice builds them: row k of dimension d is lattice bit (k, d).
template <class Word, int kBits>
std::vector<std::array<Word, kBits>> joe_kuo_direction_vectors() {
  constexpr unsigned dimensions = boost::random::detail::qrng_tables::sobol::max_dimension;
  const boost::random::qrng_detail::sobol_lattice<Word, kBits,
                                                  boost::random::detail::qrng_tables::sobol>
      lattice(dimensions);
  std::vector<std::array<Word, kBits>> vectors(dimensions);
  for (unsigned d = 0; d < dimensions; ++d)
    for (int k = 0; k < kBits; ++k) vectors[d][k] = *lattice.iter_at(size_t{dimensions} * k + d);
  return vectors;
}
}  // namespace

curandStatus_t curandCreateGenerator(curandGenerator_t* g, curandRngType_t type) {
  return create(g, type, false);
}
curandStatus_t curandCreateGeneratorHost(curandGenerator_t* g, curandRngType_t type) {
  return create(g, type, true);
}
curandStatus_t curandDestroyGenerator(curandGenerator_t g) {
  if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  delete g;
  return CURAND_STATUS_SUCCESS;
}
curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g, unsigned long long seed) {
  if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  g->seed = seed;
  g->seeded = false;
  return CURAND_STATUS_SUCCESS;
}
curandStatus_t curandSetGeneratorOffset(curandGenerator_t g, unsigned long long offset) {
  if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  g->offset = offset;
  g->seeded = false;
  g->points = 0;
  return CURAND_STATUS_SUCCESS;
}
curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g, curandOrdering_t) {
  return g == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_SUCCESS;
}
curandStatus_t curandSetStream(curandGenerator_t g, cudaStream_t) {
  return g == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_SUCCESS;
}
curandStatus_t curandGetVersion(int* version) {
  if (version == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
  *version = CURAND_VERSION;
  return CURAND_STATUS_SUCCESS;
}
curandStatus_t curandGenerate(curandGenerator_t g, unsigned int* out, size_t n) {
  if (g != nullptr && g->type == CURAND_RNG_QUASI_SOBOL64) return CURAND_STATUS_TYPE_ERROR;
  return generate(g, out, n, "curandGenerate",
                  [](auto* s) { return static_cast<unsigned int>(curand(s)); });
}
curandStatus_t curandGenerateUniform(curandGenerator_t g, float* out, size_t n) {
  return generate(g, out, n, "curandGenerateUniform", [](auto* s) { return curand_uniform(s); });
}
curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double* out, size_t n) {
  return generate(g, out, n, "curandGenerateUniformDouble",
                  [](auto* s) { return curand_uniform_double(s); });
}
curandStatus_t curandGenerateNormal(curandGenerator_t g, float* out, size_t n, float mean,
                                    float stddev) {
  if (n % 2 != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;  // as cuRAND: pairs of normals
  return generate(g, out, n, "curandGenerateNormal",
                  [=](curandState* s) { return mean + stddev * curand_normal(s); });
}
curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double* out, size_t n, double mean,
                                          double stddev) {
  if (n % 2 != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
  return generate(g, out, n, "curandGenerateNormalDouble",
                  [=](curandState* s) { return mean + stddev * curand_normal_double(s); });
}
curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float* out, size_t n, float mean,
                                       float stddev) {
  if (n % 2 != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
  return generate(g, out, n, "curandGenerateLogNormal",
                  [=](curandState* s) { return curand_log_normal(s, mean, stddev); });
}
curandStatus_t curandGenerateLongLong(curandGenerator_t g, unsigned long long* out, size_t n) {
  if (g != nullptr && g->type != CURAND_RNG_QUASI_SOBOL64) return CURAND_STATUS_TYPE_ERROR;
  return generate(g, out, n, "curandGenerateLongLong", [](auto* s) { return curand(s); });
}
curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t g, unsigned dimensions) {
  if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (dimensions < 1 || dimensions > 20000) return CURAND_STATUS_OUT_OF_RANGE;
  if (dimensions > boost::random::detail::qrng_tables::sobol::max_dimension) {
    cudalab::emu::diagnose(
        "curandSetQuasiRandomGeneratorDimensions: the emu backend has Sobol "
        "direction numbers for up to " +
        std::to_string(boost::random::detail::qrng_tables::sobol::max_dimension) +
        " dimensions, not " + std::to_string(dimensions));
    return CURAND_STATUS_OUT_OF_RANGE;
  }
  g->dimensions = dimensions;
  g->points = 0;
  return CURAND_STATUS_SUCCESS;
}
curandStatus_t curandGetDirectionVectors32(curandDirectionVectors32_t* vectors[],
                                           curandDirectionVectorSet_t set) {
  if (set != CURAND_DIRECTION_VECTORS_32_JOEKUO6) return CURAND_STATUS_OUT_OF_RANGE;
  static auto table = joe_kuo_direction_vectors<unsigned int, 32>();
  *vectors = reinterpret_cast<curandDirectionVectors32_t*>(table.data());
  return CURAND_STATUS_SUCCESS;
}
curandStatus_t curandGetDirectionVectors64(curandDirectionVectors64_t* vectors[],
                                           curandDirectionVectorSet_t set) {
  if (set != CURAND_DIRECTION_VECTORS_64_JOEKUO6) return CURAND_STATUS_OUT_OF_RANGE;
  static auto table = joe_kuo_direction_vectors<unsigned long long, 64>();
  *vectors = reinterpret_cast<curandDirectionVectors64_t*>(table.data());
  return CURAND_STATUS_SUCCESS;
}
