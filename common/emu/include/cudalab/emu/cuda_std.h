// libcu++'s cuda::std on the emu backend: the C++ standard library itself. Every <cuda/std/X>
// beside this file includes <X> and this alias, so cuda::std::plus is std::plus: on the CPU the
// heterogeneous library and the standard one are the same code.
#pragma once

namespace cuda {
namespace std = ::std;
}  // namespace cuda
