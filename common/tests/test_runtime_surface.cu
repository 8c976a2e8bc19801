// The runtime surface that programs beyond the labs use (CUDA samples, course examples), checked
// on both backends with the same expectations: cooperative groups, unified and page-locked memory,
// streams, events and graphs, occupancy and function attributes, device intrinsics, half, bfloat16,
// assert.
// On a GPU this test documents CUDA 13; on emu it proves the emulator matches it.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <math_constants.h>
#include <vector_functions.h>
#include <vector_types.h>  // NVIDIA's is on the default path of some machines: the emu's is found

#include <algorithm>
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <cuda/atomic>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "cudalab/cuda_check.h"

namespace cg = cooperative_groups;

// What helper_cuda.h and other programs test before they use the runtime.
#if !defined(__CUDA_RUNTIME_H__) || !defined(__DRIVER_TYPES_H__) || !defined(CUDART_VERSION)
#error "the runtime's guard macros are missing"
#endif
static_assert(CUDART_VERSION >= 12000);
static_assert(sizeof(float4) == 16 && alignof(float4) == 16);
static_assert(sizeof(int2) == 8 && alignof(int2) == 8);
static_assert(sizeof(uchar3) == 3 && sizeof(uchar4) == 4 && alignof(uchar4) == 4);
static_assert(sizeof(double2) == 16 && alignof(double2) == 16);
static_assert(sizeof(short2) == 4 && sizeof(ushort4) == 8 && alignof(ushort4) == 8);
static_assert(sizeof(__half) == 2 && sizeof(__half2) == 4);
static_assert(sizeof(__nv_bfloat16) == 2 && sizeof(__nv_bfloat162) == 4);

namespace {

// ---- device properties and attributes ---------------------------------------------------

TEST(Surface, AttributesAgreeWithProperties) {
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  auto attr = [](cudaDeviceAttr a) {
    int v = -1;
    EXPECT_EQ(cudaDeviceGetAttribute(&v, a, 0), cudaSuccess) << a;
    return v;
  };
  EXPECT_EQ(attr(cudaDevAttrMaxThreadsPerBlock), p.maxThreadsPerBlock);
  EXPECT_EQ(attr(cudaDevAttrWarpSize), p.warpSize);
  EXPECT_EQ(attr(cudaDevAttrMultiProcessorCount), p.multiProcessorCount);
  EXPECT_EQ(attr(cudaDevAttrComputeCapabilityMajor), p.major);
  EXPECT_EQ(attr(cudaDevAttrComputeCapabilityMinor), p.minor);
  EXPECT_EQ(attr(cudaDevAttrMaxSharedMemoryPerBlock), static_cast<int>(p.sharedMemPerBlock));
  EXPECT_EQ(attr(cudaDevAttrMaxSharedMemoryPerBlockOptin),
            static_cast<int>(p.sharedMemPerBlockOptin));
  EXPECT_EQ(attr(cudaDevAttrManagedMemory), 1);
  EXPECT_EQ(attr(cudaDevAttrCooperativeLaunch), 1);
  EXPECT_EQ(attr(cudaDevAttrComputeMode), cudaComputeModeDefault);
  EXPECT_GT(attr(cudaDevAttrClockRate), 0);
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  EXPECT_GE(driver, runtime);
  EXPECT_EQ(runtime, CUDART_VERSION);
  EXPECT_STREQ(cudaGetErrorString(cudaErrorCooperativeLaunchTooLarge),
               "too many blocks in cooperative launch");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorStreamCaptureUnsupported),
               "cudaErrorStreamCaptureUnsupported");
}

// ---- cooperative groups -----------------------------------------------------------------

// Each tile of 8 reduces its values, scans them, votes and shuffles.
__global__ void tiles(const int* in, int* sums, int* scans, unsigned* votes, int* rotated) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
  const int i = block.group_index().x * block.size() + block.thread_rank();
  const int v = in[i];
  sums[i] = cg::reduce(tile, v, cg::plus<int>());
  scans[i] = cg::inclusive_scan(tile, v, cg::plus<int>());
  votes[i] = tile.ballot(v % 2 == 0) | (tile.any(v == 5) << 8) | (tile.all(v >= 0) << 9);
  rotated[i] = tile.shfl(v, (tile.thread_rank() + 1) % 8) + tile.shfl_down(v, 1) * 1000;
  block.sync();
}

TEST(Surface, StaticTilesReduceScanVoteShuffle) {
  const int n = 64;
  std::vector<int> in(n);
  std::iota(in.begin(), in.end(), 0);
  int *d_in, *sums, *scans, *rotated;
  unsigned* votes;
  CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&sums, n * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&scans, n * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&rotated, n * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&votes, n * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  tiles<<<2, 32>>>(d_in, sums, scans, votes, rotated);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    const int first = i / 8 * 8;
    EXPECT_EQ(sums[i], 8 * first + 28) << i;
    EXPECT_EQ(scans[i], (i - first + 1) * (first + i) / 2) << i;
    EXPECT_EQ(votes[i] & 0xFF, 0x55u) << i;
    EXPECT_EQ(votes[i] >> 8 & 1, first == 0 ? 1u : 0u) << i;
    EXPECT_EQ(votes[i] >> 9 & 1, 1u) << i;
    const int down = i % 8 == 7 ? i : i + 1;  // the last lane keeps its own value
    EXPECT_EQ(rotated[i], first + (i - first + 1) % 8 + down * 1000) << i;
  }
  cudaFree(d_in), cudaFree(sums), cudaFree(scans), cudaFree(rotated), cudaFree(votes);
}

// A tile size known at run time, synchronised through shared memory (simpleCooperativeGroups).
__global__ void dynamic_tiles(int* out, int size) {
  __shared__ int x[64];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_group tile = cg::tiled_partition(block, size);
  const int lane = tile.thread_rank(), base = block.thread_rank() - lane;
  int value = block.thread_rank();
  for (int i = tile.size() / 2; i > 0; i /= 2) {
    x[base + lane] = value;
    tile.sync();
    if (lane < i) value += x[base + lane + i];
    tile.sync();
  }
  if (lane == 0) out[block.thread_rank() / tile.size()] = value;
}

TEST(Surface, DynamicTilesSync) {
  int* out;
  CUDA_CHECK(cudaMallocManaged(&out, 16 * sizeof(int)));
  dynamic_tiles<<<1, 64>>>(out, 4);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int t = 0; t < 16; ++t) EXPECT_EQ(out[t], 4 * 4 * t + 6) << t;
  cudaFree(out);
}

// Tiles of several warps (the reduction sample's multi_warp_cg_reduce): the 128-thread tiles of
// a 384-thread block reduce and scan, and sync between phases.
__global__ void multi_warp_tiles(const int* in, int* sums, int* scans, int* ranks) {
  __shared__ cg::block_tile_memory<512> scratch;
  cg::thread_block block = cg::this_thread_block(scratch);
  auto tile = cg::tiled_partition<128>(block);
  const int value = in[block.thread_rank()];
  const int sum = cg::reduce(tile, value, cg::plus<int>());
  tile.sync();
  scans[block.thread_rank()] = cg::exclusive_scan(tile, value);
  if (tile.thread_rank() == 0) sums[tile.meta_group_rank()] = sum;
  ranks[block.thread_rank()] = tile.meta_group_size() * 1000 + tile.thread_rank();
}

TEST(Surface, TilesOfSeveralWarps) {
  const int n = 384, tile = 128;
  int *in, *sums, *scans, *ranks;
  CUDA_CHECK(cudaMallocManaged(&in, n * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&sums, 3 * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&scans, n * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&ranks, n * sizeof(int)));
  for (int i = 0; i < n; ++i) in[i] = i % 7 - 3;
  multi_warp_tiles<<<1, n>>>(in, sums, scans, ranks);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int t = 0; t < 3; ++t) {
    int sum = 0;
    for (int i = t * tile; i < (t + 1) * tile; ++i) {
      EXPECT_EQ(scans[i], sum) << "thread " << i;
      EXPECT_EQ(ranks[i], 3000 + i - t * tile) << "thread " << i;
      sum += in[i];
    }
    EXPECT_EQ(sums[t], sum) << "tile " << t;
  }
  cudaFree(in), cudaFree(sums), cudaFree(scans), cudaFree(ranks);
}

// Warp-aggregated atomics (warpAggregatedAtomicsCG): the lanes that take the branch together.
__global__ void aggregated(int* counter, int* slots, int* group_sizes) {
  const int i = threadIdx.x;
  if (i % 3 == 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    int first = 0;
    if (active.thread_rank() == 0) first = atomicAdd(counter, static_cast<int>(active.size()));
    first = active.shfl(first, 0);
    slots[i] = first + active.thread_rank();
    group_sizes[i] = active.size();
  }
}

TEST(Surface, CoalescedGroupOfTheLanesInABranch) {
  int *counter, *slots, *sizes;
  CUDA_CHECK(cudaMallocManaged(&counter, sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&slots, 64 * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&sizes, 64 * sizeof(int)));
  *counter = 0;
  aggregated<<<1, 64>>>(counter, slots, sizes);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(*counter, 22);
  std::vector<bool> taken(22, false);
  for (int i = 0; i < 64; i += 3) {
    EXPECT_EQ(sizes[i], i < 32 ? 11 : 11) << i;  // lanes 0,3,..,30 and 33,36,..,63
    ASSERT_GE(slots[i], 0);
    ASSERT_LT(slots[i], 22);
    EXPECT_FALSE(taken[slots[i]]) << "slot " << slots[i] << " twice";
    taken[slots[i]] = true;
  }
  cudaFree(counter), cudaFree(slots), cudaFree(sizes);
}

