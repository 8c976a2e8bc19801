// The legacy cuBLAS API (cublas.h) is not part of the emu backend: cublas_v2.h is.
#pragma once
#error \
    "cudalab emu: <cublas.h> (the legacy cuBLAS API) is not supported on the CPU backend; include <cublas_v2.h> (docs/compatibility.md)"
