// Internal header of the emu runtime (not for programs): source lines and names of code addresses
// (symbolize.cpp).
#pragma once

#include <string>

namespace cudalab::emu {

// "file.cu:12" for a code address in the program (addr2line), or "" when it has no line info.
std::string source_line(const void* pc);
// The demangled name of the function at `function` ("" when unknown).
std::string symbol_name(const void* function);
}  // namespace cudalab::emu