// A grid-wide sum with grid.sync() (reductionMultiBlockCG's pattern).
__global__ void grid_sum(const int* in, int* partial, int* total, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  int mine = 0;
  for (unsigned long long i = grid.thread_rank(); i < static_cast<unsigned long long>(n);
       i += grid.size())
    mine += in[i];
  atomicAdd(&partial[block.group_index().x], mine);
  grid.sync();
  if (grid.thread_rank() == 0) {
    int sum = 0;
    for (unsigned b = 0; b < grid.num_blocks(); ++b) sum += partial[b];
    *total = sum;
  }
}

TEST(Surface, CooperativeLaunchWithGridSync) {
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, 128, 0));
  ASSERT_GT(per_sm, 0);
  const int blocks = std::min(sms * per_sm, 8), n = 10000;
  int *in, *partial, *total;
  CUDA_CHECK(cudaMallocManaged(&in, n * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&partial, blocks * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&total, sizeof(int)));
  for (int i = 0; i < n; ++i) in[i] = i % 7;
  CUDA_CHECK(cudaMemset(partial, 0, blocks * sizeof(int)));
  int count = n;
  void* args[] = {&in, &partial, &total, &count};
  CUDA_CHECK(cudaLaunchCooperativeKernel((void*)grid_sum, blocks, 128, args, 0, nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
  long expected = 0;
  for (int i = 0; i < n; ++i) expected += i % 7;
  EXPECT_EQ(*total, expected);
  // More blocks than the device holds at once: refused, as on a GPU.
  EXPECT_EQ(cudaLaunchCooperativeKernel((void*)grid_sum, sms * per_sm + 1, 128, args, 0, nullptr),
            cudaErrorCooperativeLaunchTooLarge);
  cudaGetLastError();
  cudaFree(in), cudaFree(partial), cudaFree(total);
}

// ---- unified and page-locked memory ---------------------------------------------------------

__global__ void increment(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

TEST(Surface, ManagedMemoryOnBothSides) {
  const int n = 1000;
  int* data;
  CUDA_CHECK(cudaMallocManaged(&data, n * sizeof(int)));
  for (int i = 0; i < n; ++i) data[i] = i;
  cudaMemLocation device{cudaMemLocationTypeDevice, 0};
  CUDA_CHECK(cudaMemAdvise(data, n * sizeof(int), cudaMemAdviseSetPreferredLocation, device));
  CUDA_CHECK(cudaMemPrefetchAsync(data, n * sizeof(int), device, 0, nullptr));
  increment<<<(n + 127) / 128, 128>>>(data, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) ASSERT_EQ(data[i], i + 1) << i;
  cudaPointerAttributes attributes;
  CUDA_CHECK(cudaPointerGetAttributes(&attributes, data));
  EXPECT_EQ(attributes.type, cudaMemoryTypeManaged);
  CUDA_CHECK(cudaFree(data));
}

TEST(Surface, MappedHostMemory) {
  const int n = 300;
  int *host, *device;
  CUDA_CHECK(cudaHostAlloc(&host, n * sizeof(int), cudaHostAllocMapped));
  for (int i = 0; i < n; ++i) host[i] = 2 * i;
  CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  increment<<<(n + 127) / 128, 128>>>(device, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 2 * i + 1) << i;
  CUDA_CHECK(cudaFreeHost(host));

  std::vector<int> registered(n, 5);
  CUDA_CHECK(cudaHostRegister(registered.data(), n * sizeof(int), cudaHostRegisterMapped));
  CUDA_CHECK(cudaHostGetDevicePointer(&device, registered.data(), 0));
  increment<<<(n + 127) / 128, 128>>>(device, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(registered[n - 1], 6);
  EXPECT_EQ(cudaHostRegister(registered.data(), n * sizeof(int), 0),
            cudaErrorHostMemoryAlreadyRegistered);
  cudaGetLastError();
  CUDA_CHECK(cudaHostUnregister(registered.data()));
}

TEST(Surface, PitchedCopies) {
  const size_t width = 37, height = 5;
  float* d;
  size_t pitch = 0;
  CUDA_CHECK(cudaMallocPitch(&d, &pitch, width * sizeof(float), height));
  EXPECT_GE(pitch, width * sizeof(float));
  std::vector<float> h(width * height), back(width * height, -1);
  std::iota(h.begin(), h.end(), 0.0f);
  CUDA_CHECK(cudaMemset2D(d, pitch, 0, width * sizeof(float), height));
  CUDA_CHECK(cudaMemcpy2D(d, pitch, h.data(), width * sizeof(float), width * sizeof(float), height,
                          cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy2D(back.data(), width * sizeof(float), d, pitch, width * sizeof(float),
                          height, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, h);
  EXPECT_EQ(cudaMemcpy2D(d, width, h.data(), width * sizeof(float), width * sizeof(float), height,
                         cudaMemcpyHostToDevice),
            cudaErrorInvalidPitchValue);
  cudaGetLastError();
  std::printf("pitch for %zu bytes: %zu\n", width * sizeof(float), pitch);
  cudaFree(d);
}

// ---- streams, events, callbacks, graphs -------------------------------------------------

void CUDART_CB count_call(void* counter) { ++*static_cast<int*>(counter); }
void CUDART_CB count_callback(cudaStream_t, cudaError_t status, void* counter) {
  if (status == cudaSuccess) ++*static_cast<int*>(counter);
}

TEST(Surface, MemoryPoolsAndStreamOrderedAllocation) {
  int pools_supported = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, 0));
  ASSERT_EQ(pools_supported, 1);
  cudaMemPool_t default_pool, current_pool;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  CUDA_CHECK(cudaDeviceGetMemPool(&current_pool, 0));
  EXPECT_EQ(default_pool, current_pool);
  uint64_t threshold = UINT64_MAX, read_back = 0;
  CUDA_CHECK(cudaMemPoolSetAttribute(default_pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  CUDA_CHECK(cudaMemPoolGetAttribute(default_pool, cudaMemPoolAttrReleaseThreshold, &read_back));
  EXPECT_EQ(read_back, threshold);

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location = {cudaMemLocationTypeDevice, 0};
  cudaMemPool_t pool;
  CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  const int n = 1 << 18;  // 1 MiB
  int* data;
  CUDA_CHECK(cudaMallocFromPoolAsync(&data, n * sizeof(int), pool, stream));
  uint64_t used = 0, reserved = 0;
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT_GE(used, n * sizeof(int));
  EXPECT_GE(reserved, used);
  CUDA_CHECK(cudaMemsetAsync(data, 0, n * sizeof(int), stream));
  increment<<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  std::vector<int> host(n);
  CUDA_CHECK(cudaMemcpyAsync(host.data(), data, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaFreeAsync(data, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_EQ(std::count(host.begin(), host.end(), 1), n);
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  EXPECT_EQ(used, 0u);
  CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT_EQ(reserved, 0u);
  // The device's allocations come from the pool it is given.
  CUDA_CHECK(cudaDeviceSetMemPool(0, pool));
  CUDA_CHECK(cudaMallocAsync(&data, 4096, stream));
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  EXPECT_GE(used, 4096u);
  CUDA_CHECK(cudaFreeAsync(data, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaDeviceSetMemPool(0, default_pool));
  CUDA_CHECK(cudaMemPoolDestroy(pool));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(Surface, StreamsEventsAndCallbacks) {
  cudaStream_t a, b;
  CUDA_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithPriority(&b, cudaStreamDefault, -1));
  unsigned flags = 99;
  CUDA_CHECK(cudaStreamGetFlags(a, &flags));
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));
  cudaEvent_t done, untimed;
  CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDefault));
  CUDA_CHECK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  const int n = 4096;
  int* data;
  CUDA_CHECK(cudaMalloc(&data, n * sizeof(int)));
  CUDA_CHECK(cudaMemsetAsync(data, 0, n * sizeof(int), a));
  increment<<<n / 256, 256, 0, a>>>(data, n);
  CUDA_CHECK(cudaEventRecord(done, a));
  CUDA_CHECK(cudaStreamWaitEvent(b, done, 0));
  increment<<<n / 256, 256, 0, b>>>(data, n);
  int calls = 0;
  CUDA_CHECK(cudaLaunchHostFunc(b, count_call, &calls));
  CUDA_CHECK(cudaStreamAddCallback(b, count_callback, &calls, 0));
  CUDA_CHECK(cudaEventRecord(untimed, b));
  CUDA_CHECK(cudaStreamSynchronize(b));
  EXPECT_EQ(cudaStreamQuery(b), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(done), cudaSuccess);
  EXPECT_EQ(calls, 2);
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, done, untimed), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
  std::vector<int> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), data, n * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(h[0], 2);
  EXPECT_EQ(h[n - 1], 2);
  cudaFree(data);
  cudaEventDestroy(done), cudaEventDestroy(untimed);
  cudaStreamDestroy(a), cudaStreamDestroy(b);
}

TEST(Surface, StreamCaptureAndGraphReplay) {
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  const int n = 1000;
  int *data, *host;
  CUDA_CHECK(cudaMalloc(&data, n * sizeof(int)));
  CUDA_CHECK(cudaMallocHost(&host, n * sizeof(int)));
  CUDA_CHECK(cudaMemset(data, 0, n * sizeof(int)));
  int calls = 0;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status;
  CUDA_CHECK(cudaStreamIsCapturing(s, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  increment<<<(n + 255) / 256, 256, 0, s>>>(data, n);
  increment<<<(n + 255) / 256, 256, 0, s>>>(data, n);
  CUDA_CHECK(cudaMemcpyAsync(host, data, n * sizeof(int), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaLaunchHostFunc(s, count_call, &calls));
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  EXPECT_EQ(calls, 0);  // recorded, not run
  size_t nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 4u);
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 1; replay <= 3; ++replay) {
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    EXPECT_EQ(host[n - 1], 2 * replay);
    EXPECT_EQ(calls, replay);
  }
  cudaGraphExecDestroy(exec), cudaGraphDestroy(graph), cudaStreamDestroy(s);
  cudaFree(data), cudaFreeHost(host);
}

// A graph built node by node (simpleCudaGraphs' manual graph): memset, kernel, copy, host call.
// A 3D copy (here a graph's memcpy node: 2 slices of 3 rows of 8 ints) writes what the kernel after
// it reads; the emu counts its bytes as written, as a cudaMemcpy's.
TEST(Surface, Memcpy3DNodeWritesWhatTheKernelReads) {
  const int width = 8, height = 3, depth = 2, n = width * height * depth;
  int host[n], back[n];
  for (int i = 0; i < n; ++i) host[i] = 10 * i;
  int* data;
  CUDA_CHECK(cudaMalloc(&data, n * sizeof(int)));
  cudaMemcpy3DParms copy_in{};
  copy_in.srcPtr = make_cudaPitchedPtr(host, width * sizeof(int), width, height);
  copy_in.dstPtr = make_cudaPitchedPtr(data, width * sizeof(int), width, height);
  copy_in.extent = make_cudaExtent(width * sizeof(int), height, depth);
  copy_in.kind = cudaMemcpyHostToDevice;
  cudaGraph_t graph;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t in, kernel, out;
  CUDA_CHECK(cudaGraphAddMemcpyNode(&in, graph, nullptr, 0, &copy_in));
  int count = n;
  void* args[] = {&data, &count};
  cudaKernelNodeParams kernel_params{};
  kernel_params.func = (void*)increment;
  kernel_params.gridDim = dim3(1);
  kernel_params.blockDim = dim3(64);
  kernel_params.kernelParams = args;
  CUDA_CHECK(cudaGraphAddKernelNode(&kernel, graph, &in, 1, &kernel_params));
  CUDA_CHECK(cudaGraphAddMemcpyNode1D(&out, graph, &kernel, 1, back, data, n * sizeof(int),
                                      cudaMemcpyDeviceToHost));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], 10 * i + 1) << "element " << i;
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  cudaFree(data);
}

TEST(Surface, GraphBuiltNodeByNode) {
  const int n = 1000;
  int *data, *host;
  CUDA_CHECK(cudaMalloc(&data, n * sizeof(int)));
  CUDA_CHECK(cudaMallocHost(&host, n * sizeof(int)));
  cudaGraph_t graph;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaMemsetParams memset_params{};
  memset_params.dst = data;
  memset_params.value = 7;
  memset_params.elementSize = sizeof(int);
  memset_params.width = n;
  memset_params.height = 1;
  cudaGraphNode_t set, kernel, copy, call;
  CUDA_CHECK(cudaGraphAddMemsetNode(&set, graph, nullptr, 0, &memset_params));
  int count = n;
  void* args[] = {&data, &count};
  cudaKernelNodeParams kernel_params{};
  kernel_params.func = (void*)increment;
  kernel_params.gridDim = dim3((n + 127) / 128);
  kernel_params.blockDim = dim3(128);
  kernel_params.kernelParams = args;
  CUDA_CHECK(cudaGraphAddKernelNode(&kernel, graph, &set, 1, &kernel_params));
  count = 0;  // the node copied the arguments when it was added
  CUDA_CHECK(cudaGraphAddMemcpyNode1D(&copy, graph, &kernel, 1, host, data, n * sizeof(int),
                                      cudaMemcpyDeviceToHost));
  int calls = 0;
  cudaHostNodeParams host_params{count_call, &calls};
  CUDA_CHECK(cudaGraphAddHostNode(&call, graph, &copy, 1, &host_params));
  size_t nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 4u);
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(host[0], 8);
  EXPECT_EQ(host[n - 1], 8);
  EXPECT_EQ(calls, 1);
  count = n / 2;  // now only the first half is incremented
  CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, kernel, &kernel_params));
  CUDA_CHECK(cudaGraphLaunch(exec, nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(host[0], 8);
  EXPECT_EQ(host[n - 1], 7);
  EXPECT_EQ(calls, 2);
  cudaGraphExecDestroy(exec), cudaGraphDestroy(graph), cudaFree(data), cudaFreeHost(host);
}

// Conditional nodes: a kernel sets the handle's value; an if node (with its else body), a while
// node that repeats its body until a kernel sets 0, and a switch node pick what runs.
__global__ void set_condition(cudaGraphConditionalHandle handle, const int* value) {
  cudaGraphSetConditional(handle, *value);
}
__global__ void add_to(int* counter, int amount) { atomicAdd(counter, amount); }
__global__ void count_down(int* left, cudaGraphConditionalHandle handle) {
  if (--*left == 0) cudaGraphSetConditional(handle, 0);
}

cudaGraphNode_t add_kernel_node(cudaGraph_t graph, cudaGraphNode_t after, void* kernel,
                                void** args) {
  cudaGraphNodeParams params = {cudaGraphNodeTypeKernel};
  params.kernel.func = kernel;
  params.kernel.gridDim = dim3(1);
  params.kernel.blockDim = dim3(1);
  params.kernel.kernelParams = args;
  cudaGraphNode_t node;
  CUDA_CHECK(
      cudaGraphAddNode(&node, graph, after ? &after : nullptr, nullptr, after ? 1 : 0, &params));
  return node;
}

TEST(Surface, ConditionalGraphNodes) {
  int *choice, *counter, *left;
  CUDA_CHECK(cudaMallocManaged(&choice, sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&counter, sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&left, sizeof(int)));
  int one = 1, ten = 10, hundred = 100;
  void* then_args[] = {&counter, &one};
  void* else_args[] = {&counter, &ten};
  void* switch_args[] = {&counter, &hundred};
  for (const cudaGraphConditionalNodeType type : {cudaGraphCondTypeIf, cudaGraphCondTypeSwitch}) {
    cudaGraph_t graph;
    CUDA_CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle handle;
    CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, graph));
    void* set_args[] = {&handle, &choice};
    cudaGraphNode_t set = add_kernel_node(graph, nullptr, (void*)set_condition, set_args);
    cudaGraphNodeParams params = {cudaGraphNodeTypeConditional};
    params.conditional.handle = handle;
    params.conditional.type = type;
    params.conditional.size = type == cudaGraphCondTypeIf ? 2 : 3;  // if/else; cases 0, 1, 2
    cudaGraphNode_t conditional;
    CUDA_CHECK(cudaGraphAddNode(&conditional, graph, &set, nullptr, 1, &params));
    add_kernel_node(params.conditional.phGraph_out[0], nullptr, (void*)add_to, then_args);
    add_kernel_node(params.conditional.phGraph_out[1], nullptr, (void*)add_to, else_args);
    if (type == cudaGraphCondTypeSwitch)
      add_kernel_node(params.conditional.phGraph_out[2], nullptr, (void*)add_to, switch_args);
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (const int value : {0, 1, 2, 7}) {
      *choice = value, *counter = 0;
      CUDA_CHECK(cudaGraphLaunch(exec, nullptr));
      CUDA_CHECK(cudaDeviceSynchronize());
      const int want = type == cudaGraphCondTypeIf ? (value != 0 ? 1 : 10)
                       : value == 0                ? 1
                       : value == 1                ? 10
                       : value == 2                ? 100
                                                   : 0;  // no such case: nothing runs
      EXPECT_EQ(*counter, want) << (type == cudaGraphCondTypeIf ? "if" : "switch") << ", value "
                                << value;
    }
    cudaGraphExecDestroy(exec), cudaGraphDestroy(graph);
  }
  // A while node at the end of a captured stream, its body captured into the graph it made; the
  // handle starts at 1 on every launch (cudaGraphCondAssignDefault).
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  add_to<<<1, 1, 0, stream>>>(counter, 1000);
  cudaStreamCaptureStatus status;
  cudaGraph_t graph;
  const cudaGraphNode_t* dependencies;
  size_t count = 0;
  CUDA_CHECK(
      cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &dependencies, nullptr, &count));
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  EXPECT_EQ(count, 1u);
  cudaGraphConditionalHandle handle;
  CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams params = {cudaGraphNodeTypeConditional};
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  cudaGraphNode_t loop;
  CUDA_CHECK(cudaGraphAddNode(&loop, graph, dependencies, nullptr, count, &params));
  CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream, &loop, nullptr, 1,
                                                 cudaStreamSetCaptureDependencies));
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaStream_t body;
  CUDA_CHECK(cudaStreamCreate(&body));
  CUDA_CHECK(cudaStreamBeginCaptureToGraph(body, params.conditional.phGraph_out[0], nullptr,
                                           nullptr, 0, cudaStreamCaptureModeGlobal));
  add_to<<<1, 1, 0, body>>>(counter, 1);
  count_down<<<1, 1, 0, body>>>(left, handle);
  CUDA_CHECK(cudaStreamEndCapture(body, nullptr));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (const int rounds : {3, 5}) {
    *counter = 0, *left = rounds;
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    EXPECT_EQ(*counter, 1000 + rounds) << rounds << " rounds";
  }
  cudaGraphExecDestroy(exec), cudaGraphDestroy(graph);
  cudaStreamDestroy(stream), cudaStreamDestroy(body);
  cudaFree(choice), cudaFree(counter), cudaFree(left);
}

