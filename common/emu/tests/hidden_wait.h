// A wait in a macro of another file than the kernel that uses it: the translator reads only the
// kernel's file, so it cannot see that this waits (test_diagnostics.cu,
// KernelsWhoseThreadsAreCoroutines).
#pragma once

#define CUDALAB_HIDDEN_WAIT __syncthreads()
