// Internal header of the emu runtime (not for programs): source lines and names of code addresses
// (symbolize.cpp).
#pragma once

#include <string>
#include <vector>

#include "cudalab/records.h"

namespace cudalab::emu {

// The source line of a code address in the program (addr2line); not known where it has no line
// info.
records::SourceLine source_line(const void* pc);
// A stand-in code address for `file`:`line` (the same for the same line), which source_line
// answers with that line: the site of a store made without an instruction of its own
// (proven_blocks.cpp records a block's stores before it runs).
const void* line_marker(const char* file, unsigned line);
// The lines of a code address in the program's own code, innermost first: the access, then each
// call it was inlined into (a helper's load, then the kernel's line that called the helper).
std::vector<records::SourceLine> source_lines(const void* pc);
// The demangled name of the function at `function` ("" when unknown).
std::string symbol_name(const void* function);
}  // namespace cudalab::emu
