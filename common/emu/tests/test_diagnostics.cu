// Every planted bug of the catalogue (bugs/planted_bugs.cu) is stopped with the right category of
// diagnostic, the kernel, and the line of the bug.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cudalab/emu/inspect.h"
#include "planted_bugs.h"

namespace {

// The line of `// BUG: name` in planted_bugs.cu.
int line_of(const std::string& name) {
  std::ifstream file(CUDALAB_BUGS_FILE);
  std::string text;
  for (int line = 1; std::getline(file, text); ++line)
    if (text.find("// BUG: " + name) != std::string::npos) return line;
  return -1;
}

class PlantedBugs : public ::testing::TestWithParam<PlantedBug> {};

TEST_P(PlantedBugs, NamedWithCategoryAndLine) {
  const PlantedBug& bug = GetParam();
  cudaDeviceReset();
  cudalab::emu::clear_diagnostic();
  cudalab::emu::set_time_limit(1);
  cudaError_t error = bug.run();
  std::string said = cudalab::emu::last_diagnostic();
  EXPECT_NE(error, cudaSuccess) << "the bug went unnoticed";
  // The category, or one of its alternatives ("a|b": a bug that is both, found either way first).
  bool named = false;
  for (size_t from = 0, bar;; from = bar + 1) {
    bar = std::string(bug.category).find('|', from);
    named =
        named || said.find(std::string(bug.category).substr(from, bar - from)) != std::string::npos;
    if (bar == std::string::npos) break;
  }
  EXPECT_TRUE(named) << "expected '" << bug.category << "' in: " << said;
  const std::string line = "planted_bugs.cu:" + std::to_string(line_of(bug.name));
  EXPECT_NE(said.find(line), std::string::npos) << "expected " << line << " in: " << said;
  cudaDeviceReset();
}

INSTANTIATE_TEST_SUITE_P(Catalogue, PlantedBugs, ::testing::ValuesIn(planted_bugs()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
