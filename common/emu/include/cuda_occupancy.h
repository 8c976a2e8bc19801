// A CUDA toolkit header the emu backend does not provide: including it is an error, not
// NVIDIA's header (whose types would clash with the emu's).
#pragma once
#error \
    "cudalab emu: <cuda_occupancy.h> (the occupancy calculator header (use cudaOccupancy* from cuda_runtime.h)) is not supported on the CPU backend (docs/compatibility.md)"
