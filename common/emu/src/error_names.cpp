// cudaGetErrorName and cudaGetErrorString: the names and strings of CUDA 13 (errors.def). Also
// compiled into the remote runner's checker (common/remote), which has no other part of the emu.
#include "cudalab/emu/runtime.h"

namespace {
struct ErrorText {
  cudaError_t code;
  const char* name;
  const char* text;
};
constexpr ErrorText kErrors[] = {
#define CUDALAB_ERROR(name, code, text) {name, #name, text},
#include "cudalab/emu/errors.def"
#undef CUDALAB_ERROR
};

const ErrorText* find(cudaError_t code) {
  for (const ErrorText& e : kErrors)
    if (e.code == code) return &e;
  return nullptr;
}
}  // namespace

const char* cudaGetErrorString(cudaError_t error) {
  const ErrorText* e = find(error);
  return e ? e->text : "unrecognized error code";
}

const char* cudaGetErrorName(cudaError_t error) {
  const ErrorText* e = find(error);
  return e ? e->name : "unrecognized error code";
}
