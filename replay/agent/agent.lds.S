/* The agent as one flat, position-independent piece of code from offset
 * 0, its data where agent_ring.h puts it (run through the C preprocessor). */
#include "agent_ring.h"

ENTRY(rw_agent_entry)
SECTIONS
{
    . = 0;
    .text : {
        *(.text.entry)
        *(.text .text.*)
        *(.rodata .rodata.*)
    }
    ASSERT(SIZEOF(.text) <= RW_AGENT_CODE_MAX, "the syscall agent's code must fit its page")
    rw_agent_saved_rsp = RW_AGENT_DATA;
    rw_agent_stack_top = RW_AGENT_STACK_TOP;
    rw_agent_ring = RW_AGENT_RING;
    /DISCARD/ : { *(.comment) *(.note*) *(.eh_frame*) *(.data*) *(.bss*) }
}
