// Error state shared by the emu runtime's modules.
#pragma once

#include <string>

#include "cudalab/emu/launch.h"
#include "cudalab/emu/types.h"

namespace cudalab::emu {

// Records `error` as this host thread's last error and returns it.
cudaError_t record(cudaError_t error);
// An execution error: like a GPU context after a fault, every later call returns it until
// cudaDeviceReset. The diagnostic explains it to the student.
void fail(cudaError_t error, const std::string& diagnostic);
// The sticky error, or cudaSuccess.
cudaError_t sticky_error();
// Prints the explanation on stderr and keeps it for last_diagnostic().
void diagnose(const std::string& message);
// Forgets the sticky error and the diagnostic (cudaDeviceReset).
void reset_errors();

// "file.cu:12", with the file's directory dropped.
std::string site(const char* file, int line);
std::string launch_site(const LaunchConfig& config);

// After a kernel ran: did it write past the end of any device array? Returns the explanation.
std::string check_redzones(const LaunchConfig& config);
// cudaDeviceReset frees every allocation.
void free_all_allocations();

}  // namespace cudalab::emu
