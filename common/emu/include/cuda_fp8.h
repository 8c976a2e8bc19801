// A CUDA toolkit header the emu backend does not provide: including it is an error, not
// NVIDIA's header (whose types would clash with the emu's).
#pragma once
#error \
    "cudalab emu: <cuda_fp8.h> (bfloat16 and 8-, 6- and 4-bit floating point types) is not supported on the CPU backend (docs/compatibility.md)"
