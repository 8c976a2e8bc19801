// Internal header of the emu runtime (not for programs): source lines and names of code addresses
// (symbolize.cpp).
#pragma once

#include <string>

#include "cudalab/records.h"

namespace cudalab::emu {

// The source line of a code address in the program (addr2line); not known where it has no line
// info.
records::SourceLine source_line(const void* pc);
// The demangled name of the function at `function` ("" when unknown).
std::string symbol_name(const void* function);
}  // namespace cudalab::emu
