/* How a patched syscall site reaches the agent and leaves it.
 *
 * A site `mov $NR, %eax; syscall` is patched into `jmp STUB; syscall`
 * (the jump takes the mov's five bytes); the stub sets eax to NR and rcx
 * to the syscall instruction's address and jumps here. The agent runs on
 * its own stack: the program's stack, red zone and all, is not touched,
 * so memory below the program's stack pointer keeps what the recorded
 * run left there. Every register but rax, rcx and r11 is kept; those
 * three end as the kernel leaves them: the result, the address after
 * the syscall instruction, and the flags. A call the agent does not
 * answer goes on at the site's syscall instruction itself, eax = NR, as
 * if the program had never left it. */
#include "agent_ring.h"

    .section .text.entry, "ax"
    .globl rw_agent_exit
rw_agent_exit:
    jmp *%rcx
    .org RW_AGENT_ENTRY, 0xcc
    .globl rw_agent_entry
rw_agent_entry:
    mov %rsp, rw_agent_saved_rsp(%rip)
    lea rw_agent_stack_top(%rip), %rsp
    pushfq
    push %rdi
    push %rsi
    push %rdx
    push %r10
    push %r8
    push %r9
    push %rax
    push %rcx
    mov %rsp, %rdi
    sub $8, %rsp
    cld
    call rw_agent_serve
    add $8, %rsp
    pop %rcx
    pop %rax
    pop %r9
    pop %r8
    pop %r10
    pop %rdx
    pop %rsi
    pop %rdi
    mov (%rsp), %r11
    popfq
    mov rw_agent_saved_rsp(%rip), %rsp
    jmp rw_agent_exit

    .section .note.GNU-stack, "", @progbits
