// Internal to the runner: the system-call filter it installs once it is set up
// (system_call_filter.cpp says what it refuses).
#pragma once

#include <string>

namespace cudalab::remote {

// Installs the filter on this process, its threads and the children it makes from now on; what
// went wrong, or "" when it is in place.
std::string install_system_call_filter();

}  // namespace cudalab::remote
