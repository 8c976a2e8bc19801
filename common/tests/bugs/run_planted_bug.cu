// Runs one planted bug by name (or lists them): for compute-sanitizer on a GPU.
//   run_planted_bug             lists the bugs
//   run_planted_bug NAME        runs one, prints the error it returned
#include <cstdio>
#include <cstring>

#include "planted_bugs.h"

int main(int argc, char** argv) {
  for (const PlantedBug& bug : planted_bugs()) {
    if (argc < 2) {
      std::printf("%s\n", bug.name);
    } else if (std::strcmp(argv[1], bug.name) == 0) {
      cudaError_t e = bug.run();
      std::printf("%s: %s\n", bug.name, cudaGetErrorName(e));
      return e == cudaSuccess ? 0 : 1;
    }
  }
  if (argc < 2) return 0;
  std::fprintf(stderr, "run_planted_bug: no bug named '%s'\n", argv[1]);
  return 2;
}
