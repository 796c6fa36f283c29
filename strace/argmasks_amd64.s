//go:build !purego

#include "textflag.h"

// argMasks (see argmasks_amd64.go) compares each byte of the window with the
// bytes below, 16 at a time with SSE2 or 32 at a time with AVX2, and moves
// the top bits of the comparison results into the masks (PMOVMSKB).
// '(' and ')' are found as the bytes whose x|0x01 is ')', '[' and '{' as
// those whose x|0x20 is '{', ']' and '}' as those whose x|0x20 is '}'.
//
// With SSE2, X5-X14 hold the constants and X1-X3 are scratch; the masks
// of a block collect in AX, BX, CX, DX, R8, R9 and are ORed into the
// windowMasks at DI. With AVX2, Y1 and Y0 hold the window, the constants
// are memory operands, and Y2-Y4 are scratch. X15, which Go code keeps
// zero, is not used.

DATA argQuote<>+0(SB)/8, $0x2222222222222222 // '"'
DATA argQuote<>+8(SB)/8, $0x2222222222222222
DATA argQuote<>+16(SB)/8, $0x2222222222222222
DATA argQuote<>+24(SB)/8, $0x2222222222222222
GLOBL argQuote<>(SB), RODATA|NOPTR, $32
DATA argBslash<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c // '\\'
DATA argBslash<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA argBslash<>+16(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA argBslash<>+24(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL argBslash<>(SB), RODATA|NOPTR, $32
DATA argSlash<>+0(SB)/8, $0x2f2f2f2f2f2f2f2f // '/'
DATA argSlash<>+8(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA argSlash<>+16(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA argSlash<>+24(SB)/8, $0x2f2f2f2f2f2f2f2f
GLOBL argSlash<>(SB), RODATA|NOPTR, $32
DATA argLess<>+0(SB)/8, $0x3c3c3c3c3c3c3c3c // '<'
DATA argLess<>+8(SB)/8, $0x3c3c3c3c3c3c3c3c
DATA argLess<>+16(SB)/8, $0x3c3c3c3c3c3c3c3c
DATA argLess<>+24(SB)/8, $0x3c3c3c3c3c3c3c3c
GLOBL argLess<>(SB), RODATA|NOPTR, $32
DATA argGreater<>+0(SB)/8, $0x3e3e3e3e3e3e3e3e // '>'
DATA argGreater<>+8(SB)/8, $0x3e3e3e3e3e3e3e3e
DATA argGreater<>+16(SB)/8, $0x3e3e3e3e3e3e3e3e
DATA argGreater<>+24(SB)/8, $0x3e3e3e3e3e3e3e3e
GLOBL argGreater<>(SB), RODATA|NOPTR, $32
DATA argBit0<>+0(SB)/8, $0x0101010101010101
DATA argBit0<>+8(SB)/8, $0x0101010101010101
DATA argBit0<>+16(SB)/8, $0x0101010101010101
DATA argBit0<>+24(SB)/8, $0x0101010101010101
GLOBL argBit0<>(SB), RODATA|NOPTR, $32
DATA argParen<>+0(SB)/8, $0x2929292929292929 // ')'
DATA argParen<>+8(SB)/8, $0x2929292929292929
DATA argParen<>+16(SB)/8, $0x2929292929292929
DATA argParen<>+24(SB)/8, $0x2929292929292929
GLOBL argParen<>(SB), RODATA|NOPTR, $32
DATA argBit5<>+0(SB)/8, $0x2020202020202020
DATA argBit5<>+8(SB)/8, $0x2020202020202020
DATA argBit5<>+16(SB)/8, $0x2020202020202020
DATA argBit5<>+24(SB)/8, $0x2020202020202020
GLOBL argBit5<>(SB), RODATA|NOPTR, $32
DATA argBrace<>+0(SB)/8, $0x7b7b7b7b7b7b7b7b // '{'
DATA argBrace<>+8(SB)/8, $0x7b7b7b7b7b7b7b7b
DATA argBrace<>+16(SB)/8, $0x7b7b7b7b7b7b7b7b
DATA argBrace<>+24(SB)/8, $0x7b7b7b7b7b7b7b7b
GLOBL argBrace<>(SB), RODATA|NOPTR, $32
DATA argClose<>+0(SB)/8, $0x7d7d7d7d7d7d7d7d // '}'
DATA argClose<>+8(SB)/8, $0x7d7d7d7d7d7d7d7d
DATA argClose<>+16(SB)/8, $0x7d7d7d7d7d7d7d7d
DATA argClose<>+24(SB)/8, $0x7d7d7d7d7d7d7d7d
GLOBL argClose<>(SB), RODATA|NOPTR, $32

// SSE2 constants: X6 '"', X7 '\\', X8 '/', X9 '<', X10 '>', X11 0x01,
// X12 ')', X13 0x20, X14 '{', X5 '}'.
#define BLOCK16(off) \
	MOVOU off(SI), X1 \
	MOVOU X1, X2 \
	PCMPEQB X6, X2 \
	PMOVMSKB X2, AX \
	MOVOU X1, X2 \
	PCMPEQB X7, X2 \
	PMOVMSKB X2, BX \
	MOVOU X1, X2 \
	PCMPEQB X8, X2 \
	PMOVMSKB X2, DX \
	MOVOU X1, X2 \
	PCMPEQB X9, X2 \
	PMOVMSKB X2, R8 \
	MOVOU X1, X2 \
	PCMPEQB X10, X2 \
	PMOVMSKB X2, R9 \
	MOVOU X1, X2 \
	POR X11, X2 \
	PCMPEQB X12, X2 \
	POR X13, X1 \
	MOVOU X1, X3 \
	PCMPEQB X14, X3 \
	POR X3, X2 \
	PCMPEQB X5, X1 \
	POR X1, X2 \
	PMOVMSKB X2, CX \
	SHLQ $off, AX \
	SHLQ $off, BX \
	SHLQ $off, CX \
	SHLQ $off, DX \
	SHLQ $off, R8 \
	SHLQ $off, R9 \
	ORQ AX, 0(DI) \
	ORQ BX, 8(DI) \
	ORQ CX, 16(DI) \
	ORQ DX, 24(DI) \
	ORQ R8, 32(DI) \
	ORQ R9, 40(DI)

// CLASS32 sets the quad word at off(DI) to the mask of the bytes of Y1
// (low half) and Y0 (high half) equal to the 32-byte constant c.
#define CLASS32(c, off) \
	VPCMPEQB c, Y1, Y2 \
	VPMOVMSKB Y2, AX \
	VPCMPEQB c, Y0, Y3 \
	VPMOVMSKB Y3, BX \
	SHLQ $32, BX \
	ORQ BX, AX \
	MOVQ AX, off(DI)

// BRK32 leaves in AX the mask of the brackets among the bytes of Y.
#define BRK32(Y) \
	VPOR argBit0<>(SB), Y, Y2 \
	VPCMPEQB argParen<>(SB), Y2, Y2 \
	VPOR argBit5<>(SB), Y, Y3 \
	VPCMPEQB argBrace<>(SB), Y3, Y4 \
	VPCMPEQB argClose<>(SB), Y3, Y3 \
	VPOR Y4, Y2, Y2 \
	VPOR Y3, Y2, Y2 \
	VPMOVMSKB Y2, AX

// func argMasks(w *[64]byte, m *windowMasks)
TEXT ·argMasks(SB), NOSPLIT, $0-16
	MOVQ w+0(FP), SI
	MOVQ m+8(FP), DI
	CMPB ·haveAVX2(SB), $0
	JNE avx2
	XORQ AX, AX
	MOVQ AX, 0(DI)
	MOVQ AX, 8(DI)
	MOVQ AX, 16(DI)
	MOVQ AX, 24(DI)
	MOVQ AX, 32(DI)
	MOVQ AX, 40(DI)
	MOVOU argQuote<>(SB), X6
	MOVOU argBslash<>(SB), X7
	MOVOU argSlash<>(SB), X8
	MOVOU argLess<>(SB), X9
	MOVOU argGreater<>(SB), X10
	MOVOU argBit0<>(SB), X11
	MOVOU argParen<>(SB), X12
	MOVOU argBit5<>(SB), X13
	MOVOU argBrace<>(SB), X14
	MOVOU argClose<>(SB), X5
	BLOCK16(0)
	BLOCK16(16)
	BLOCK16(32)
	BLOCK16(48)
	RET
avx2:
	VMOVDQU 0(SI), Y1
	VMOVDQU 32(SI), Y0
	CLASS32(argQuote<>(SB), 0)
	CLASS32(argBslash<>(SB), 8)
	CLASS32(argSlash<>(SB), 24)
	CLASS32(argLess<>(SB), 32)
	CLASS32(argGreater<>(SB), 40)
	BRK32(Y0)
	MOVQ AX, BX
	SHLQ $32, BX
	BRK32(Y1)
	ORQ BX, AX
	MOVQ AX, 16(DI)
	VZEROUPPER
	RET
