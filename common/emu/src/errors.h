// Internal header of the emu runtime (not for programs): errors, the sticky error and diagnostics
// (errors.cpp).
#pragma once

#include <string>

#include "cudalab/emu/launch.h"
#include "cudalab/emu/types.h"
#include "diagnostic.h"

namespace cudalab::emu {

// Records `error` as this host thread's last error and returns it.
cudaError_t set_last_error(cudaError_t error);
// An execution error: like a GPU context after a fault, every later call returns it until
// cudaDeviceReset. The diagnostic explains it to the student.
void fail(cudaError_t error, const Diagnostic& diagnostic);
// The sticky error, or cudaSuccess.
cudaError_t sticky_error();
// Prints the explanation on stderr, keeps it for last_diagnostic() and writes its record
// (`error`: what the program is given for it, if known here).
void diagnose(const Diagnostic& diagnostic, cudaError_t error = cudaSuccess);
// A launch or call did nothing because an earlier error stopped a kernel (counted for the report
// at exit).
void skipped_after_error();
// Forgets the sticky error and the diagnostic (cudaDeviceReset).
void reset_errors();

// The line of a host call (or of the caller that set_caller_site() named), the file's directory
// dropped; site() says it as "file.cu:12".
records::SourceLine place(const char* file, int line);
std::string site(const char* file, int line);
// The same for a line of code as written (no caller's line instead).
records::SourceLine code_place(const char* file, int line);
std::string code_site(const char* file, int line);
// site(), and the variable that the allocation on that line fills: "test_x.cu:52 (d_C)".
std::string allocation_site(const char* file, int line);
std::string launch_site(const LaunchConfig& config);
// A host call that `check` refused, made at `at`; `words` name the call and its line.
Diagnostic refused_call(std::string check, records::SourceLine at, std::string words);
// What a check found in thread `thread` of block `block` of the launch `config`, at `at`.
Diagnostic in_kernel(const LaunchConfig& config, uint3 block, uint3 thread, records::SourceLine at,
                     std::string check, std::string problem);

}  // namespace cudalab::emu
