// A wait in a macro of a header that the kernel's file includes from the include path: the
// translator reads the kernel's file and the headers beside it, not the include path, so it cannot
// see that this waits (test_diagnostics.cu, KernelsWhoseThreadsAreCoroutines).
#pragma once

#define CUDALAB_HIDDEN_WAIT __syncthreads()