// ---- occupancy and function attributes --------------------------------------------------

__global__ void big_shared(int* out) {
  extern __shared__ int buffer[];
  buffer[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}

__global__ void fill_with(int* data, int n, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value + i;
}

// A graph that allocates an array of `n` ints, fills it with value + i, copies it to `host`
// (where not null) and frees it.
cudaGraphExec_t allocating_graph(int n, int value, int* host = nullptr) {
  cudaGraph_t graph;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaMemAllocNodeParams alloc{};
  alloc.bytesize = n * sizeof(int);
  alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc.poolProps.location = {cudaMemLocationTypeDevice, 0};
  cudaGraphNode_t allocated, filled, copied, freed;
  CUDA_CHECK(cudaGraphAddMemAllocNode(&allocated, graph, nullptr, 0, &alloc));
  EXPECT_NE(alloc.dptr, nullptr);
  int* data = static_cast<int*>(alloc.dptr);
  void* args[] = {&data, &n, &value};
  cudaKernelNodeParams kernel{};
  kernel.func = reinterpret_cast<void*>(fill_with);
  kernel.gridDim = dim3((n + 127) / 128);
  kernel.blockDim = dim3(128);
  kernel.kernelParams = args;
  CUDA_CHECK(cudaGraphAddKernelNode(&filled, graph, &allocated, 1, &kernel));
  cudaGraphNode_t last = filled;
  if (host != nullptr) {
    CUDA_CHECK(cudaGraphAddMemcpyNode1D(&copied, graph, &filled, 1, host, data, n * sizeof(int),
                                        cudaMemcpyDeviceToHost));
    last = copied;
  }
  CUDA_CHECK(cudaGraphAddMemFreeNode(&freed, graph, &last, 1, data));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// Graph memory: an allocation node fixes the address when it is added; the memory is the graph's
// between its allocation and free nodes, launch after launch; stream capture makes the same nodes
// of cudaMallocAsync and cudaFreeAsync.
TEST(Surface, GraphMemoryNodesAndCapturedAllocations) {
  const int n = 1000;
  std::vector<int> host(n, -1);
  cudaGraphExec_t exec = allocating_graph(n, 7, host.data());
  for (int launch = 0; launch < 2; ++launch) {
    std::fill(host.begin(), host.end(), -1);
    CUDA_CHECK(cudaGraphLaunch(exec, 0));
    CUDA_CHECK(cudaStreamSynchronize(0));
    for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 7 + i) << "launch " << launch << ", " << i;
  }
  // As an H100 counts graph memory: mapped in 32 MiB granules, kept after the free node for the
  // next launch, given back by a trim.
  uint64_t used = 0, reserved = 0;
  CUDA_CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
  CUDA_CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved));
  EXPECT_EQ(used, uint64_t{32} << 20);
  EXPECT_EQ(reserved, used);
  CUDA_CHECK(cudaDeviceGraphMemTrim(0));
  CUDA_CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
  EXPECT_EQ(used, 0u);
  CUDA_CHECK(cudaGraphExecDestroy(exec));

  cudaGraph_t graph;
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  int* captured = nullptr;
  CUDA_CHECK(cudaMallocAsync(&captured, n * sizeof(int), stream));
  fill_with<<<(n + 127) / 128, 128, 0, stream>>>(captured, n, 100);
  CUDA_CHECK(
      cudaMemcpyAsync(host.data(), captured, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaFreeAsync(captured, stream));
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int launch = 0; launch < 2; ++launch) {
    std::fill(host.begin(), host.end(), -1);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 100 + i) << "launch " << launch << ", " << i;
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

