// Streams, events and graphs of the emu runtime.
//
// Kernels and copies run when they are issued, so every stream's work is done when the call
// returns: a stream is a handle with flags, an event a time stamp, a callback runs at once. Stream
// capture is the one place where work waits: while a stream is captured, what it is given is
// recorded into a graph (a list of closures that own copies of their arguments), and launching
// the graph's instance replays the list. A stream that waits for an event recorded in a captured
// stream joins that capture, as CUDA's fork-and-join capture does.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cudalab/emu/launch.h"
#include "cudalab/emu/runtime.h"
#include "cudalab/emu/textures.h"
#include "errors.h"
#include "launches.h"
#include "memory.h"
#include "replay.h"
#include "symbolize.h"

using namespace cudalab::emu;

namespace {
struct Work {
  void (*run)(void*);
  void* context;
  void (*release)(void*);
  Work(void (*r)(void*), void* c, void (*d)(void*)) : run(r), context(c), release(d) {}
  Work(const Work&) = delete;
  ~Work() { release(context); }
  friend void swap(Work& a, Work& b) {
    std::swap(a.run, b.run);
    std::swap(a.context, b.context);
    std::swap(a.release, b.release);
  }
};
using WorkList = std::vector<std::unique_ptr<Work>>;
}  // namespace

namespace {
// A conditional node's handle: the value kernels set, and what a launch of the graph starts with.
struct Condition {
  std::atomic<unsigned> value{0};
  unsigned launch_value = 0;
  bool assign_at_launch = false;  // cudaGraphCondAssignDefault
};
using Conditions = std::vector<std::shared_ptr<Condition>>;
}  // namespace

struct CUgraph_st {
  std::shared_ptr<WorkList> work = std::make_shared<WorkList>();
  std::shared_ptr<Conditions> conditions = std::make_shared<Conditions>();
};
struct CUgraphExec_st {
  std::shared_ptr<WorkList> work;
  std::shared_ptr<Conditions> conditions;
};
struct CUstream_st {
  unsigned flags = cudaStreamDefault;
  int priority = 0;
  CUgraph_st* capture = nullptr;            // the graph this stream records into, while captured
  bool capture_origin = false;              // cudaStreamBeginCapture was called on this stream
  cudaGraphNode_t last_captured = nullptr;  // for cudaStreamGetCaptureInfo
};
struct CUevent_st {
  std::chrono::steady_clock::time_point time;
  unsigned flags = cudaEventDefault;
  bool recorded = false;
  CUgraph_st* capture = nullptr;  // recorded in a captured stream
};

namespace {
CUstream_st legacy_stream;  // stream 0, cudaStreamLegacy and cudaStreamPerThread

CUstream_st* resolve(cudaStream_t s) {
  if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread ||
      s == cudaStreamTailLaunch || s == cudaStreamFireAndForget)
    return &legacy_stream;
  return s;
}
}  // namespace

