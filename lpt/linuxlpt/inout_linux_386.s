#include "textflag.h"

// func inb(port uint16) uint8
TEXT ·inb(SB), NOSPLIT, $0-5
	MOVW port+0(FP), DX
	INB
	MOVB AX, ret+4(FP)
	RET

// func outb(port uint16, v uint8)
TEXT ·outb(SB), NOSPLIT, $0-3
	MOVW port+0(FP), DX
	MOVB v+2(FP), AX
	OUTB
	RET