// Graphs launched one after another in a stream, each freeing what it allocates, share the
// physical memory the first one mapped (NVIDIA's graphMemoryFootprint sample shows it); a graph
// whose allocation is larger maps more.
TEST(Surface, GraphsInOneStreamReuseTheMemoryTheirFreedAllocationsMapped) {
  CUDA_CHECK(cudaDeviceGraphMemTrim(0));
  const int n = 1000;
  cudaGraphExec_t first = allocating_graph(n, 1), second = allocating_graph(n, 2),
                  larger = allocating_graph((40 << 20) / sizeof(int), 3);
  const auto reserved = [] {
    uint64_t bytes = 0;
    CUDA_CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &bytes));
    return bytes;
  };
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUDA_CHECK(cudaGraphLaunch(first, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_EQ(reserved(), uint64_t{32} << 20);
  CUDA_CHECK(cudaGraphLaunch(second, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_EQ(reserved(), uint64_t{32} << 20) << "the second graph reuses the first one's memory";
  CUDA_CHECK(cudaGraphLaunch(larger, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_EQ(reserved(), uint64_t{64} << 20) << "40 MiB: two granules";
  CUDA_CHECK(cudaDeviceGraphMemTrim(0));
  EXPECT_EQ(reserved(), 0u);
  for (cudaGraphExec_t exec : {first, second, larger}) CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(Surface, OccupancyAndAttributes) {
  int blocks = 0, min_grid = 0, block_size = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, increment, 256, 0));
  EXPECT_GE(blocks, 1);
  EXPECT_LE(blocks, 8);  // 2048 threads per multiprocessor
  CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, increment, 0, 0));
  EXPECT_GT(block_size, 0);
  EXPECT_EQ(block_size % 32, 0);
  EXPECT_GT(min_grid, 0);
  cudaFuncAttributes attributes;
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, increment));
  EXPECT_GE(attributes.maxThreadsPerBlock, 256);
  CUDA_CHECK(cudaFuncSetCacheConfig(increment, cudaFuncCachePreferL1));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 20));
  size_t fifo = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
  EXPECT_EQ(fifo, 1u << 20);
  cudaSharedMemConfig banks = cudaSharedMemBankSizeDefault;
  CUDA_CHECK(cudaDeviceGetSharedMemConfig(&banks));
  EXPECT_EQ(banks, cudaSharedMemBankSizeFourByte);
}

