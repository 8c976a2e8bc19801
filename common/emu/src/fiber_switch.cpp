// The fibers' two switches (fiber_switch.h says when each is taken and why).
//
// x86-64 System V, in the layout of Boost's make_fcontext: from the stack pointer of a suspended
// context up lie 8 bytes (Boost's place for the floating-point control words, which these switches
// leave alone: fiber_switch.h; here, what the switch returns when the context is resumed), r12,
// r13, r14, r15, rbx, rbp, and the address it goes on at. A switch (rdi: the context to resume,
// rsi: where to save the running one, rdx: what to return when it is resumed) saves the running
// context and its stack pointer, moves to the resumed context's stack, restores its registers and
// goes on there, returning the value that context left (a new context's entry, through Boost's
// trampoline, is given {the suspended context, where it was saved} in rdi and rsi). The two differ
// only in how they go on: a return, or an indirect jump as Boost's jump_fcontext does.
#include "fiber_switch.h"

#if defined(__x86_64__) && !defined(_WIN32)

#define CUDALAB_SAVE_AND_MOVE_STACK \
  "  leaq    -0x38(%rsp), %rsp\n"   \
  "  movq    %rdx, (%rsp)\n"        \
  "  movq    %r12, 0x8(%rsp)\n"     \
  "  movq    %r13, 0x10(%rsp)\n"    \
  "  movq    %r14, 0x18(%rsp)\n"    \
  "  movq    %r15, 0x20(%rsp)\n"    \
  "  movq    %rbx, 0x28(%rsp)\n"    \
  "  movq    %rbp, 0x30(%rsp)\n"    \
  "  movq    %rsp, (%rsi)\n"        \
  "  movq    %rsp, %rax\n"          \
  "  movq    %rdi, %rsp\n"          \
  "  movq    0x8(%rsp), %r12\n"     \
  "  movq    0x10(%rsp), %r13\n"    \
  "  movq    0x18(%rsp), %r14\n"    \
  "  movq    0x20(%rsp), %r15\n"    \
  "  movq    0x28(%rsp), %rbx\n"    \
  "  movq    0x30(%rsp), %rbp\n"    \
  "  movq    %rax, %rdi\n"          \
  "  movq    (%rsp), %rax\n"

asm("  .text\n"
    "  .globl cudalab_fiber_return_to\n"
    "  .type cudalab_fiber_return_to, @function\n"
    "  .align 16\n"
    "cudalab_fiber_return_to:\n" CUDALAB_SAVE_AND_MOVE_STACK
    "  leaq    0x38(%rsp), %rsp\n"
    "  ret\n"
    "  .size cudalab_fiber_return_to, .-cudalab_fiber_return_to\n"
    "  .globl cudalab_fiber_jump\n"
    "  .type cudalab_fiber_jump, @function\n"
    "  .align 16\n"
    "cudalab_fiber_jump:\n" CUDALAB_SAVE_AND_MOVE_STACK
    "  movq    0x38(%rsp), %r8\n"
    "  leaq    0x40(%rsp), %rsp\n"
    "  jmp     *%r8\n"
    "  .size cudalab_fiber_jump, .-cudalab_fiber_jump\n");

#endif
