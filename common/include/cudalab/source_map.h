// Where this process finds a file of the workbook it was compiled from. The grader compiles the
// checker in its sandbox, where the workbook lies at /grade/workbook, and runs it outside, where
// the same files lie elsewhere: CUDALAB_SOURCE_MAP="FROM=TO" says that what was compiled under
// folder FROM lies under TO. (C++17: the runner's table is compiled by nvcc.)
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

namespace cudalab {

inline std::string where_to_read(const std::string& file) {
  const char* map = std::getenv("CUDALAB_SOURCE_MAP");
  const std::string_view given = map ? map : "";
  const size_t equals = given.find('=');
  if (equals == std::string_view::npos) return file;
  const std::string from(given.substr(0, equals)), to(given.substr(equals + 1));
  return file.compare(0, from.size() + 1, from + "/") == 0 ? to + file.substr(from.size()) : file;
}

}  // namespace cudalab
