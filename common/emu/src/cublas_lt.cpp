// The cuBLASLt subset (cudalab/emu/cublas_lt.h). Descriptors are plain records of the attributes
// the subset models; setting one it does not model, or a value of one it does not (a row-major
// layout, a backward epilogue, FP8 scales), is refused with CUBLAS_STATUS_NOT_SUPPORTED and a
// message naming it, never ignored. cublasLtMatmul checks that the layouts' sizes agree with the
// transposes, then runs the typed product of cublasGemmEx (typed_gemm.h) once per batch.
#include "cudalab/emu/cublas_lt.h"

#include <cstring>
#include <string>

#include "cublas_checks.h"
#include "errors.h"
#include "typed_gemm.h"

struct cublasLtContext {};

struct cublasLtMatmulDescOpaque_t {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;
  int32_t pointer_mode = 0;  // host or device: one address space here
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  int64_t bias_batch_stride = 0;
  int32_t bias_type = -1;  // -1: D's type
  void* aux = nullptr;
  int64_t aux_ld = 0, aux_batch_stride = 0;
  int32_t aux_type = -1;  // -1: D's type
  int32_t sm_count_target = 0;
  int8_t fast_accumulate = 0;
};

struct cublasLtMatrixLayoutOpaque_t {
  uint32_t type = CUDA_R_32F;
  int32_t order = CUBLASLT_ORDER_COL;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;  // elements
};

struct cublasLtMatmulPreferenceOpaque_t {};

using namespace cudalab::emu;
using namespace cudalab::emu::blas;

