// The name of the array an allocation fills, read from its source line: messages say "allocated
// at vector_add.cu:15 (d_A)". The remote checker reads its own files and sends the names of the
// harness's arrays with its calls, since the runner cannot read them in the grader's sandbox.
#include "array_names.h"

#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <vector>

#include "cudalab/source_map.h"

namespace cudalab::emu {
namespace {

// Whether the DeviceArray declarator whose arguments open at `open` is followed by another one
// (`DeviceArray<float> d_M(M), d_N(N);`): the allocation's line then names two arrays.
bool another_declarator_follows(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(' || text[i] == '{') ++depth;
    if ((text[i] == ')' || text[i] == '}') && --depth == 0) {
      const size_t next = text.find_first_not_of(" \t", i + 1);
      return next != std::string::npos && text[next] == ',';
    }
  }
  return false;
}

}  // namespace

std::string array_name(const std::string& file, int line) {
  static std::mutex files_mutex;
  static std::map<std::string, std::vector<std::string>> files;  // each file is read once
  std::lock_guard<std::mutex> lock(files_mutex);
  auto [it, added] = files.try_emplace(file);
  if (added) {
    std::ifstream in(where_to_read(file));
    for (std::string text; std::getline(in, text);) it->second.push_back(text);
  }
  if (line < 1 || size_t(line) > it->second.size()) return "";
  static const std::regex allocation(
      R"(cudaMalloc(?:Managed|Host)?\s*\(\s*(?:\([^)]*\)\s*)?&\s*(\w+)|DeviceArray<[^;]*>\s+(\w+)\s*[({])");
  const std::string& text = it->second[line - 1];
  std::string name;
  for (auto m = std::sregex_iterator(text.begin(), text.end(), allocation);
       m != std::sregex_iterator(); ++m) {
    if (!name.empty()) return "";  // two on one line: which one is not known
    if ((*m)[2].matched && another_declarator_follows(text, m->position() + m->length() - 1))
      return "";
    name = (*m)[1].matched ? (*m)[1].str() : (*m)[2].str();
  }
  return name;
}

}  // namespace cudalab::emu