namespace cudalab::emu {
bool capturing(cudaStream_t stream) { return resolve(stream)->capture != nullptr; }

namespace {
std::mutex child_mutex;
std::deque<std::unique_ptr<Work>> children;  // grids launched by kernels, to run in order
}  // namespace

void enqueue(cudaStream_t stream, void (*work)(void*), void* context, void (*release)(void*)) {
  if (in_kernel()) {
    if (current_block->replay != nullptr) current_block->replay->give_up();  // (not launched twice)
    std::lock_guard<std::mutex> lock(child_mutex);
    children.push_back(std::make_unique<Work>(work, context, release));
    return;
  }
  if (CUgraph_st* graph = resolve(stream)->capture) {
    graph->work->push_back(std::make_unique<Work>(work, context, release));
    return;
  }
  work(context);
  release(context);
}
void run_child_grids() {
  static thread_local bool running = false;
  if (running) return;  // the outermost launch runs them all, children's children included
  running = true;
  for (;;) {
    std::unique_ptr<Work> next;
    {
      std::lock_guard<std::mutex> lock(child_mutex);
      if (children.empty()) break;
      next = std::move(children.front());
      children.pop_front();
    }
    next->run(next->context);
  }
  running = false;
}
}  // namespace cudalab::emu

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithPriority(stream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  return cudaStreamCreateWithPriority(stream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int priority) {
  if (stream == nullptr || flags > cudaStreamNonBlocking)
    return set_last_error(cudaErrorInvalidValue);
  *stream = new CUstream_st{flags, std::clamp(priority, -5, 0)};
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr || resolve(stream) == &legacy_stream)
    return set_last_error(cudaErrorInvalidResourceHandle);
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (capturing(stream)) return set_last_error(cudaErrorStreamCaptureUnsupported);
  return set_last_error(cudaSuccess);
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (capturing(stream)) return set_last_error(cudaErrorStreamCaptureUnsupported);
  return set_last_error(cudaSuccess);
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned* flags) {
  if (flags == nullptr) return set_last_error(cudaErrorInvalidValue);
  *flags = resolve(stream)->flags;
  return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  if (priority == nullptr) return set_last_error(cudaErrorInvalidValue);
  *priority = resolve(stream)->priority;
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned) {
  if (event == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  CUstream_st* s = resolve(stream);
  if (event->capture != nullptr && s->capture == nullptr) s->capture = event->capture;  // joins
  return set_last_error(cudaSuccess);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void* userData, unsigned flags) {
  if (callback == nullptr || flags != 0) return set_last_error(cudaErrorInvalidValue);
  enqueue(stream, [=] { callback(stream, sticky_error(), userData); });
  return set_last_error(cudaSuccess);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  if (fn == nullptr) return set_last_error(cudaErrorInvalidValue);
  enqueue(stream, [=] { fn(userData); });
  return set_last_error(cudaSuccess);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr || flags > 0xF) return set_last_error(cudaErrorInvalidValue);
  *event = new CUevent_st;
  (*event)->flags = flags;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

// Kernels have finished when their launch returns, so an event is the CPU's wall clock.
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (event == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  event->capture = resolve(stream)->capture;
  if (event->capture != nullptr) return set_last_error(cudaSuccess);
  event->time = std::chrono::steady_clock::now();
  event->recorded = true;
  return set_last_error(cudaSuccess);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (event == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  return set_last_error(cudaSuccess);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (event == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  return set_last_error(cudaSuccess);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (start == nullptr || end == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  if ((start->flags | end->flags) & cudaEventDisableTiming)
    return set_last_error(cudaErrorInvalidResourceHandle);
  if (!start->recorded || !end->recorded) return set_last_error(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return cudaSuccess;
}

// ---- capture and graphs --------------------------------------------------------------------

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  CUstream_st* s = resolve(stream);
  if (s == &legacy_stream) return set_last_error(cudaErrorStreamCaptureUnsupported);
  if (s->capture != nullptr) return set_last_error(cudaErrorIllegalState);
  s->capture = new CUgraph_st;
  s->capture_origin = true;
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                          const cudaGraphNode_t*, const cudaGraphEdgeData*, size_t,
                                          cudaStreamCaptureMode) {
  CUstream_st* s = resolve(stream);
  if (graph == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (s == &legacy_stream) return set_last_error(cudaErrorStreamCaptureUnsupported);
  if (s->capture != nullptr) return set_last_error(cudaErrorIllegalState);
  s->capture = graph;
  s->capture_origin = true;
  return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                     unsigned long long* id, cudaGraph_t* graph,
                                     const cudaGraphNode_t** dependencies,
                                     const cudaGraphEdgeData** edges, size_t* count) {
  if (status == nullptr) return set_last_error(cudaErrorInvalidValue);
  CUstream_st* s = resolve(stream);
  *status = s->capture != nullptr ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  if (s->capture == nullptr) return cudaSuccess;
  const WorkList& work = *s->capture->work;
  s->last_captured = work.empty() ? nullptr : reinterpret_cast<cudaGraphNode_t>(work.back().get());
  if (id != nullptr) *id = reinterpret_cast<uintptr_t>(s->capture);
  if (graph != nullptr) *graph = s->capture;
  if (dependencies != nullptr) *dependencies = &s->last_captured;
  if (edges != nullptr) *edges = nullptr;
  if (count != nullptr) *count = work.empty() ? 0 : 1;
  return cudaSuccess;
}

// The emu's captured graphs are chains: the next node depends on the last one, whatever is set.
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t*,
                                                const cudaGraphEdgeData*, size_t, unsigned flags) {
  if (flags > cudaStreamSetCaptureDependencies) return set_last_error(cudaErrorInvalidValue);
  return capturing(stream) ? cudaSuccess : set_last_error(cudaErrorIllegalState);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  CUstream_st* s = resolve(stream);
  if (s->capture == nullptr || !s->capture_origin) return set_last_error(cudaErrorIllegalState);
  if (graph != nullptr) *graph = s->capture;  // none for a capture into a graph that exists
  s->capture = nullptr;
  s->capture_origin = false;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return set_last_error(cudaErrorInvalidValue);
  *status = capturing(stream) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned flags) {
  if (graph == nullptr || flags != 0) return set_last_error(cudaErrorInvalidValue);
  *graph = new CUgraph_st;
  return cudaSuccess;
}

// A captured graph is a chain: its nodes are its recorded operations, in order.
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  if (graph == nullptr || count == nullptr) return set_last_error(cudaErrorInvalidValue);
  const size_t n = graph->work->size();
  if (nodes != nullptr)
    for (size_t i = 0; i < std::min(n, *count); ++i)
      nodes[i] = reinterpret_cast<cudaGraphNode_t>(graph->work->at(i).get());
  else
    *count = n;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (exec == nullptr || graph == nullptr) return set_last_error(cudaErrorInvalidValue);
  *exec = new CUgraphExec_st{graph->work, graph->conditions};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (exec == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  if (capturing(stream)) return set_last_error(cudaErrorStreamCaptureUnsupported);
  for (const auto& c : *exec->conditions)
    if (c->assign_at_launch) c->value = c->launch_value;
  for (const auto& w : *exec->work) w->run(w->context);
  return set_last_error(cudaSuccess);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (exec == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  delete exec;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                          unsigned long long flags) {
  return cudaGraphInstantiate(exec, graph, flags);
}

cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t) {
  return exec == nullptr ? set_last_error(cudaErrorInvalidResourceHandle) : cudaSuccess;
}

// A clone shares the recorded work: nodes are never changed after they are added, except through
// an instance (cudaGraphExecKernelNodeSetParams), which changes the graphs that share them too.
cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original) {
  if (clone == nullptr || original == nullptr) return set_last_error(cudaErrorInvalidValue);
  *clone = new CUgraph_st{original->work, original->conditions};
  return cudaSuccess;
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                cudaGraphExecUpdateResultInfo* result) {
  if (exec == nullptr || graph == nullptr) return set_last_error(cudaErrorInvalidValue);
  exec->work = graph->work;
  exec->conditions = graph->conditions;
  if (result != nullptr) *result = {cudaGraphExecUpdateSuccess, nullptr, nullptr};
  return cudaSuccess;
}

namespace {
// A node is added by doing its operation on a stream that records into the graph.
template <class Op>
cudaError_t add_node(cudaGraphNode_t* node, cudaGraph_t graph, Op op) {
  if (graph == nullptr) return set_last_error(cudaErrorInvalidValue);
  CUstream_st recorder;
  recorder.capture = graph;
  const size_t before = graph->work->size();
  if (cudaError_t e = op(&recorder)) return e;
  if (graph->work->size() == before)  // an empty node: something to point at
    graph->work->push_back(std::make_unique<Work>([](void*) {}, nullptr, [](void*) {}));
  if (node != nullptr) *node = reinterpret_cast<cudaGraphNode_t>(graph->work->back().get());
  return cudaSuccess;
}
}  // namespace

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t*,
                                   size_t, const cudaKernelNodeParams* p) {
  if (p == nullptr) return set_last_error(cudaErrorInvalidValue);
  return add_node(node, graph, [&](cudaStream_t s) {
    return launch_untyped("cudaGraphAddKernelNode", p->func, p->gridDim, p->blockDim,
                          p->kernelParams, p->sharedMemBytes, s, false);
  });
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t*,
                                   size_t, const cudaMemcpy3DParms* p) {
  if (p == nullptr) return set_last_error(cudaErrorInvalidValue);
  return add_node(node, graph, [&](cudaStream_t s) {
    enqueue(s, [copy = *p] { cudaMemcpy3D(&copy); });
    return cudaSuccess;
  });
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph,
                                     const cudaGraphNode_t*, size_t, void* dst, const void* src,
                                     size_t bytes, cudaMemcpyKind kind) {
  return add_node(node, graph,
                  [&](cudaStream_t s) { return cudaMemcpyAsync(dst, src, bytes, kind, s); });
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t*,
                                   size_t, const cudaMemsetParams* p) {
  if (p == nullptr || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
    return set_last_error(cudaErrorInvalidValue);
  return add_node(node, graph, [&](cudaStream_t s) {
    std::vector<char> row(p->width * p->elementSize);  // one row of elements of 1, 2 or 4 bytes
    for (size_t i = 0; i < p->width; ++i)
      std::memcpy(row.data() + i * p->elementSize, &p->value, p->elementSize);
    enqueue(s, [m = *p, row = std::move(row)] {
      for (size_t r = 0; r < std::max<size_t>(m.height, 1); ++r)
        cudaMemcpy(static_cast<char*>(m.dst) + r * m.pitch, row.data(), row.size(),
                   cudaMemcpyHostToDevice);
    });
    return cudaSuccess;
  });
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t*,
                                 size_t, const cudaHostNodeParams* p) {
  if (p == nullptr) return set_last_error(cudaErrorInvalidValue);
  return add_node(node, graph,
                  [&](cudaStream_t s) { return cudaLaunchHostFunc(s, p->fn, p->userData); });
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t*,
                                  size_t) {
  return add_node(node, graph, [](cudaStream_t) { return cudaSuccess; });
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                     const cudaGraphNode_t*, size_t, cudaMemAllocNodeParams* p,
                                     cudalab_source_location where) {
  if (p == nullptr || p->bytesize == 0 || p->poolProps.allocType != cudaMemAllocationTypePinned)
    return set_last_error(cudaErrorInvalidValue);
  return add_node(node, graph, [&](cudaStream_t s) {
    return cudalab::emu::graph_allocate(&p->dptr, p->bytesize, s, where);
  });
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                    const cudaGraphNode_t*, size_t, void* dptr,
                                    cudalab_source_location where) {
  if (dptr == nullptr) return set_last_error(cudaErrorInvalidValue);
  return add_node(node, graph,
                  [&](cudaStream_t s) { return cudalab::emu::graph_free(dptr, s, where); });
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                       const cudaGraphNode_t*, size_t, cudaGraph_t child) {
  if (child == nullptr) return set_last_error(cudaErrorInvalidValue);
  return add_node(node, graph, [&](cudaStream_t s) {
    enqueue(s, [work = child->work] {
      for (const auto& w : *work) w->run(w->context);
    });
    return cudaSuccess;
  });
}

// Later dependencies must not reorder nodes: a node may only come to depend on an earlier one.
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                     const cudaGraphNode_t* to, size_t count) {
  if (graph == nullptr) return set_last_error(cudaErrorInvalidValue);
  auto at = [&](cudaGraphNode_t n) {
    for (size_t i = 0; i < graph->work->size(); ++i)
      if (reinterpret_cast<cudaGraphNode_t>((*graph->work)[i].get()) == n) return i;
    return graph->work->size();
  };
  for (size_t i = 0; i < count; ++i)
    if (at(from[i]) >= at(to[i])) {
      diagnose(
          "cudaGraphAddDependencies: a dependency on a node added later is not supported by "
          "the emu backend (its nodes run in the order they were added)");
      return set_last_error(cudaErrorNotSupported);
    }
  return cudaSuccess;
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams* p) {
  if (exec == nullptr || p == nullptr) return set_last_error(cudaErrorInvalidValue);
  for (auto& w : *exec->work) {
    if (reinterpret_cast<cudaGraphNode_t>(w.get()) != node) continue;
    CUgraph_st scratch;
    if (cudaError_t e = cudaGraphAddKernelNode(nullptr, &scratch, nullptr, 0, p)) return e;
    swap(*w, *scratch.work->back());  // the node keeps its handle, with the new launch
    return cudaSuccess;
  }
  return set_last_error(cudaErrorInvalidValue);
}

// ---- conditional nodes ---------------------------------------------------------------------

cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* handle, cudaGraph_t graph,
                                             unsigned defaultLaunchValue, unsigned flags) {
  if (handle == nullptr || graph == nullptr || flags > cudaGraphCondAssignDefault)
    return set_last_error(cudaErrorInvalidValue);
  auto c = std::make_shared<Condition>();
  c->value = c->launch_value = defaultLaunchValue;
  c->assign_at_launch = flags & cudaGraphCondAssignDefault;
  graph->conditions->push_back(c);
  *handle = reinterpret_cast<uintptr_t>(c.get());
  return cudaSuccess;
}

void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned value) {
  reinterpret_cast<Condition*>(static_cast<uintptr_t>(handle))->value = value;
}

