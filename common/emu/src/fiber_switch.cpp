// return_to(), the fibers' switch that ends with a return (fiber_switch.h says when and why).
//
// x86-64 System V, in the layout of Boost's make_fcontext and jump_fcontext: from the stack
// pointer of a suspended context up lie its MXCSR and x87 control word (8 bytes), r12, r13, r14,
// r15, rbx, rbp, and the address it goes on at. The switch saves those of the running context,
// moves to the resumed context's stack, restores its registers and returns into it with
// {the suspended context, data} in rax and rdx (a new context's trampoline reads rdi and rdx).
// Boost's jump_fcontext makes the same steps but ends with `jmp *%r8` where this one returns.
#include "fiber_switch.h"

#if defined(__x86_64__) && !defined(_WIN32)

asm(R"(
  .text
  .globl cudalab_fiber_return_to
  .type cudalab_fiber_return_to, @function
  .align 16
cudalab_fiber_return_to:
  leaq    -0x38(%rsp), %rsp
  stmxcsr (%rsp)
  fnstcw  0x4(%rsp)
  movq    %r12, 0x8(%rsp)
  movq    %r13, 0x10(%rsp)
  movq    %r14, 0x18(%rsp)
  movq    %r15, 0x20(%rsp)
  movq    %rbx, 0x28(%rsp)
  movq    %rbp, 0x30(%rsp)
  movq    %rsp, %rax
  movq    %rdi, %rsp
  ldmxcsr (%rsp)
  fldcw   0x4(%rsp)
  movq    0x8(%rsp), %r12
  movq    0x10(%rsp), %r13
  movq    0x18(%rsp), %r14
  movq    0x20(%rsp), %r15
  movq    0x28(%rsp), %rbx
  movq    0x30(%rsp), %rbp
  leaq    0x38(%rsp), %rsp
  movq    %rsi, %rdx
  movq    %rax, %rdi
  ret
  .size cudalab_fiber_return_to, .-cudalab_fiber_return_to
)");

#endif
