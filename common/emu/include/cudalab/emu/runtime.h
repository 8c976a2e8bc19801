// The host-side CUDA runtime API of the emu backend.
// Kernels run synchronously at launch, so every stream is in order with every other and an
// asynchronous call has finished when it returns; errors surface as on a GPU: launch errors through
// cudaGetLastError, execution errors (sticky) through the next synchronizing call.
#pragma once

#include <cstring>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cudalab/emu/types.h"

using cudalab_source_location = std::source_location;
#define CUDALAB_HERE cudalab_source_location where = cudalab_source_location::current()

// ---- memory (memory.cpp) -------------------------------------------------------------------
// Where an allocation of the typed overloads below goes, as CUDA's own templates convert it
// (`(void**)(void*)p`): a pointer to `const T*` too, which a reinterpret_cast refuses.
template <class T>
void** cudalab_void_slot(T** p) {
  return static_cast<void**>(static_cast<void*>(p));
}
cudaError_t cudaMalloc(void** devPtr, size_t size, CUDALAB_HERE);
template <class T>
cudaError_t cudaMalloc(T** devPtr, size_t size, CUDALAB_HERE) {
  return cudaMalloc(cudalab_void_slot(devPtr), size, where);
}
cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned flags = cudaMemAttachGlobal,
                              CUDALAB_HERE);
template <class T>
cudaError_t cudaMallocManaged(T** devPtr, size_t size, unsigned flags = cudaMemAttachGlobal,
                              CUDALAB_HERE) {
  return cudaMallocManaged(cudalab_void_slot(devPtr), size, flags, where);
}
cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height,
                            CUDALAB_HERE);
template <class T>
cudaError_t cudaMallocPitch(T** devPtr, size_t* pitch, size_t width, size_t height, CUDALAB_HERE) {
  return cudaMallocPitch(cudalab_void_slot(devPtr), pitch, width, height, where);
}
cudaError_t cudaFree(void* devPtr, CUDALAB_HERE);
// Page-locked host memory: host memory that kernels may also use (unified addressing).
cudaError_t cudaMallocHost(void** ptr, size_t size, CUDALAB_HERE);
template <class T>
cudaError_t cudaMallocHost(T** ptr, size_t size, CUDALAB_HERE) {
  return cudaMallocHost(cudalab_void_slot(ptr), size, where);
}
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned flags, CUDALAB_HERE);
template <class T>
cudaError_t cudaHostAlloc(T** ptr, size_t size, unsigned flags, CUDALAB_HERE) {
  return cudaHostAlloc(cudalab_void_slot(ptr), size, flags, where);
}
cudaError_t cudaFreeHost(void* ptr, CUDALAB_HERE);
cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned flags);
cudaError_t cudaHostUnregister(void* ptr);
cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned flags);
template <class T>
cudaError_t cudaHostGetDevicePointer(T** pDevice, void* pHost, unsigned flags) {
  return cudaHostGetDevicePointer(cudalab_void_slot(pDevice), pHost, flags);
}
cudaError_t cudaHostGetFlags(unsigned* flags, void* pHost);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr);
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);

// A copy's errors name the caller's line (where) and what the program meant by it.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind, CUDALAB_HERE);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr, CUDALAB_HERE);
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* devPtr, int value, size_t count, CUDALAB_HERE);
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream = nullptr,
                            CUDALAB_HERE);
cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream = nullptr);
// Unified memory hints: accepted and checked; every byte is always where both sides can use it.
cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, cudaMemLocation location,
                                 unsigned flags, cudaStream_t stream = nullptr);
cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, int dstDevice,
                                 cudaStream_t stream = nullptr);
cudaError_t cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise advice,
                          cudaMemLocation location);
cudaError_t cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise advice, int device);
cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length = 0,
                                     unsigned flags = cudaMemAttachSingle);

// ---- stream-ordered allocation and memory pools (mempools.cpp) ------------------------------
cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t stream, CUDALAB_HERE);
template <class T>
cudaError_t cudaMallocAsync(T** devPtr, size_t size, cudaStream_t stream, CUDALAB_HERE) {
  return cudaMallocAsync(cudalab_void_slot(devPtr), size, stream, where);
}
cudaError_t cudaMallocFromPoolAsync(void** devPtr, size_t size, cudaMemPool_t pool,
                                    cudaStream_t stream, CUDALAB_HERE);