namespace {

cublasStatus_t not_supported(const std::string& call, const std::string& what) {
  diagnose(call + ": " + what + " is not supported by the emu backend (docs/compatibility.md)");
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

// Copies an attribute's value in or out; the size must be the attribute's, as cuBLASLt checks.
template <class Field>
cublasStatus_t set(Field& field, const void* buf, size_t size) {
  if (buf == nullptr || size != sizeof(Field)) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(&field, buf, sizeof(Field));
  return CUBLAS_STATUS_SUCCESS;
}
template <class Field>
cublasStatus_t get(const Field& field, void* buf, size_t size, size_t* written) {
  if (written != nullptr) *written = sizeof(Field);
  if (size == 0 && buf == nullptr && written != nullptr) return CUBLAS_STATUS_SUCCESS;
  if (buf == nullptr || size < sizeof(Field)) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, &field, sizeof(Field));
  return CUBLAS_STATUS_SUCCESS;
}

bool modelled(cublasLtEpilogue_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT:
    case CUBLASLT_EPILOGUE_RELU:
    case CUBLASLT_EPILOGUE_BIAS:
    case CUBLASLT_EPILOGUE_RELU_BIAS:
    case CUBLASLT_EPILOGUE_GELU:
    case CUBLASLT_EPILOGUE_GELU_BIAS:
    case CUBLASLT_EPILOGUE_GELU_AUX:
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
      return true;
    default:
      return false;
  }
}

}  // namespace

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
size_t cublasLtGetVersion() { return CUBLAS_VERSION; }
const char* cublasLtGetStatusName(cublasStatus_t status) { return cublasGetStatusName(status); }
const char* cublasLtGetStatusString(cublasStatus_t status) { return cublasGetStatusString(status); }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale_type) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *desc = new cublasLtMatmulDescOpaque_t{.compute = compute, .scale_type = scale_type};
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
  if (d == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  constexpr const char* call = "cublasLtMatmulDescSetAttribute";
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return set(d->compute, buf, size);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return set(d->scale_type, buf, size);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: {
      int32_t mode = 0;
      if (cublasStatus_t s = set(mode, buf, size)) return s;
      if (mode != 0 && mode != 1)
        return not_supported(
            call, "pointer mode " + std::to_string(mode) + " (alpha and beta as vectors)");
      d->pointer_mode = mode;
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return set(d->transa, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return set(d->transb, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: {
      cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_DEFAULT;
      if (cublasStatus_t s = set(e, buf, size)) return s;
      if (!modelled(e))
        return not_supported(call, "epilogue " + std::to_string(static_cast<int>(e)) +
                                       " (the emu models DEFAULT, BIAS, RELU, RELU_BIAS, GELU, "
                                       "GELU_BIAS, GELU_AUX and GELU_AUX_BIAS)");
      d->epilogue = e;
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      return set(d->bias, buf, size);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
      return set(d->bias_batch_stride, buf, size);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      return set(d->bias_type, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
      return set(d->aux, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
      return set(d->aux_ld, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
      return set(d->aux_batch_stride, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
      return set(d->aux_type, buf, size);
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET:  // a scheduling hint
      return set(d->sm_count_target, buf, size);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM:  // FP8 accumulation: the emu computes in float
      return set(d->fast_accumulate, buf, size);
    default:
      return not_supported(call, "attribute " + std::to_string(static_cast<int>(attr)) +
                                     " (transposing C, fill modes, FP8 scales, amax)");
  }
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
  if (d == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return get(d->compute, buf, size, written);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return get(d->scale_type, buf, size, written);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
      return get(d->pointer_mode, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return get(d->transa, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return get(d->transb, buf, size, written);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      return get(d->epilogue, buf, size, written);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      return get(d->bias, buf, size, written);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
      return get(d->aux, buf, size, written);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
      return get(d->aux_ld, buf, size, written);
    default:
      return not_supported("cublasLtMatmulDescGetAttribute",
                           "attribute " + std::to_string(static_cast<int>(attr)));
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType_t type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{
      .type = static_cast<uint32_t>(type), .rows = rows, .cols = cols, .ld = ld};
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  if (l == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return set(l->type, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: {
      int32_t order = CUBLASLT_ORDER_COL;
      if (cublasStatus_t s = set(order, buf, size)) return s;
      if (order != CUBLASLT_ORDER_COL)
        return not_supported("cublasLtMatrixLayoutSetAttribute",
                             "order " + std::to_string(order) +
                                 " (the emu's matrices are "
                                 "column-major, CUBLASLT_ORDER_COL)");
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return set(l->rows, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return set(l->cols, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return set(l->ld, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return set(l->batch_count, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return set(l->batch_stride, buf, size);
    default:
      return not_supported(
          "cublasLtMatrixLayoutSetAttribute",
          "attribute " + std::to_string(static_cast<int>(attr)) + " (planar complex layouts)");
  }
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                size_t size, size_t* written) {
  if (l == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return get(l->type, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      return get(l->order, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return get(l->rows, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return get(l->cols, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return get(l->ld, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return get(l->batch_count, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return get(l->batch_stride, buf, size, written);
    default:
      return not_supported("cublasLtMatrixLayoutGetAttribute",
                           "attribute " + std::to_string(static_cast<int>(attr)));
  }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *pref = new cublasLtMatmulPreferenceOpaque_t;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}
// Preferences narrow the choice of algorithm (workspace, alignment, waves); the emu has one, which
// needs no workspace and no alignment, so each is met.
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t,
                                                    const void* buf, size_t) {
  return pref == nullptr  ? CUBLAS_STATUS_NOT_INITIALIZED
         : buf == nullptr ? CUBLAS_STATUS_INVALID_VALUE
                          : CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
                                              cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returned) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (desc == nullptr || A == nullptr || B == nullptr || C == nullptr || D == nullptr ||
      pref == nullptr || requested < 1 || results == nullptr || returned == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  results[0] = {};
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                              const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
                              cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                              cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (desc == nullptr || Adesc == nullptr || Bdesc == nullptr || Cdesc == nullptr ||
      Ddesc == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  const bool a_n = desc->transa == CUBLAS_OP_N, b_n = desc->transb == CUBLAS_OP_N;
  const auto m = static_cast<int64_t>(Ddesc->rows), n = static_cast<int64_t>(Ddesc->cols);
  const auto k = static_cast<int64_t>(a_n ? Adesc->cols : Adesc->rows);
  // Every layout's size must agree with D's and the transposes, as cuBLASLt checks.
  if (static_cast<int64_t>(a_n ? Adesc->rows : Adesc->cols) != m ||
      static_cast<int64_t>(b_n ? Bdesc->rows : Bdesc->cols) != k ||
      static_cast<int64_t>(b_n ? Bdesc->cols : Bdesc->rows) != n ||
      static_cast<int64_t>(Cdesc->rows) != m || static_cast<int64_t>(Cdesc->cols) != n)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int32_t batches = Ddesc->batch_count;
  for (cublasLtMatrixLayout_t l : {Adesc, Bdesc, Cdesc})
    if (l->batch_count != batches) return CUBLAS_STATUS_INVALID_VALUE;
  const auto type = [](cublasLtMatrixLayout_t l) { return static_cast<cudaDataType_t>(l->type); };
  const cublasLtEpilogue_t e = desc->epilogue;
  const bool with_bias = e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
                         e == CUBLASLT_EPILOGUE_GELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  const bool with_aux = e == CUBLASLT_EPILOGUE_GELU_AUX || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  if ((with_bias && desc->bias == nullptr) || (with_aux && desc->aux == nullptr))
    return CUBLAS_STATUS_INVALID_VALUE;
  GemmEpilogue epilogue{
      .bias_type = desc->bias_type < 0 ? type(Ddesc) : static_cast<cudaDataType_t>(desc->bias_type),
      .aux_type = desc->aux_type < 0 ? type(Ddesc) : static_cast<cudaDataType_t>(desc->aux_type),
      .aux_ld = desc->aux_ld,
      .relu = e == CUBLASLT_EPILOGUE_RELU || e == CUBLASLT_EPILOGUE_RELU_BIAS,
      .gelu = e == CUBLASLT_EPILOGUE_GELU || e == CUBLASLT_EPILOGUE_GELU_BIAS || with_aux};
  for (int32_t i = 0; i < batches; ++i) {
    epilogue.bias = with_bias
                        ? element_at(desc->bias, epilogue.bias_type, i * desc->bias_batch_stride)
                        : nullptr;
    epilogue.aux = with_aux ? const_cast<void*>(element_at(desc->aux, epilogue.aux_type,
                                                           i * desc->aux_batch_stride))
                            : nullptr;
    const auto at = [i](const void* p, cublasLtMatrixLayout_t l) -> TypedMatrix {
      return {element_at(p, static_cast<cudaDataType_t>(l->type), i * l->batch_stride),
              static_cast<cudaDataType_t>(l->type), l->ld};
    };
    if (cublasStatus_t status =
            typed_gemm("cublasLtMatmul", desc->compute, desc->scale_type,
                       {desc->transa, desc->transb, m, n, k}, alpha, at(A, Adesc), at(B, Bdesc),
                       beta, at(C, Cdesc), at(D, Ddesc), epilogue))
      return status;
  }
  return CUBLAS_STATUS_SUCCESS;
}
