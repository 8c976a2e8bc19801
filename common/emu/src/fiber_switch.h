// Internal header: the context switch of the emu backend's fibers (scheduler.cpp).
//
// A fiber's context is in the layout of Boost.Context's fcontext: make() (Boost's make_fcontext)
// lays out a new stack, and a switch saves the callee-saved registers on the stack it leaves and
// restores them from the one it resumes. There are two switches, alike but for their last step:
//   - jump() goes on in the resumed context with an indirect jump, as Boost's jump_fcontext does.
//     For any two contexts.
//   - return_to() goes on with a return instead. For two contexts suspended by the same call, such
//     as two GPU threads at a __syncthreads(): the return lands where the processor's return
//     predictor expects it (the same call site), and the returns after it land where expected
//     too. After an indirect jump the predictor is one entry off, and every return that follows
//     the switch mispredicts; between contexts suspended at different calls (a thread that
//     finished and one at a barrier), a return mispredicts by design and the jump is the faster.
// Neither saves the floating-point control words (rounding mode, exception masks), which Boost's
// switch saves and restores: the fibers of a worker share them, as no GPU thread changes them
// across a switch (rounding.cpp sets a rounding mode for one operation and restores it).
// Measured on the course's CI machine (bench_foundation's checked block reduction), a barrier per
// thread: 17.3 ns with Boost's jump_fcontext alone, 10.5 with return_to() between threads at
// barriers, 9.6 without the control words. Both are x86-64 assembly (fiber_switch.cpp);
// elsewhere both are Boost's jump_fcontext.
#pragma once

#include <boost/context/detail/fcontext.hpp>

namespace cudalab::emu::fiber_switch {

using Context = boost::context::detail::fcontext_t;
using Transfer = boost::context::detail::transfer_t;  // {the context that switched, its data}

// A context that runs `entry` on the stack below `stack_top` when first resumed.
inline Context make(void* stack_top, size_t stack_bytes, void (*entry)(Transfer)) {
  return boost::context::detail::make_fcontext(stack_top, stack_bytes, entry);
}

// Each suspends the running context, saving it in *save, and resumes `to`; when some context
// resumes this one, it returns `result`. The switch saves the context before it leaves (x86-64), or
// the resumed context does (arrived(); Boost's jump_fcontext leaves that to the resumed side), so
// that the caller has nothing left to do after the switch: a call that ends with one (a
// __syncthreads(), a shuffle, whose result is known before its lanes meet) is a tail call, and the
// resumed thread returns from the switch straight into its kernel.
#if defined(__x86_64__) && !defined(_WIN32)
extern "C" const void* cudalab_fiber_jump(Context to, Context* save, const void* result);
extern "C" const void* cudalab_fiber_return_to(Context to, Context* save, const void* result);
inline const void* jump(Context to, Context* save, const void* result) {
  return cudalab_fiber_jump(to, save, result);
}
inline const void* return_to(Context to, Context* save, const void* result) {
  return cudalab_fiber_return_to(to, save, result);
}
// A new context's entry is given {the context that resumed it, where that one asked to be saved}.
inline void arrived(Transfer) {}  // the switch saved it
#else
inline void arrived(Transfer t) { *static_cast<Context*>(t.data) = t.fctx; }
inline const void* jump(Context to, Context* save, const void* result) {
  arrived(boost::context::detail::jump_fcontext(to, save));
  return result;
}
inline const void* return_to(Context to, Context* save, const void* result) {
  return jump(to, save, result);
}
#endif

}  // namespace cudalab::emu::fiber_switch
