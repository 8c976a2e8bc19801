// What the runtime knows of a kernel as a function: its name, the dynamic shared memory it opted
// in to (cudaFuncSetAttribute), and how many of its blocks a multiprocessor holds.
#include <map>
#include <mutex>

#include "cudalab/emu/launch.h"
#include "device_limits.h"
#include "errors.h"
#include "launches.h"
#include "memory.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {
std::mutex mutex;
std::map<const void*, int> opted_in;  // kernel address -> bytes of dynamic shared memory
std::map<const void*, std::string> names;

// "reduce<float, 256>(float const*, ...)" or "ns::reduce<float>" -> "reduce".
std::string base_name(std::string s) {
  for (const std::string anonymous = "(anonymous namespace)::";;) {
    auto at = s.find(anonymous);
    if (at == std::string::npos) break;
    s.erase(at, anonymous.size());
  }
  s = s.substr(0, s.find_first_of("<("));
  if (auto colon = s.rfind("::"); colon != std::string::npos) s = s.substr(colon + 2);
  return s;
}
}  // namespace

const char* function_name(const void* address) {
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, added] = names.try_emplace(address);
  if (added) {
    it->second = symbol_name(address);
    if (it->second.empty()) it->second = "(a kernel launched by value)";
  }
  return it->second.c_str();
}

void set_max_dynamic_shared(const void* kernel, int bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  opted_in[kernel] = bytes;
}

int max_dynamic_shared(const void* kernel) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = opted_in.find(kernel);
  return it == opted_in.end() ? int(device_limits::kSharedPerBlock) : it->second;
}

size_t allowed_dynamic_shared(const char* kernel) {
  std::vector<const void*> kernels;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [address, bytes] : opted_in) kernels.push_back(address);
  }
  size_t allowed = device_limits::kSharedPerBlock;
  const std::string wanted = base_name(kernel);
  for (const void* address : kernels)
    if (base_name(function_name(address)) == wanted)
      allowed = std::max<size_t>(allowed, static_cast<size_t>(max_dynamic_shared(address)));
  return allowed;
}

// What limits a multiprocessor: its threads, blocks and shared memory (device_limits.h);
// registers are not known here.
int active_blocks_per_sm(int block_size, size_t dynamic_shared) {
  using namespace device_limits;
  const int warps = (block_size + kWarpSize - 1) / kWarpSize;
  int blocks =
      std::min<int>(kBlocksPerMultiprocessor, kThreadsPerMultiprocessor / kWarpSize / warps);
  if (dynamic_shared > 0)
    blocks = std::min<int>(blocks, static_cast<int>(kSharedPerMultiprocessor /
                                                    (dynamic_shared + kReservedSharedPerBlock)));
  return std::max(0, blocks);
}

namespace {
std::map<const void*, Launcher>& launchers() {
  static std::map<const void*, Launcher> all;
  return all;
}
}  // namespace

void register_kernel(const void* kernel, Launcher launcher) {
  std::lock_guard<std::mutex> lock(mutex);
  launchers()[kernel] = launcher;
}

cudaError_t launch_untyped(const char* call, const void* kernel, dim3 grid, dim3 block, void** args,
                           size_t shared_bytes, cudaStream_t stream, bool cooperative) {
  Launcher launcher = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = launchers().find(kernel); it != launchers().end()) launcher = it->second;
  }
  if (launcher == nullptr) {
    diagnose(std::string(call) +
             ": the emu backend does not know this kernel by its address (a template kernel "
             "given as a void*, or a function that is not a kernel): it needs the kernel's type "
             "to read its arguments. Pass the kernel itself, not a void* to it.");
    return set_last_error(cudaErrorInvalidDeviceFunction);
  }
  launcher(kernel, grid, block, args, shared_bytes, stream, cooperative);
  return cudaPeekAtLastError();
}

}  // namespace cudalab::emu
