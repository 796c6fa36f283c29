//go:build !purego

#include "textflag.h"

// frameNext (see frame_amd64.go) looks for the newline 64 bytes at a time
// with AVX2 (16 with SSE2), reading past the end of b into its capacity
// instead of handling a tail: the caller guarantees frameSlack (64) bytes
// there, so the loads stay inside b's array, and a newline found at or past
// the end is no newline. The bytes after the newline then tell whether a
// '|' is among the first 24 of them. X15, which Go code keeps zero, is not
// used.

DATA frameNewline<>+0(SB)/8, $0x0a0a0a0a0a0a0a0a // '\n'
DATA frameNewline<>+8(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA frameNewline<>+16(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA frameNewline<>+24(SB)/8, $0x0a0a0a0a0a0a0a0a
GLOBL frameNewline<>(SB), RODATA|NOPTR, $32
DATA frameBar<>+0(SB)/8, $0x7c7c7c7c7c7c7c7c // '|'
DATA frameBar<>+8(SB)/8, $0x7c7c7c7c7c7c7c7c
DATA frameBar<>+16(SB)/8, $0x7c7c7c7c7c7c7c7c
DATA frameBar<>+24(SB)/8, $0x7c7c7c7c7c7c7c7c
GLOBL frameBar<>(SB), RODATA|NOPTR, $32

// func frameNext(b []byte, i int) (k int, bar bool)
TEXT ·frameNext(SB), NOSPLIT, $0-41
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), R9
	MOVQ i+24(FP), DI
	ADDQ SI, R9 // the end of b
	ADDQ SI, DI // the next bytes to look at
	CMPB ·haveAVX2(SB), $0
	JEQ sse2
	VMOVDQU frameNewline<>(SB), Y1
avx2loop:
	CMPQ DI, R9
	JAE avx2none
	VPCMPEQB (DI), Y1, Y2
	VPCMPEQB 32(DI), Y1, Y3
	VPOR Y2, Y3, Y4
	VPTEST Y4, Y4
	JNZ avx2found
	ADDQ $64, DI
	JMP avx2loop
avx2found:
	VPMOVMSKB Y2, AX
	VPMOVMSKB Y3, BX
	SHLQ $32, BX
	ORQ BX, AX
	BSFQ AX, AX
	ADDQ AX, DI // the newline
	CMPQ DI, R9
	JAE avx2none
	VMOVDQU 1(DI), Y0
	VPCMPEQB frameBar<>(SB), Y0, Y2
	VPMOVMSKB Y2, AX
	VZEROUPPER
	JMP done
avx2none:
	VZEROUPPER
	JMP none

sse2:
	MOVOU frameNewline<>(SB), X1
sse2loop:
	CMPQ DI, R9
	JAE none
	MOVOU (DI), X2
	PCMPEQB X1, X2
	PMOVMSKB X2, AX
	TESTL AX, AX
	JNZ sse2found
	ADDQ $16, DI
	JMP sse2loop
sse2found:
	BSFL AX, AX
	ADDQ AX, DI
	CMPQ DI, R9
	JAE none
	MOVOU frameBar<>(SB), X1
	MOVOU 1(DI), X2
	MOVOU 17(DI), X3
	PCMPEQB X1, X2
	PCMPEQB X1, X3
	PMOVMSKB X2, AX
	PMOVMSKB X3, BX
	SHLL $16, BX
	ORL BX, AX

done:
	// AX: the '|' bytes among the 32 after the newline at DI
	ANDL $0xffffff, AX
	SETNE bar+40(FP)
	SUBQ SI, DI
	SUBQ i+24(FP), DI
	MOVQ DI, k+32(FP)
	RET
none:
	MOVQ $-1, k+32(FP)
	MOVB $0, bar+40(FP)
	RET