TEST(Surface, DynamicSharedMemoryBeyond48KiBNeedsOptIn) {
  int* out;
  CUDA_CHECK(cudaMallocManaged(&out, 256 * sizeof(int)));
  const size_t bytes = 64 * 1024;
  big_shared<<<1, 256, bytes>>>(out);
  EXPECT_NE(cudaGetLastError(), cudaSuccess);  // refused without the opt-in
  CUDA_CHECK(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
  big_shared<<<1, 256, bytes>>>(out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(out[0], 255);
  cudaFree(out);
}

// ---- device code --------------------------------------------------------------------------

struct Intrinsics {
  float bits_roundtrip, hint_load, half_sum, half2_low;
  int as_int;
  float add_down, add_up;
  long long clock_delta;
  unsigned brev, popc, byte_perm;
  int clz;
  float pi;
  uint4 vector;
};

__global__ void intrinsics(const float* in, float* streamed, Intrinsics* r) {
  r->as_int = __float_as_int(1.0f);
  r->bits_roundtrip = __int_as_float(__float_as_int(in[0]));
  r->hint_load = __ldg(&in[1]) + __ldcs(&in[2]) + __ldcg(&in[3]);
  __stcs(&streamed[0], in[0]);
  __stcg(&streamed[1], in[1]);
  const __half a = __float2half(1.5f), b = __float2half(2.25f);
  r->half_sum = __half2float(__hadd(a, b));
  r->half2_low = __low2float(__hmul2(__floats2half2_rn(3.0f, 4.0f), __float2half2_rn(0.5f)));
  r->add_down = __fadd_rd(1.0f, 1e-8f);
  r->add_up = __fadd_ru(1.0f, 1e-8f);
  const long long start = clock64();
  float x = 0;
  for (int i = 0; i < 1000; ++i) x += __sinf(i);
  r->clock_delta = clock64() - start + (x > 1e30f);
  r->brev = __brev(1u);
  r->popc = __popc(0xF0F0u);
  r->clz = __clz(1);
  r->byte_perm = __byte_perm(0x33221100u, 0x77665544u, 0x4321);
  r->pi = CUDART_PI_F;
  r->vector = make_uint4(1, 2, 3, 4);
}

// ---- directed rounding -----------------------------------------------------------------------

// Each rounding intrinsic in each of its four modes, against the host's processor set to that mode
// (fesetround), on operands from a printed seed: near 1, across the whole range of exponents
// (subnormal to near overflow), pairs that cancel, and zeros, infinities and NaNs.
enum RoundingOp { kAdd, kSub, kMul, kDiv, kFma, kSqrt, kRcp, kRoundingOps };
constexpr int kRoundingModes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};

// Each operation of one type in mode `s` (rn, rz, ru, rd), into o[op * 4 + k]; `add` ... `rcp` the
// intrinsics' names without the mode.
#define ROUNDED(k, s, add, sub, mul, div, fma, sqrt, rcp, abs) \
  o[kAdd * 4 + k] = add##s(x, y);                              \
  o[kSub * 4 + k] = sub##s(x, y);                              \
  o[kMul * 4 + k] = mul##s(x, y);                              \
  o[kDiv * 4 + k] = div##s(x, y);                              \
  o[kFma * 4 + k] = fma##s(x, y, z);                           \
  o[kSqrt * 4 + k] = sqrt##s(abs(x));                          \
  o[kRcp * 4 + k] = rcp##s(x);
#define FLOAT_ROUNDED(k, s) \
  ROUNDED(k, s, __fadd_, __fsub_, __fmul_, __fdiv_, __fmaf_, __fsqrt_, __frcp_, fabsf)
#define DOUBLE_ROUNDED(k, s) \
  ROUNDED(k, s, __dadd_, __dsub_, __dmul_, __ddiv_, __fma_, __dsqrt_, __drcp_, fabs)

__global__ void rounded_floats(const float* a, const float* b, const float* c, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = a[i], y = b[i], z = c[i];
  float* o = out + i * kRoundingOps * 4;
  FLOAT_ROUNDED(0, rn) FLOAT_ROUNDED(1, rz) FLOAT_ROUNDED(2, ru) FLOAT_ROUNDED(3, rd)
}

__global__ void rounded_doubles(const double* a, const double* b, const double* c, double* out,
                                int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double x = a[i], y = b[i], z = c[i];
  double* o = out + i * kRoundingOps * 4;
  DOUBLE_ROUNDED(0, rn) DOUBLE_ROUNDED(1, rz) DOUBLE_ROUNDED(2, ru) DOUBLE_ROUNDED(3, rd)
}

// The operation on the host with its processor in `mode` (the empty asm statements keep the
// compiler from moving the arithmetic across the mode's change).
template <class T>
T host_rounded(int mode, int op, T x, T y, T z) {
  const int saved = std::fegetround();
  std::fesetround(mode);
  asm volatile("" : "+x"(x), "+x"(y), "+x"(z));
  T r = 0;
  switch (op) {
    case kAdd:
      r = x + y;
      break;
    case kSub:
      r = x - y;
      break;
    case kMul:
      r = x * y;
      break;
    case kDiv:
      r = x / y;
      break;
    case kFma:
      r = std::fma(x, y, z);
      break;
    case kSqrt:
      r = std::sqrt(std::fabs(x));
      break;
    case kRcp:
      r = T(1) / x;
      break;
  }
  asm volatile("" : "+x"(r));
  std::fesetround(saved);
  return r;
}

template <class T>
std::vector<T> rounding_operands(std::mt19937_64& gen, int n) {
  using limits = std::numeric_limits<T>;
  const T special[] = {0,
                       -T(0),
                       limits::infinity(),
                       -limits::infinity(),
                       limits::quiet_NaN(),
                       limits::denorm_min(),
                       limits::min(),
                       limits::max(),
                       1,
                       -1,
                       3};
  std::uniform_int_distribution<int> kind(0, 9), sign(0, 1);
  std::uniform_int_distribution<int> any_exponent(limits::min_exponent - limits::digits,
                                                  limits::max_exponent);
  std::uniform_int_distribution<int> near_one(-4, 4);
  std::uniform_int_distribution<size_t> pick(0, std::size(special) - 1);
  std::uniform_real_distribution<double> mantissa(1, 2);
  std::vector<T> v(n);
  for (T& x : v) {
    const int k = kind(gen);
    if (k == 0) {
      x = special[pick(gen)];
      continue;
    }
    const T m = static_cast<T>(sign(gen) ? -mantissa(gen) : mantissa(gen));
    x = std::ldexp(m, k < 6 ? near_one(gen) : any_exponent(gen));
  }
  return v;
}

template <class T>
void expect_rounding_as_host(void (*kernel)(const T*, const T*, const T*, T*, int), unsigned seed) {
  const int n = 3000;
  std::mt19937_64 gen(seed);
  std::vector<T> a = rounding_operands<T>(gen, n), b = rounding_operands<T>(gen, n),
                 c = rounding_operands<T>(gen, n);
  for (int i = 0; i < n; i += 7) b[i] = -a[i];  // sums that cancel exactly
  for (int i = 3; i < n; i += 11) b[i] = a[i];  // exact quotients and differences
  T *da, *db, *dc, *out;
  CUDA_CHECK(cudaMalloc(&da, n * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&db, n * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&dc, n * sizeof(T)));
  CUDA_CHECK(cudaMallocManaged(&out, size_t{n} * kRoundingOps * 4 * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dc, c.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  kernel<<<(n + 127) / 128, 128>>>(da, db, dc, out, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  const char* names[] = {"add", "sub", "mul", "div", "fma", "sqrt", "rcp"};
  const char* modes[] = {"rn", "rz", "ru", "rd"};
  int wrong = 0;
  for (int i = 0; i < n && wrong < 10; ++i)
    for (int op = 0; op < kRoundingOps; ++op)
      for (int m = 0; m < 4; ++m) {
        const T expected = host_rounded(kRoundingModes[m], op, a[i], b[i], c[i]);
        const T got = out[(i * kRoundingOps + op) * 4 + m];
        if (std::isnan(expected) && std::isnan(got)) continue;
        if (std::memcmp(&expected, &got, sizeof(T)) == 0) continue;
        ADD_FAILURE() << names[op] << "_" << modes[m] << "(" << a[i] << ", " << b[i] << ", " << c[i]
                      << "): " << got << ", the host's " << expected << " (seed " << seed
                      << ", operands " << i << ")";
        ++wrong;
      }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(out);
}

TEST(Surface, DirectedRoundingAsTheProcessorsModes) {
  const unsigned seed = 20261130;
  std::printf("operands from seed %u\n", seed);
  expect_rounding_as_host<float>(rounded_floats, seed);
  expect_rounding_as_host<double>(rounded_doubles, seed + 1);
}

// ---- shifts -------------------------------------------------------------------------------

// Shifts by amounts from memory, some of them the operand's width or more, or negative: a GPU's
// shift instructions clamp the amount (every bit shifted out: 0, or the sign of a negative number
// shifted right), in a kernel, in a device function and as compound assignments.
constexpr int kShiftAmounts[] = {-1, 0, 1, 7, 31, 32, 33, 63, 64, 65, 100};
constexpr int kShiftCount = sizeof(kShiftAmounts) / sizeof(kShiftAmounts[0]);
constexpr int kShiftResults = 12;  // per amount

__device__ long long shifted_by_a_function(long long v, int n) { return v >> n; }

__global__ void shifts(const int* amounts, long long* out) {
  const int i = threadIdx.x;
  if (i >= kShiftCount) return;
  const int n = amounts[i];
  int positive = 5, negative = -5;
  unsigned u = 0x80000001u;
  long long wide = -3;
  unsigned long long uwide = 0x8000000000000001ull;
  unsigned char byte = 1;
  long long* o = out + i * kShiftResults;
  o[0] = positive << n;
  o[1] = negative >> n;
  o[2] = positive >> n;
  o[3] = u << n;
  o[4] = u >> n;
  o[5] = static_cast<long long>(wide << n);
  o[6] = shifted_by_a_function(wide, n);
  o[7] = static_cast<long long>(uwide >> n);
  o[8] = byte << n;  // (promoted to int: 32 bits)
  u <<= n;
  o[9] = u;
  wide >>= n;
  o[10] = wide;
  o[11] = (1 << n) - 1;  // a mask of n bits (Rodinia's huffman with n = 32)
}

// What a GPU gives: the amount clamped to the width (value << n for n within it).
long long expected_left(long long value, int n, int width) {
  if (n < 0 || n >= width) return 0;
  const unsigned long long bits = static_cast<unsigned long long>(value) << n;
  return width == 32 ? static_cast<int>(static_cast<unsigned>(bits)) : static_cast<long long>(bits);
}
long long expected_right(long long value, int n, int width, bool is_signed) {
  if (n < 0 || n >= width) return is_signed && value < 0 ? -1 : 0;
  if (!is_signed)
    return static_cast<long long>(
        (width == 32 ? static_cast<unsigned long long>(static_cast<unsigned>(value))
                     : static_cast<unsigned long long>(value)) >>
        n);
  return value >> n;
}

TEST(Surface, ShiftsByTheWidthOrMoreClampAsOnTheGpu) {
  int* amounts;
  long long* out;
  CUDA_CHECK(cudaMalloc(&amounts, sizeof(kShiftAmounts)));
  CUDA_CHECK(cudaMallocManaged(&out, kShiftCount * kShiftResults * sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(amounts, kShiftAmounts, sizeof(kShiftAmounts), cudaMemcpyHostToDevice));
  shifts<<<1, 32>>>(amounts, out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < kShiftCount; ++i) {
    const int n = kShiftAmounts[i];
    const long long* o = out + i * kShiftResults;
    const long long u_left = expected_left(0x80000001u, n, 32);
    const long long expected[kShiftResults] = {
        expected_left(5, n, 32),
        expected_right(-5, n, 32, true),
        expected_right(5, n, 32, true),
        static_cast<unsigned>(u_left),
        expected_right(0x80000001u, n, 32, false),
        expected_left(-3, n, 64),
        expected_right(-3, n, 64, true),
        expected_right(static_cast<long long>(0x8000000000000001ull), n, 64, false),
        expected_left(1, n, 32),
        static_cast<unsigned>(u_left),
        expected_right(-3, n, 64, true),
        static_cast<int>(static_cast<unsigned>(expected_left(1, n, 32)) - 1u),  // (32-bit int)
    };
    for (int k = 0; k < kShiftResults; ++k)
      EXPECT_EQ(o[k], expected[k]) << "result " << k << ", amount " << n;
  }
  cudaFree(amounts);
  cudaFree(out);
}

// bfloat16 on the device: conversions round to nearest even (ties at 1 + 2^-8 and 1 + 3 * 2^-8), a
// NaN becomes the canonical 0x7FFF, FLT_MAX rounds up to infinity; _rz truncates; one addition
// rounds once (1 + 2^-8 is a tie: 1); atomics on bfloat16 add exactly while the sum is small.
struct Bfloat16Results {
  unsigned short rounded[6], truncated, sum_of_tie, fma, pair[2];
  float widened, total;
};

__global__ void bfloat16_ops(const float* in, __nv_bfloat16* total, Bfloat16Results* r) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (int i = 0; i < 6; ++i) r->rounded[i] = __bfloat16_as_ushort(__float2bfloat16(in[i]));
    r->truncated = __bfloat16_as_ushort(__float2bfloat16_rz(in[1]));
    r->sum_of_tie = __bfloat16_as_ushort(__hadd(__float2bfloat16(1.0f), __float2bfloat16(in[6])));
    r->fma = __bfloat16_as_ushort(
        __hfma(__float2bfloat16(1.5f), __float2bfloat16(2.0f), __float2bfloat16(0.25f)));
    const __nv_bfloat162 p =
        __hmul2(__floats2bfloat162_rn(in[7], 4.0f), __float2bfloat162_rn(0.5f));
    r->pair[0] = __bfloat16_as_ushort(__low2bfloat16(p));
    r->pair[1] = __bfloat16_as_ushort(__high2bfloat16(p));
    r->widened = __bfloat162float(__ushort_as_bfloat16(0x3F82));
  }
  atomicAdd(total, __float2bfloat16(1.0f));
}

TEST(Surface, Bfloat16RoundsAsTheGpu) {
  float* in;
  __nv_bfloat16* total;
  Bfloat16Results* r;
  CUDA_CHECK(cudaMallocManaged(&in, 8 * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&total, sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMallocManaged(&r, sizeof(Bfloat16Results)));
  const float inputs[8] = {1.00390625f, 1.01171875f, std::nextafter(1.00390625f, 2.0f),
                           -2.5f,       NAN,         FLT_MAX,
                           0.00390625f, 3.0f};
  for (int i = 0; i < 8; ++i) in[i] = inputs[i];
  *total = __float2bfloat16(0.0f);
  bfloat16_ops<<<2, 32>>>(in, total, r);
  CUDA_CHECK(cudaDeviceSynchronize());
  const unsigned short rounded[6] = {0x3F80, 0x3F82, 0x3F81, 0xC020, 0x7FFF, 0x7F80};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r->rounded[i], rounded[i]) << "input " << inputs[i];
  EXPECT_EQ(r->truncated, 0x3F81);
  EXPECT_EQ(r->sum_of_tie, 0x3F80);
  EXPECT_EQ(r->fma, 0x4050);      // 3.25
  EXPECT_EQ(r->pair[0], 0x3FC0);  // 1.5
  EXPECT_EQ(r->pair[1], 0x4000);  // 2
  EXPECT_EQ(r->widened, 1.015625f);
  EXPECT_EQ(__bfloat162float(*total), 64.0f);
  cudaFree(in);
  cudaFree(total);
  cudaFree(r);
}

TEST(Surface, DeviceIntrinsics) {
  float* in;
  float* streamed;
  Intrinsics* r;
  CUDA_CHECK(cudaMallocManaged(&in, 4 * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&streamed, 2 * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&r, sizeof(Intrinsics)));
  for (int i = 0; i < 4; ++i) in[i] = 1.25f * (i + 1);
  intrinsics<<<1, 1>>>(in, streamed, r);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(r->as_int, 0x3f800000);
  EXPECT_EQ(r->bits_roundtrip, in[0]);
  EXPECT_EQ(r->hint_load, in[1] + in[2] + in[3]);
  EXPECT_EQ(streamed[0], in[0]);
  EXPECT_EQ(streamed[1], in[1]);
  EXPECT_EQ(r->half_sum, 3.75f);
  EXPECT_EQ(r->half2_low, 1.5f);
  EXPECT_EQ(r->add_down, 1.0f);
  EXPECT_EQ(r->add_up, std::nextafter(1.0f, 2.0f));
  EXPECT_GT(r->clock_delta, 0);
  EXPECT_EQ(r->brev, 0x80000000u);
  EXPECT_EQ(r->popc, 8u);
  EXPECT_EQ(r->clz, 31);
  EXPECT_EQ(r->byte_perm, 0x44332211u);  // bytes 1, 2, 3 of x, then byte 0 of y
  EXPECT_FLOAT_EQ(r->pi, 3.14159265f);
  EXPECT_EQ(r->vector.w, 4u);
  cudaFree(in), cudaFree(streamed), cudaFree(r);
}

// Memory that the host may write directly (managed, page-locked) starts as zeros, as the fresh
// pages a GPU's driver maps for it do: a kernel that adds into it before anyone wrote it (Packt's
// recursion sample counts on this) finds 0 on both backends. (Device memory from cudaMalloc starts
// poisoned on emu, and a read of it before any write is named.)
__global__ void add_one(int* counts) { counts[threadIdx.x] += 1; }

// Each thread spins until its clock has moved on `cycles` (as NVIDIA's samples keep a GPU busy)
// and records how far it moved, and whether it ever went back.
__global__ void spin_on_the_clock(long long cycles, long long* moved, int* backwards) {
  const long long start = clock64();
  long long now = start, before = start;
  while (now - start < cycles) {
    now = clock64();
    if (now < before) atomicAdd(backwards, 1);
    before = now;
  }
  moved[blockIdx.x * blockDim.x + threadIdx.x] = now - start;
}

// A spin on the clock ends, having seen the clock move on by what it waited for and never back.
TEST(Surface, ThreadsThatSpinOnTheClockFinish) {
  const int threads = 64 * 256;
  const long long cycles = 100000;  // (50 us at 2 GHz)
  long long* moved = nullptr;
  int* backwards = nullptr;
  CUDA_CHECK(cudaMalloc(&moved, threads * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&backwards, sizeof(int)));
  CUDA_CHECK(cudaMemset(backwards, 0, sizeof(int)));
  spin_on_the_clock<<<64, 256>>>(cycles, moved, backwards);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<long long> host(threads);
  int went_back = -1;
  CUDA_CHECK(cudaMemcpy(host.data(), moved, threads * sizeof(long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&went_back, backwards, sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < threads; ++i) ASSERT_GE(host[i], cycles) << "thread " << i;
  EXPECT_EQ(went_back, 0);
  cudaFree(moved), cudaFree(backwards);
}

TEST(Surface, ManagedAndPageLockedMemoryStartAsZeros) {
  const int n = 256;
  int *managed, *page_locked;
  CUDA_CHECK(cudaMallocManaged(&managed, n * sizeof(int)));
  CUDA_CHECK(cudaMallocHost(&page_locked, n * sizeof(int)));
  add_one<<<1, n>>>(managed);
  add_one<<<1, n>>>(page_locked);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(managed[i], 1) << "managed, element " << i;
    ASSERT_EQ(page_locked[i], 1) << "page-locked, element " << i;
  }
  cudaFree(managed), cudaFreeHost(page_locked);
}

// The integer dot products of sm_61 (__dp4a, __dp2a_lo, __dp2a_hi), signed and unsigned, on words
// and on vectors, against a host reference that takes the bytes apart with shifts.
__global__ void dot_products(int a, int b, int c, int* signed_out, unsigned* unsigned_out) {
  const char4 a4 = *reinterpret_cast<const char4*>(&a), b4 = *reinterpret_cast<const char4*>(&b);
  const short2 a2 = *reinterpret_cast<const short2*>(&a);
  signed_out[0] = __dp4a(a, b, c);
  signed_out[1] = __dp4a(a4, b4, c);
  signed_out[2] = __dp2a_lo(a, b, c);
  signed_out[3] = __dp2a_hi(a2, b4, c);
  const unsigned ua = static_cast<unsigned>(a), ub = static_cast<unsigned>(b);
  unsigned_out[0] = __dp4a(ua, ub, static_cast<unsigned>(c));
  unsigned_out[1] = __dp2a_lo(ua, ub, static_cast<unsigned>(c));
  unsigned_out[2] = __dp2a_hi(ua, ub, static_cast<unsigned>(c));
}

long long byte_of(unsigned w, int k, bool is_signed) {
  const unsigned v = (w >> (8 * k)) & 0xFFu;
  return is_signed && v >= 0x80u ? static_cast<long long>(v) - 0x100 : v;
}
long long half_of(unsigned w, int k, bool is_signed) {
  const unsigned v = (w >> (16 * k)) & 0xFFFFu;
  return is_signed && v >= 0x8000u ? static_cast<long long>(v) - 0x10000 : v;
}

TEST(Surface, IntegerDotProducts) {
  const unsigned a = 0x80FF7F01u, b = 0x02FE8003u;  // bytes at both ends of each range
  const int c = 10;
  int* signed_out;
  unsigned* unsigned_out;
  CUDA_CHECK(cudaMallocManaged(&signed_out, 4 * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&unsigned_out, 3 * sizeof(unsigned)));
  dot_products<<<1, 1>>>(static_cast<int>(a), static_cast<int>(b), c, signed_out, unsigned_out);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (const bool is_signed : {true, false}) {
    long long four = c, low = c, high = c;
    for (int k = 0; k < 4; ++k) four += byte_of(a, k, is_signed) * byte_of(b, k, is_signed);
    for (int k = 0; k < 2; ++k) {
      low += half_of(a, k, is_signed) * byte_of(b, k, is_signed);
      high += half_of(a, k, is_signed) * byte_of(b, k + 2, is_signed);
    }
    if (is_signed) {
      EXPECT_EQ(signed_out[0], four);
      EXPECT_EQ(signed_out[1], four) << "char4";
      EXPECT_EQ(signed_out[2], low);
      EXPECT_EQ(signed_out[3], high) << "short2, char4";
    } else {
      EXPECT_EQ(unsigned_out[0], static_cast<unsigned>(four));
      EXPECT_EQ(unsigned_out[1], static_cast<unsigned>(low));
      EXPECT_EQ(unsigned_out[2], static_cast<unsigned>(high));
    }
  }
  cudaFree(signed_out), cudaFree(unsigned_out);
}

// A split barrier (libcu++): each thread arrives, does other work, then waits for the block.
__global__ void split_barrier_sum(const int* in, int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int partial[128];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  partial[threadIdx.x] = in[threadIdx.x];
  auto token = bar.arrive();
  const int mine = 2 * in[threadIdx.x];  // work between arriving and waiting
  bar.wait(std::move(token));
  int sum = 0;
  for (int k = 0; k < static_cast<int>(blockDim.x); ++k) sum += partial[k];
  out[threadIdx.x] = sum + mine;
  bar.arrive_and_wait();
}

// libcu++'s scoped atomics on device memory: a counter, a minimum, a maximum and a float sum from
// every thread of several blocks, and a fence.
__global__ void scoped_atomics(int* counter, int* low, int* high, float* sum, const int* data,
                               int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  cuda::atomic_ref<int, cuda::thread_scope_device>(*counter).fetch_add(1,
                                                                       cuda::memory_order_relaxed);
  cuda::atomic_ref<int, cuda::thread_scope_device>(*low).fetch_min(data[i]);
  cuda::atomic_ref<int, cuda::thread_scope_system>(*high).fetch_max(data[i]);
  cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
  cuda::atomic_ref<float, cuda::thread_scope_device> total(*sum);
  total.fetch_add(0.5f);
}

TEST(Surface, ScopedAtomicsOfLibcuxx) {
  const int n = 1000;
  int *counter, *low, *high, *data;
  float* sum;
  CUDA_CHECK(cudaMallocManaged(&counter, sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&low, sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&high, sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&sum, sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&data, n * sizeof(int)));
  *counter = 0, *low = 1 << 30, *high = -(1 << 30), *sum = 0;
  for (int i = 0; i < n; ++i) data[i] = (i * 7919) % n - 300;  // each of -300..699 once
  scoped_atomics<<<(n + 127) / 128, 128>>>(counter, low, high, sum, data, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(*counter, n);
  EXPECT_EQ(*low, -300);
  EXPECT_EQ(*high, 699);
  EXPECT_EQ(*sum, 500.0f);
  cuda::atomic<int> host_side{5};
  EXPECT_EQ(host_side.fetch_max(9), 5);
  EXPECT_EQ(host_side.load(), 9);
  cudaFree(counter), cudaFree(low), cudaFree(high), cudaFree(sum), cudaFree(data);
}

TEST(Surface, SplitArriveWaitBarrier) {
  const int n = 128;
  int *in, *out;
  CUDA_CHECK(cudaMallocManaged(&in, n * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&out, n * sizeof(int)));
  for (int i = 0; i < n; ++i) in[i] = i;
  split_barrier_sum<<<1, n>>>(in, out);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) EXPECT_EQ(out[i], n * (n - 1) / 2 + 2 * i) << i;
  cudaFree(in), cudaFree(out);
}

// Asynchronous copies from global to shared memory, four ways, each followed by the wait that
// makes the copy visible to the block; every thread then writes the tile back reversed, and the
// last 4 bytes of the tile of the cuda_pipeline.h copy are its zero fill.
constexpr int kCopyTile = 256;
__global__ void async_copies(const int* in, int* out) {
  __shared__ alignas(16) int tile[4][kCopyTile];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  const int t = threadIdx.x;  // kCopyTile / 4 threads: one int4 each
  auto block = cg::this_thread_block();
  if (t == 0) init(&bar, blockDim.x);
  __syncthreads();
  // 1. A pipeline of one thread (cuda::pipeline), 16 bytes per thread.
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  pipe.producer_acquire();
  cuda::memcpy_async(&tile[0][4 * t], &in[4 * t], cuda::aligned_size_t<16>(16), pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  pipe.consumer_release();
  // 2. The whole block copies together (cooperative groups).
  cg::memcpy_async(block, tile[1], in + kCopyTile, sizeof(int) * kCopyTile);
  // 3. cuda_pipeline.h's primitives, the last thread's copy with 4 bytes of zero fill.
  __pipeline_memcpy_async(&tile[2][4 * t], &in[2 * kCopyTile + 4 * t], 16,
                          t == static_cast<int>(blockDim.x) - 1 ? 4 : 0);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  // 4. A copy that completes on a barrier.
  cuda::memcpy_async(&tile[3][4 * t], &in[3 * kCopyTile + 4 * t], sizeof(int4), bar);
  cg::wait(block);
  bar.arrive_and_wait();
  for (int way = 0; way < 4; ++way)
    for (int k = 0; k < 4; ++k) {
      const int i = 4 * t + k;
      out[way * kCopyTile + i] = tile[way][kCopyTile - 1 - i];
    }
}

TEST(Surface, AsynchronousCopiesToSharedMemory) {
  int *in, *out;
  CUDA_CHECK(cudaMallocManaged(&in, 4 * kCopyTile * sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&out, 4 * kCopyTile * sizeof(int)));
  for (int i = 0; i < 4 * kCopyTile; ++i) in[i] = i + 1, out[i] = -1;
  async_copies<<<1, kCopyTile / 4>>>(in, out);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int way = 0; way < 4; ++way)
    for (int i = 0; i < kCopyTile; ++i) {
      const int source = way * kCopyTile + kCopyTile - 1 - i;
      const int want = way == 2 && i == 0 ? 0 : in[source];  // tile[2]'s last int: zero fill
      EXPECT_EQ(out[way * kCopyTile + i], want) << "way " << way + 1 << ", element " << i;
    }
  cudaFree(in), cudaFree(out);
}

// Inline PTX that reads special registers: the emu's translator turns these reads into calls.
__global__ void special_registers(unsigned* lane, unsigned* warp, unsigned* below,
                                  unsigned long long* timer) {
  const int i = threadIdx.x;
  unsigned l, w, lt;
  unsigned long long t;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  asm("mov.u32 %0, %%warpid;" : "=r"(w));
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  lane[i] = l, warp[i] = w, below[i] = lt, timer[i] = t;
}

TEST(Surface, InlinePtxReadsSpecialRegisters) {
  const int n = 96;
  unsigned *lane, *warp, *below;
  unsigned long long* timer;
  CUDA_CHECK(cudaMallocManaged(&lane, n * sizeof(unsigned)));
  CUDA_CHECK(cudaMallocManaged(&warp, n * sizeof(unsigned)));
  CUDA_CHECK(cudaMallocManaged(&below, n * sizeof(unsigned)));
  CUDA_CHECK(cudaMallocManaged(&timer, n * sizeof(unsigned long long)));
  special_registers<<<1, n>>>(lane, warp, below, timer);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(lane[i], unsigned(i % 32)) << i;
    EXPECT_EQ(below[i], (1u << (i % 32)) - 1) << i;
    EXPECT_GT(timer[i], 0u) << i;  // nanoseconds since some start: large, not zero
  }
  EXPECT_EQ(lane[0], 0u);
  EXPECT_EQ(warp[0], warp[31]);  // %warpid is the SM's warp slot: equal within a warp only
  cudaFree(lane), cudaFree(warp), cudaFree(below), cudaFree(timer);
}

__global__ void syncthreads_votes(int* out) {
  const int t = threadIdx.x;
  out[0] = __syncthreads_count(t % 3 == 0);
  out[1] = __syncthreads_and(t >= 0);
  out[2] = __syncthreads_or(t == 77);
}

TEST(Surface, BarriersThatCount) {
  int* out;
  CUDA_CHECK(cudaMallocManaged(&out, 3 * sizeof(int)));
  syncthreads_votes<<<1, 128>>>(out);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(out[0], 43);
  EXPECT_NE(out[1], 0);
  EXPECT_NE(out[2], 0);
  cudaFree(out);
}

__global__ void checks_its_input(const int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(data[i] >= 0);
}

TEST(Surface, DeviceAssertFailsTheLaunch) {
  int* data;
  CUDA_CHECK(cudaMallocManaged(&data, 64 * sizeof(int)));
  for (int i = 0; i < 64; ++i) data[i] = i == 40 ? -1 : i;
  checks_its_input<<<2, 32>>>(data, 64);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorAssert);
}

__global__ void traps_on_a_negative(const int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && data[i] < 0) __trap();
}

// llm.c's kernels call __trap() where they prefer a crash to a deadlock.
TEST(Surface, DeviceTrapFailsTheLaunch) {
  int* data;
  CUDA_CHECK(cudaMallocManaged(&data, 64 * sizeof(int)));
  for (int i = 0; i < 64; ++i) data[i] = i == 40 ? -1 : i;
  traps_on_a_negative<<<2, 32>>>(data, 64);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
}

// ---- dynamic parallelism ------------------------------------------------------------------

// Each thread of the parent launches a child grid that fills its part; the children of depth 1
// launch one more level (cdpSimplePrint's recursion, two levels deep).
__global__ void child(int* data, int begin, int count, int depth) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[begin + i] += depth;
  if (i == 0 && depth < 2) child<<<1, 32>>>(data, begin, count, depth + 1);
}

