// Internal header: the context switch of the emu backend's fibers (scheduler.cpp).
//
// A fiber's context is Boost.Context's fcontext: make() lays out a new stack, and a switch saves
// the callee-saved registers and the floating-point control words on the stack it leaves and
// restores them from the one it resumes. There are two switches, alike but for their last step:
//   - jump(): Boost's jump_fcontext, which goes on in the resumed context with an indirect jump.
//     For any two contexts.
//   - return_to(): ours (fiber_switch.cpp, x86-64), which goes on with a return instead. For two
//     contexts suspended by the same call, such as two GPU threads at a __syncthreads(): the
//     return lands where the processor's return predictor expects it (the same call site), and
//     the returns after it land where expected too. After Boost's indirect jump the predictor is
//     one entry off, and every return that follows the switch mispredicts.
// Measured on the course's CI machine (docs/benchmarks.md, eleventh session): a barrier cost 17.3
// ns per thread with jump() alone, 10.8 with return_to(); where the two contexts were suspended
// at different calls (a thread that finished and one at a barrier), return_to() was the slower,
// as a return there is mispredicted by design. Elsewhere than x86-64, return_to() is jump().
#pragma once

#include <boost/context/detail/fcontext.hpp>

namespace cudalab::emu::fiber_switch {

using Context = boost::context::detail::fcontext_t;
using Transfer = boost::context::detail::transfer_t;  // {the context that switched, its data}

// A context that runs `entry` on the stack below `stack_top` when first resumed.
inline Context make(void* stack_top, size_t stack_bytes, void (*entry)(Transfer)) {
  return boost::context::detail::make_fcontext(stack_top, stack_bytes, entry);
}

// Each suspends the running context and resumes `to` with `data`; it returns, when some context
// resumes this one, what that context sent.
inline Transfer jump(Context to, void* data) {
  return boost::context::detail::jump_fcontext(to, data);
}
#if defined(__x86_64__) && !defined(_WIN32)
extern "C" Transfer cudalab_fiber_return_to(Context to, void* data);  // fiber_switch.cpp
inline Transfer return_to(Context to, void* data) { return cudalab_fiber_return_to(to, data); }
#else
inline Transfer return_to(Context to, void* data) { return jump(to, data); }
#endif

}  // namespace cudalab::emu::fiber_switch