namespace {
// A conditional node: its handle, its kind and the body graphs it made (phGraph_out).
struct ConditionalNode {
  Condition* condition;
  cudaGraphConditionalNodeType type;
  std::vector<std::unique_ptr<CUgraph_st>> bodies;
  std::vector<cudaGraph_t> body_handles;

  void run_body(unsigned i) const {
    for (const auto& w : *bodies[i]->work) w->run(w->context);
  }
  void run() const {
    switch (type) {
      case cudaGraphCondTypeIf:  // a second body is the else branch
        if (condition->value != 0)
          run_body(0);
        else if (bodies.size() == 2)
          run_body(1);
        return;
      case cudaGraphCondTypeWhile:
        while (condition->value != 0) run_body(0);
        return;
      case cudaGraphCondTypeSwitch:
        if (const unsigned i = condition->value; i < bodies.size()) run_body(i);
        return;
    }
  }
};

cudaError_t add_conditional_node(cudaGraphNode_t* node, cudaGraph_t graph,
                                 cudaConditionalNodeParams& p) {
  const bool sized = p.type == cudaGraphCondTypeSwitch ? p.size >= 1
                     : p.type == cudaGraphCondTypeIf   ? p.size == 1 || p.size == 2
                                                       : p.size == 1;
  if (p.handle == 0 || p.type > cudaGraphCondTypeSwitch || !sized)
    return set_last_error(cudaErrorInvalidValue);
  auto* n = new ConditionalNode{
      reinterpret_cast<Condition*>(static_cast<uintptr_t>(p.handle)), p.type, {}, {}};
  for (unsigned i = 0; i < p.size; ++i) {
    n->bodies.push_back(std::make_unique<CUgraph_st>());
    n->body_handles.push_back(n->bodies.back().get());
  }
  p.phGraph_out = n->body_handles.data();
  return add_node(node, graph, [&](cudaStream_t s) {
    enqueue(
        s, [](void* c) { static_cast<ConditionalNode*>(c)->run(); }, n,
        [](void* c) { delete static_cast<ConditionalNode*>(c); });
    return cudaSuccess;
  });
}
}  // namespace

cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t graph,
                             const cudaGraphNode_t* dependencies, const cudaGraphEdgeData*,
                             size_t count, cudaGraphNodeParams* p) {
  if (p == nullptr || graph == nullptr) return set_last_error(cudaErrorInvalidValue);
  switch (p->type) {
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParams k{p->kernel.func,         p->kernel.gridDim,
                                   p->kernel.blockDim,     p->kernel.sharedMemBytes,
                                   p->kernel.kernelParams, p->kernel.extra};
      return cudaGraphAddKernelNode(node, graph, dependencies, count, &k);
    }
    case cudaGraphNodeTypeMemset: {
      const cudaMemsetParams m{p->memset.dst,         p->memset.pitch, p->memset.value,
                               p->memset.elementSize, p->memset.width, p->memset.height};
      return cudaGraphAddMemsetNode(node, graph, dependencies, count, &m);
    }
    case cudaGraphNodeTypeHost: {
      const cudaHostNodeParams h{p->host.fn, p->host.userData};
      return cudaGraphAddHostNode(node, graph, dependencies, count, &h);
    }
    case cudaGraphNodeTypeGraph:
      return cudaGraphAddChildGraphNode(node, graph, dependencies, count, p->graph.graph);
    case cudaGraphNodeTypeEmpty:
      return cudaGraphAddEmptyNode(node, graph, dependencies, count);
    case cudaGraphNodeTypeConditional:
      return add_conditional_node(node, graph, p->conditional);
    default:
      diagnose("cudaGraphAddNode: nodes of type " + std::to_string(p->type) +
               " are added on the emu backend through the call of their type "
               "(cudaGraphAddMemcpyNode, cudaGraphAddMemAllocNode...)");
      return set_last_error(cudaErrorNotSupported);
  }
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (graph == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  delete graph;
  return cudaSuccess;
}

// ---- stream attributes: kept and given back; the CPU's caches do as they do -----------------
namespace {
cudaStreamAttrValue& attribute_of(cudaStream_t stream, cudaStreamAttrID attr) {
  static std::map<std::pair<CUstream_st*, int>, cudaStreamAttrValue> values;
  return values[{resolve(stream), static_cast<int>(attr)}];
}
}  // namespace

cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                   const cudaStreamAttrValue* value) {
  if (value == nullptr) return set_last_error(cudaErrorInvalidValue);
  attribute_of(stream, attr) = *value;
  return cudaSuccess;
}

cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                   cudaStreamAttrValue* value) {
  if (value == nullptr) return set_last_error(cudaErrorInvalidValue);
  *value = attribute_of(stream, attr);
  return cudaSuccess;
}

cudaError_t cudaCtxResetPersistingL2Cache() { return cudaSuccess; }