__global__ void parent(int* data, int part) {
  child<<<(part + 31) / 32, 32>>>(data, threadIdx.x * part, part, 1);
}

TEST(Surface, KernelsLaunchKernels) {
  const int threads = 4, part = 20;
  int* data;
  CUDA_CHECK(cudaMallocManaged(&data, threads * part * sizeof(int)));
  CUDA_CHECK(cudaMemset(data, 0, threads * part * sizeof(int)));
  parent<<<1, threads>>>(data, part);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < threads * part; ++i) ASSERT_EQ(data[i], 1 + 2) << i;
  cudaFree(data);
}

// Thread 0 of each block allocates the block's part with the device runtime's cudaMalloc, the
// block fills it; a second launch sums each part and frees it there (cdpBezierTessellation). With
// many blocks every worker of the emu makes such calls while the launch is running.
__global__ void allocate_parts(int** parts, int count) {
  if (threadIdx.x == 0) {
    int* part = nullptr;
    parts[blockIdx.x] = cudaMalloc(&part, count * sizeof(int)) == cudaSuccess ? part : nullptr;
  }
  __syncthreads();
  int* part = parts[blockIdx.x];
  if (part != nullptr && threadIdx.x < count) part[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
}

__global__ void sum_and_free_parts(int** parts, int count, long long* sums) {
  if (threadIdx.x != 0) return;
  int* part = parts[blockIdx.x];
  long long sum = -1;
  if (part != nullptr) {
    sum = 0;
    for (int i = 0; i < count; ++i) sum += part[i];
    if (cudaFree(part) != cudaSuccess) sum = -2;
  }
  sums[blockIdx.x] = sum;
}

TEST(Surface, KernelsAllocateAndFreeDeviceMemory) {
  const int blocks = 256, count = 50;
  int** parts;
  long long* sums;
  CUDA_CHECK(cudaMallocManaged(&parts, blocks * sizeof(int*)));
  CUDA_CHECK(cudaMallocManaged(&sums, blocks * sizeof(long long)));
  allocate_parts<<<blocks, 64>>>(parts, count);
  CUDA_CHECK(cudaGetLastError());
  sum_and_free_parts<<<blocks, 32>>>(parts, count, sums);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  for (long long b = 0; b < blocks; ++b)
    ASSERT_EQ(sums[b], b * 1000 * count + count * (count - 1) / 2) << "block " << b;
  cudaFree(parts);
  cudaFree(sums);
}

// ---- a race by design -------------------------------------------------------------------------

// NVIDIA's segmentationTreeThrust breaks each two-vertex cycle of a successor graph with no barrier
// (its removeCycles): both threads of a cycle make the smaller vertex its own successor, and
// whichever runs first, or when they run at once, the other then finds the cycle gone or breaks it
// the same way. A GPU gives one result; the emu, whose checks see the race, runs such a launch
// again in the other order, finds the same memory, and reports nothing (docs/diagnostics.md).
__global__ void break_cycles_of_two(unsigned* successors, unsigned n) {
  const unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  const unsigned successor = successors[v];
  if (successors[successor] == v) {
    if (v < successor)
      successors[v] = v;
    else
      successors[successor] = successor;
  }
}

TEST(Surface, ARaceByDesignLeavesOneResult) {
  const unsigned n = 1 << 16;
  unsigned* successors;
  CUDA_CHECK(cudaMalloc(&successors, n * sizeof(unsigned)));
  std::vector<unsigned> graph(n), after(n);
  for (const unsigned partner : {1u, 256u, 4097u}) {  // in one block, in two, mixed
    for (unsigned v = 0; v < n; ++v) graph[v] = (v ^ partner) < n ? v ^ partner : v;
    CUDA_CHECK(cudaMemcpy(successors, graph.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    break_cycles_of_two<<<n / 256, 256>>>(successors, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(after.data(), successors, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned v = 0; v < n; ++v)
      ASSERT_EQ(after[v], std::min(v, graph[v])) << "vertex " << v << ", partner v ^ " << partner;
  }
  cudaFree(successors);
}

// ---- textures and surfaces -----------------------------------------------------------------

__global__ void sample_2d(cudaTextureObject_t tex, const float2* at, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(tex, at[i].x, at[i].y);
}

// A 4x3 float texture: point and linear filtering, unnormalised (clamp) and normalised (wrap).
TEST(Surface, Texture2DPointAndLinear) {
  const int w = 4, h = 3;
  float texels[h][w];
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) texels[y][x] = 10.0f * y + x;
  cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  cudaArray_t array;
  CUDA_CHECK(cudaMallocArray(&array, &format, w, h));
  CUDA_CHECK(cudaMemcpy2DToArray(array, 0, 0, texels, w * sizeof(float), w * sizeof(float), h,
                                 cudaMemcpyHostToDevice));
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  const float2 points[] = {{1.5f, 1.5f},  {1.25f, 0.5f},  {-3.0f, 2.5f},
                           {3.75f, 9.0f}, {0.125f, 0.5f}, {1.125f, 0.5f}};
  const int n = 6;
  float2* at;
  float* out;
  CUDA_CHECK(cudaMallocManaged(&at, n * sizeof(float2)));
  CUDA_CHECK(cudaMallocManaged(&out, n * sizeof(float)));
  std::copy(points, points + n, at);
  for (int linear = 0; linear < 2; ++linear) {
    cudaTextureDesc desc{};
    desc.addressMode[0] = desc.addressMode[1] = linear ? cudaAddressModeWrap : cudaAddressModeClamp;
    desc.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
    desc.readMode = cudaReadModeElementType;
    desc.normalizedCoords = linear;
    cudaTextureObject_t tex;
    CUDA_CHECK(cudaCreateTextureObject(&tex, &resource, &desc, nullptr));
    sample_2d<<<1, 32>>>(tex, at, out, n);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!linear) {  // texel floor(x), floor(y), clamped
      EXPECT_EQ(out[0], 11.0f);
      EXPECT_EQ(out[1], 1.0f);
      EXPECT_EQ(out[2], 20.0f);
      EXPECT_EQ(out[3], 23.0f);
    } else {  // normalised: 0.125 of 4 texels is x = 0.5, the centre of texel 0; wrap repeats
      EXPECT_NEAR(out[4], 10.0f * 1.0f + 0.0f, 1e-5);  // (0.5, 1.5): texel (0, 1)
      EXPECT_NEAR(out[5], out[4], 1e-5);               // 1.125 wraps to 0.125
      EXPECT_NEAR(out[0], 11.5f, 1e-5);  // (1.5, 1.5) wraps to (0.5, 0.5): x = 2.0, y = 1.5
    }
    CUDA_CHECK(cudaDestroyTextureObject(tex));
  }
  cudaFreeArray(array), cudaFree(at), cudaFree(out);
}

__global__ void fetch_linear(cudaTextureObject_t tex, float4* out, int n) {
  const int i = threadIdx.x;
  if (i < n) out[i] = make_float4(tex1Dfetch<float>(tex, i), 0, 0, 0);
}

__global__ void normalized_bytes(cudaTextureObject_t tex, float4* out) {
  out[threadIdx.x] = tex2D<float4>(tex, threadIdx.x + 0.5f, 0.5f);
}

TEST(Surface, TextureOverLinearMemoryAndNormalisedBytes) {
  const int n = 16;
  float* data;
  float4* out;
  CUDA_CHECK(cudaMalloc(&data, n * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&out, n * sizeof(float4)));
  std::vector<float> h(n);
  std::iota(h.begin(), h.end(), 100.0f);
  CUDA_CHECK(cudaMemcpy(data, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeLinear;
  resource.res.linear.devPtr = data;
  resource.res.linear.desc = cudaCreateChannelDesc<float>();
  resource.res.linear.sizeInBytes = n * sizeof(float);
  cudaTextureDesc desc{};
  desc.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex;
  CUDA_CHECK(cudaCreateTextureObject(&tex, &resource, &desc, nullptr));
  fetch_linear<<<1, n>>>(tex, out, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) EXPECT_EQ(out[i].x, 100.0f + i);
  cudaDestroyTextureObject(tex);

  // uchar4 texels read as normalised floats: 255 -> 1.0, 51 -> 0.2.
  uchar4 pixels[2] = {{255, 51, 0, 255}, {0, 255, 51, 0}};
  cudaChannelFormatDesc format = cudaCreateChannelDesc<uchar4>();
  cudaArray_t array;
  CUDA_CHECK(cudaMallocArray(&array, &format, 2, 1));
  CUDA_CHECK(cudaMemcpy2DToArray(array, 0, 0, pixels, sizeof pixels, sizeof pixels, 1,
                                 cudaMemcpyHostToDevice));
  resource = {};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  desc.readMode = cudaReadModeNormalizedFloat;
  CUDA_CHECK(cudaCreateTextureObject(&tex, &resource, &desc, nullptr));
  normalized_bytes<<<1, 2>>>(tex, out);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(out[0].x, 1.0f);
  EXPECT_NEAR(out[0].y, 0.2f, 1e-6);
  EXPECT_EQ(out[1].z, out[0].y);
  cudaDestroyTextureObject(tex), cudaFreeArray(array), cudaFree(data), cudaFree(out);
}

__global__ void invert(cudaSurfaceObject_t surf, int w, int h) {
  const int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) {
    const float v = surf2Dread<float>(surf, x * sizeof(float), y);
    surf2Dwrite(-v, surf, x * sizeof(float), y);
  }
}

TEST(Surface, SurfaceReadAndWrite) {
  const int w = 5, h = 3;
  std::vector<float> h_in(w * h), back(w * h);
  std::iota(h_in.begin(), h_in.end(), 1.0f);
  cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  cudaArray_t array;
  CUDA_CHECK(cudaMallocArray(&array, &format, w, h, cudaArraySurfaceLoadStore));
  CUDA_CHECK(cudaMemcpy2DToArray(array, 0, 0, h_in.data(), w * sizeof(float), w * sizeof(float), h,
                                 cudaMemcpyHostToDevice));
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaSurfaceObject_t surf;
  CUDA_CHECK(cudaCreateSurfaceObject(&surf, &resource));
  invert<<<h, 32>>>(surf, w, h);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy2DFromArray(back.data(), w * sizeof(float), array, 0, 0, w * sizeof(float),
                                   h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < w * h; ++i) EXPECT_EQ(back[i], -h_in[i]) << i;
  cudaDestroySurfaceObject(surf), cudaFreeArray(array);
}

}  // namespace
