// The runner's main() (its own file: a program that defines main() itself links without it, and
// is refused by the symbol rules by name, not by the linker).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace cudalab::remote {
int serve(int fd);  // runner.cpp
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--serve")
    return cudalab::remote::serve(std::atoi(argv[2]));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