template <class T>
cudaError_t cudaMallocFromPoolAsync(T** devPtr, size_t size, cudaMemPool_t pool,
                                    cudaStream_t stream, CUDALAB_HERE) {
  return cudaMallocFromPoolAsync(cudalab_void_slot(devPtr), size, pool, stream, where);
}
cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t stream, CUDALAB_HERE);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool);
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props);
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t minBytesToKeep);
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descList,
                                 size_t count);
cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool,
                                 cudaMemLocation* location);
// Graph memory (graph memory nodes, and cudaMallocAsync/cudaFreeAsync while a stream is captured).
cudaError_t cudaDeviceGraphMemTrim(int device);
cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value);
cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value);

// ---- device (device_api.cpp) -----------------------------------------------------------------
// (C linkage: a program's .c files call these as well, as they may with nvcc: c_runtime.h)
extern "C" {
#include "cudalab/emu/c_calls.h"
}
cudaError_t cudaInitDevice(int device, unsigned deviceFlags = 0, unsigned flags = 0);
cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaSetDeviceFlags(unsigned flags);
cudaError_t cudaGetDeviceFlags(unsigned* flags);
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit);
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config);
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config);
// What CUDA 12 had and CUDA 13 removed, run as their replacements with a warning the first time
// each is called (removed_api.cpp).
cudaError_t cudaThreadSynchronize(CUDALAB_HERE);
cudaError_t cudaThreadExit(CUDALAB_HERE);
cudaError_t cudaThreadSetLimit(cudaLimit limit, size_t value, CUDALAB_HERE);
cudaError_t cudaThreadGetLimit(size_t* value, cudaLimit limit, CUDALAB_HERE);
cudaError_t cudaThreadSetCacheConfig(cudaFuncCache config, CUDALAB_HERE);
cudaError_t cudaThreadGetCacheConfig(cudaFuncCache* config, CUDALAB_HERE);
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config);
cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* config);
cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority);
cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice);
cudaError_t cudaProfilerStart();
cudaError_t cudaProfilerStop();

// ---- streams, events and graphs (streams.cpp) --------------------------------------------
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned* flags);
cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority);
cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                   const cudaStreamAttrValue* value);
cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                   cudaStreamAttrValue* value);
cudaError_t cudaCtxResetPersistingL2Cache();
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void* userData, unsigned flags);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
inline cudaError_t cudaEventCreate(cudaEvent_t* event,
                                   unsigned flags) {  // cuda_runtime.h's C++ form
  return cudaEventCreateWithFlags(event, flags);
}
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

// Stream capture records what a stream is given instead of doing it; a graph replays it.
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status);
cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned flags);
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
// The form before CUDA 12, which cuda_runtime.h still offers to C++ programs.
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, cudaGraphNode_t*,
                                        char*, size_t) {
  return cudaGraphInstantiate(exec, graph, 0ull);
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                          unsigned long long flags = 0);
cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original);
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                cudaGraphExecUpdateResultInfo* result);
// Nodes run in the order they were added, which respects every dependency given when adding them.
// The forms cuda_runtime.h still offers to C++ programs.
inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                       cudaGraphNode_t* errorNode,
                                       cudaGraphExecUpdateResult* result) {
  cudaGraphExecUpdateResultInfo info{};
  const cudaError_t e = cudaGraphExecUpdate(exec, graph, &info);
  if (errorNode != nullptr) *errorNode = info.errorNode;
  if (result != nullptr) *result = info.result;
  return e;
}
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                   const cudaGraphNode_t* dependencies, size_t count,
                                   const cudaKernelNodeParams* params);
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                   const cudaGraphNode_t* dependencies, size_t count,
                                   const struct cudaMemcpy3DParms* params);
cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph,
                                     const cudaGraphNode_t* dependencies, size_t count, void* dst,
                                     const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                   const cudaGraphNode_t* dependencies, size_t count,
                                   const cudaMemsetParams* params);
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                 const cudaGraphNode_t* dependencies, size_t count,
                                 const cudaHostNodeParams* params);
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                  const cudaGraphNode_t* dependencies, size_t count);
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                     const cudaGraphNode_t* dependencies, size_t count,
                                     cudaMemAllocNodeParams* params, CUDALAB_HERE);
cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                    const cudaGraphNode_t* dependencies, size_t count, void* dptr,
                                    CUDALAB_HERE);
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                       const cudaGraphNode_t* dependencies, size_t count,
                                       cudaGraph_t child);
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                     const cudaGraphNode_t* to, size_t count);
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams* params);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
// Nodes of the types above through one call; a conditional node's body graphs are made by it
// (params->conditional.phGraph_out). Memcpy, event and semaphore nodes are refused here: use the
// call of their type.
cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t graph,
                             const cudaGraphNode_t* dependencies, const cudaGraphEdgeData* edges,
                             size_t count, cudaGraphNodeParams* params);
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* handle, cudaGraph_t graph,
                                             unsigned defaultLaunchValue = 0, unsigned flags = 0);
// From a kernel of the graph: the value the conditional node after it reads.
void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned value);
// Capture into a graph that exists (a conditional node's body), and what a capture has so far:
// its graph and its last node, on which the next one depends (the emu's graphs are chains).
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                          const cudaGraphNode_t* dependencies,
                                          const cudaGraphEdgeData* edges, size_t count,
                                          cudaStreamCaptureMode mode);
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                     unsigned long long* id = nullptr, cudaGraph_t* graph = nullptr,
                                     const cudaGraphNode_t** dependencies = nullptr,
                                     const cudaGraphEdgeData** edges = nullptr,
                                     size_t* count = nullptr);
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* dependencies,
                                                const cudaGraphEdgeData* edges, size_t count,
                                                unsigned flags = 0);

namespace cudalab::emu {
// Work given to a stream: done now, or recorded while the stream is being captured.
void enqueue(cudaStream_t stream, void (*work)(void*), void* context, void (*release)(void*));
template <class Work>
void enqueue(cudaStream_t stream, Work&& work) {
  auto* w = new std::decay_t<Work>(std::forward<Work>(work));
  enqueue(
      stream, [](void* p) { (*static_cast<std::decay_t<Work>*>(p))(); }, w,
      [](void* p) { delete static_cast<std::decay_t<Work>*>(p); });
}
}  // namespace cudalab::emu

// ---- symbols -----------------------------------------------------------------------------
namespace cudalab::emu {
// Shared by the symbol copies below: checks the range and records the error.
cudaError_t copy_symbol(void* dst, const void* src, size_t count, size_t offset, size_t symbol_size,
                        bool to_symbol);
// A symbol's address the program asked for (cudaGetSymbolAddress): device memory to cudaMemcpy and
// cudaMemset from then on, as on a GPU (the symbol itself, named in host code, is not).
void note_symbol_address(const void* symbol, size_t bytes);
}  // namespace cudalab::emu

// __constant__ and __device__ variables are ordinary globals on the emu backend.
template <class T>
cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t count, size_t offset = 0,
                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
  return cudalab::emu::copy_symbol(&symbol, src, count, offset, sizeof(T), true);
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                 cudaMemcpyKind = cudaMemcpyDeviceToHost) {
  return cudalab::emu::copy_symbol(dst, &symbol, count, offset, sizeof(T), false);
}
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(T& symbol, const void* src, size_t count, size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                    cudaStream_t = nullptr) {
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                      cudaStream_t = nullptr) {
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}
template <class T>
cudaError_t cudaGetSymbolAddress(void** devPtr, T& symbol) {
  cudalab::emu::note_symbol_address(&symbol, sizeof(T));
  *devPtr = static_cast<void*>(&symbol);
  return cudaSuccess;
}
template <class T>
cudaError_t cudaGetSymbolSize(size_t* size, const T&) {
  *size = sizeof(T);
  return cudaSuccess;
}
#undef CUDALAB_HERE
