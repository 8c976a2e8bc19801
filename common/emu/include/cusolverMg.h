// A CUDA toolkit header the emu backend does not provide: including it is an error, not
// NVIDIA's header (whose types would clash with the emu's).
#pragma once
#error \
    "cudalab emu: <cusolverMg.h> (the cuSOLVER library) is not supported on the CPU backend (docs/compatibility.md)"
